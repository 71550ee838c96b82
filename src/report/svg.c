/* svg.c: the timeline picture (svg.h). The window's events are gathered per lane, sorted, given
 * a row (device events: one row; host events: their nesting depth, at most MAX_ROWS rows), and
 * drawn: boxes of a pixel or more as they are, narrower runs of one kind merged into one box
 * whose tooltip counts them. */
#include "svg.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "report/keymap.h"

#define MAX_ROWS 6
#define LABEL_WIDTH 190
#define DEVICE_ROW 20
#define HOST_ROW 16
#define BUSY_STRIP 6
#define LANE_GAP 8
#define TOP 64

typedef struct box {
    int64_t start, end; /* ns from the trace's first event */
    uint32_t lane, name;
    uint8_t kind, row;
} box;

typedef struct lane {
    int is_device;
    int64_t a, b; /* device and stream, or pid and tid */
    int rows;
    size_t first, count; /* its boxes, after sorting */
} lane;

typedef struct gather {
    const dt_report *r;
    int64_t from, to; /* absolute ns */
    dt_intern names;
    box *boxes;
    size_t nboxes, cap;
    lane *lanes;
    size_t nlanes, lanes_cap;
    dt_keymap lane_map[2]; /* host, device */
    char *short_buf;
    size_t short_cap;
    int failed;
} gather;

static const struct {
    const char *label, *color;
} kinds[DT_TR_KIND_COUNT] = {
    [DT_TR_KERNEL] = {"kernel", "#4e79a7"},
    [DT_TR_MEMCPY] = {"memcpy", "#f28e2b"},
    [DT_TR_MEMSET] = {"memset", "#e15759"},
    [DT_TR_RUNTIME] = {"runtime call", "#76b7b2"},
    [DT_TR_CPU_OP] = {"cpu_op", "#59a14f"},
    [DT_TR_PYTHON] = {"python_function", "#edc948"},
    [DT_TR_ANNOTATION] = {"user_annotation", "#b07aa1"},
    [DT_TR_GPU_ANNOTATION] = {"gpu_user_annotation", "#d4a6c8"},
    [DT_TR_SYNC] = {"sync", "#9c755f"},
    [DT_TR_OTHER] = {"other", "#bab0ac"},
};

static int64_t lane_index(gather *g, int is_device, int64_t a, int64_t b)
{
    int64_t i = dt_keymap_get(&g->lane_map[is_device], a, b);
    if (i >= 0)
        return i;
    lane *p = dt_room_for_one(g->lanes, g->nlanes, &g->lanes_cap, sizeof *p, 16);
    if (!p)
        return -1;
    g->lanes = p;
    if (dt_keymap_put(&g->lane_map[is_device], a, b, (uint32_t)g->nlanes) < 0)
        return -1;
    lane *l = &g->lanes[g->nlanes];
    memset(l, 0, sizeof *l);
    l->is_device = is_device;
    l->a = a;
    l->b = b;
    return (int64_t)g->nlanes++;
}

static int is_device_work(int kind)
{
    return kind == DT_TR_KERNEL || kind == DT_TR_MEMCPY || kind == DT_TR_MEMSET;
}

static int on_event(const dt_tr_event *ev, void *user)
{
    gather *g = user;
    if (ev->ph != 'X' || !(ev->has & DT_TR_HAS_TS) || ev->kind == DT_TR_OTHER)
        return 0;
    int64_t dur = ev->has & DT_TR_HAS_DUR && ev->dur_ns > 0 ? ev->dur_ns : 0;
    if (ev->ts_ns + dur < g->from || ev->ts_ns > g->to)
        return 0;
    /* device work, and the annotations and waits Kineto puts on a stream: on the stream's lane */
    int is_device = ev->kind == DT_TR_KERNEL || ev->kind == DT_TR_MEMCPY || ev->kind == DT_TR_MEMSET ||
                    ev->kind == DT_TR_GPU_ANNOTATION || ev->kind == DT_TR_SYNC;
    int64_t a, b;
    if (is_device) {
        a = ev->has & DT_TR_HAS_DEVICE ? ev->device : ev->has & DT_TR_HAS_PID_NUM ? ev->pid_num : -1;
        b = ev->has & DT_TR_HAS_STREAM ? ev->stream : ev->has & DT_TR_HAS_TID_NUM ? ev->tid_num : -1;
    } else {
        a = ev->has & DT_TR_HAS_PID_NUM ? ev->pid_num : -1;
        b = ev->has & DT_TR_HAS_TID_NUM ? ev->tid_num : -1;
    }
    int64_t li = lane_index(g, is_device, a, b);
    const char *s = ev->name.s;
    size_t len = ev->name.len;
    if (g->r->names_mode == DT_NAMES_SHORT && len) {
        if (g->short_cap < len + 8) {
            char *p = realloc(g->short_buf, len + 8);
            if (!p)
                goto oom;
            g->short_buf = p;
            g->short_cap = len + 8;
        }
        len = dt_short_name(s, len, g->short_buf, g->short_cap);
        s = g->short_buf;
    }
    uint32_t name = len ? dt_intern_n(&g->names, s, len) : 0;
    if (li < 0 || (len && !name))
        goto oom;
    box *boxes = dt_room_for_one(g->boxes, g->nboxes, &g->cap, sizeof *boxes, 1024);
    if (!boxes)
        goto oom;
    g->boxes = boxes;
    int64_t t0 = g->r->first_ts_ns;
    uint8_t row = is_device && !is_device_work(ev->kind); /* a stream's annotations: the row under its work */
    g->boxes[g->nboxes++] = (box){ev->ts_ns - t0, ev->ts_ns + dur - t0, (uint32_t)li, name, (uint8_t)ev->kind, row};
    return 0;
oom:
    g->failed = 1;
    return 1;
}

/* Lanes: devices first (by device, stream), then host threads (by pid, tid); boxes by lane,
 * then start, longer first (a parent before its children). */
static int cmp_box(const void *x, const void *y)
{
    const box *p = x, *q = y;
    if (p->lane != q->lane)
        return p->lane < q->lane ? -1 : 1;
    if (p->start != q->start)
        return p->start < q->start ? -1 : 1;
    return (p->end < q->end) - (p->end > q->end);
}

static int cmp_lane(const void *x, const void *y)
{
    const lane *p = x, *q = y;
    if (p->is_device != q->is_device)
        return p->is_device ? -1 : 1;
    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    return (p->b > q->b) - (p->b < q->b);
}

/* Rows of a host lane: an event's depth among those it lies within. */
static int assign_rows(box *b, size_t n)
{
    int64_t open_end[MAX_ROWS * 4];
    int depth = 0, rows = 1;
    for (size_t i = 0; i < n; i++) {
        while (depth > 0 && open_end[depth - 1] <= b[i].start)
            depth--;
        int row = depth < MAX_ROWS ? depth : MAX_ROWS - 1;
        b[i].row = (uint8_t)row;
        if (row + 1 > rows)
            rows = row + 1;
        if (depth < (int)(sizeof open_end / sizeof open_end[0]))
            open_end[depth++] = b[i].end;
    }
    return rows;
}

/* Rows of a device lane: its work on the first, its annotations and waits (if any) below. */
static int device_rows(const box *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (b[i].row)
            return 2;
    return 1;
}

static void write_escaped(FILE *f, const char *s, size_t max)
{
    size_t n = 0;
    for (; *s && n < max; s++, n++) {
        switch (*s) {
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '&':
            fputs("&amp;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            if ((unsigned char)*s >= 0x20)
                fputc(*s, f);
        }
    }
    if (*s)
        fputs("...", f);
}

/* "1.5 ms", "250 us", "2 s" for an axis label. */
static void format_time(char *buf, size_t n, int64_t ns)
{
    if (ns != 0 && ns % 1000000000 == 0)
        snprintf(buf, n, "%lld s", (long long)(ns / 1000000000));
    else if (ns >= 1000000)
        snprintf(buf, n, "%g ms", (double)ns / 1e6);
    else
        snprintf(buf, n, "%g us", (double)ns / 1e3);
}

typedef struct canvas {
    FILE *f;
    int64_t from, to; /* relative ns */
    double plot_width;
} canvas;

static double x_of(const canvas *c, int64_t t)
{
    if (t < c->from)
        t = c->from;
    if (t > c->to)
        t = c->to;
    return LABEL_WIDTH + (double)(t - c->from) / (double)(c->to - c->from) * c->plot_width;
}

static void draw_box(const canvas *c, const gather *g, const box *b, size_t merged, double y, double h)
{
    double x0 = x_of(c, b->start), x1 = x_of(c, b->end);
    double w = x1 - x0 < 0.6 ? 0.6 : x1 - x0;
    fprintf(c->f, "<rect class=\"%s\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"%s>",
            dt_tr_kind_name((dt_tr_kind)b->kind), x0, y, w, h, kinds[b->kind].color,
            w >= 3 ? " stroke=\"#ffffff\" stroke-width=\"0.6\"" : ""); /* neighbours stay apart */
    char dur[32], at[32];
    dt_format_us(dur, b->end - b->start);
    dt_format_us(at, b->start);
    fputs("<title>", c->f);
    if (merged > 1)
        fprintf(c->f, "%zu %s events, %s us from %s us", merged, kinds[b->kind].label, dur, at);
    else {
        write_escaped(c->f, dt_intern_get(&g->names, b->name), 300);
        fprintf(c->f, " (%s, %s us at %s us)", kinds[b->kind].label, dur, at);
    }
    fputs("</title></rect>\n", c->f);
    size_t fits = (size_t)((w - 4) / 6.2);
    if (merged <= 1 && fits >= 4) {
        fprintf(c->f, "<text x=\"%.2f\" y=\"%.1f\" class=\"in\">", x0 + 2, y + h - 4);
        const char *full = dt_intern_get(&g->names, b->name);
        char name[256]; /* the label without template arguments; the tooltip has the whole name */
        dt_short_name(full, strlen(full), name, sizeof name);
        write_escaped(c->f, name, strlen(name) > fits ? fits - 3 : fits);
        fputs("</text>\n", c->f);
    }
}

/* A lane's boxes, row by row: boxes under a pixel wide are merged with the next ones of the
 * same kind that start within a pixel of the run's end. */
static void draw_lane_boxes(const canvas *c, const gather *g, const lane *l, double y0, int row_height)
{
    double pixel_ns = (double)(c->to - c->from) / c->plot_width;
    for (int row = 0; row < l->rows; row++) {
        box run;
        size_t merged = 0;
        for (size_t i = l->first; i < l->first + l->count; i++) {
            const box *b = &g->boxes[i];
            if (b->row != row)
                continue;
            double y = y0 + row * row_height + 1;
            if (merged && run.kind == b->kind && (double)(b->start - run.end) < pixel_ns &&
                (double)(run.end - run.start) < pixel_ns) {
                if (b->end > run.end)
                    run.end = b->end;
                merged++;
                continue;
            }
            if (merged)
                draw_box(c, g, &run, merged, y, row_height - 2);
            run = *b;
            merged = 1;
        }
        if (merged)
            draw_box(c, g, &run, merged, y0 + row * row_height + 1, row_height - 2);
    }
}

/* How busy a device lane is per 2-pixel column: one rect per run of equal shade. */
static void draw_busy_strip(const canvas *c, const gather *g, const lane *l, double y)
{
    int columns = (int)(c->plot_width / 2);
    double *busy = calloc((size_t)columns, sizeof *busy);
    if (!busy)
        return;
    double col_ns = (double)(c->to - c->from) / columns;
    for (size_t i = l->first; i < l->first + l->count; i++) {
        const box *b = &g->boxes[i];
        int64_t s = b->start < c->from ? c->from : b->start, e = b->end > c->to ? c->to : b->end;
        if (e <= s || !is_device_work(b->kind))
            continue;
        double fs = (double)(s - c->from) / col_ns, fe = (double)(e - c->from) / col_ns;
        for (int k = (int)fs; k <= (int)fe && k < columns; k++) {
            double lo = fs > k ? fs : k, hi = fe < k + 1 ? fe : k + 1;
            if (hi > lo)
                busy[k] += hi - lo;
        }
    }
    fprintf(c->f, "<rect x=\"%d\" y=\"%.1f\" width=\"%.1f\" height=\"%d\" fill=\"#eeeeee\"/>\n", LABEL_WIDTH, y,
            c->plot_width, BUSY_STRIP);
    int k = 0;
    while (k < columns) {
        int shade = (int)(busy[k] * 10 + 0.5);
        int j = k + 1;
        while (j < columns && (int)(busy[j] * 10 + 0.5) == shade)
            j++;
        if (shade > 10)
            shade = 10;
        if (shade > 0)
            fprintf(c->f,
                    "<rect class=\"busy\" x=\"%.1f\" y=\"%.1f\" width=\"%d\" height=\"%d\" fill=\"#1b3a5c\" "
                    "fill-opacity=\"%.1f\"/>\n",
                    LABEL_WIDTH + k * 2.0, y, (j - k) * 2, BUSY_STRIP, shade / 10.0);
        k = j;
    }
    free(busy);
}

static void draw_axis(const canvas *c, double y, double bottom)
{
    int64_t span = c->to - c->from, step = 1;
    while (span / step > 12) {
        int64_t next[3] = {step * 2, step * 5, step * 10};
        for (int i = 0; i < 3; i++)
            if (span / next[i] <= 12 || i == 2) {
                step = next[i];
                break;
            }
        if (span / step <= 12)
            break;
    }
    fprintf(c->f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>\n", LABEL_WIDTH, y,
            LABEL_WIDTH + c->plot_width, y);
    for (int64_t t = (c->from + step - 1) / step * step; t <= c->to; t += step) {
        double x = x_of(c, t);
        char label[32];
        format_time(label, sizeof label, t);
        fprintf(c->f, "<line class=\"tick\" x1=\"%.2f\" y1=\"%.1f\" x2=\"%.2f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", x, y,
                x, bottom);
        fprintf(c->f, "<text x=\"%.2f\" y=\"%.1f\" text-anchor=\"middle\" class=\"axis\">%s</text>\n", x, y - 5, label);
    }
}

static int write_picture(FILE *f, gather *g, const dt_svg_options *o)
{
    int width = o->width > 0 ? o->width : 1600;
    canvas c = {f, g->from - g->r->first_ts_ns, g->to - g->r->first_ts_ns, width - LABEL_WIDTH - 20};
    if (c.to <= c.from)
        c.to = c.from + 1000;
    double height = TOP;
    for (size_t i = 0; i < g->nlanes; i++)
        height += g->lanes[i].is_device ? g->lanes[i].rows * DEVICE_ROW + BUSY_STRIP + LANE_GAP
                                        : g->lanes[i].rows * HOST_ROW + LANE_GAP;
    double lanes_bottom = height;
    height += 40;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%.0f\" viewBox=\"0 0 %d %.0f\" "
            "font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
            width, height, width, height);
    fputs("<style>text{font-size:11px;fill:#222}.in{font-size:10px;fill:#fff}.axis{font-size:10px;fill:#555}"
          ".lane{font-size:11px}.title{font-size:13px;font-weight:bold}</style>\n",
          f);
    fprintf(f, "<rect width=\"%d\" height=\"%.0f\" fill=\"#ffffff\"/>\n", width, height);
    char from[32], to[32];
    dt_format_us(from, c.from);
    dt_format_us(to, c.to);
    fprintf(f, "<text class=\"title\" x=\"10\" y=\"18\">");
    write_escaped(f, g->r->path, 200);
    fprintf(f,
            "</text>\n<text x=\"10\" y=\"34\">%s us to %s us from the trace's first event; %zu events in %zu "
            "lanes</text>\n",
            from, to, g->nboxes, g->nlanes);
    draw_axis(&c, TOP - 6, lanes_bottom);
    double y = TOP;
    for (size_t i = 0; i < g->nlanes; i++) {
        const lane *l = &g->lanes[i];
        int row_height = l->is_device ? DEVICE_ROW : HOST_ROW;
        double lane_height = l->rows * row_height + (l->is_device ? BUSY_STRIP : 0);
        if (i % 2 == 0) /* every other lane on a faint band, across the labels too */
            fprintf(f, "<rect x=\"0\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"#f6f7f9\"/>\n", y - LANE_GAP / 2.0,
                    width, lane_height + LANE_GAP);
        fprintf(f, "<text class=\"lane\" x=\"10\" y=\"%.1f\">", y + 13);
        if (l->is_device)
            fprintf(f, "device %lld stream %lld</text>\n", (long long)l->a, (long long)l->b);
        else
            fprintf(f, "pid %lld thread %lld</text>\n", (long long)l->a, (long long)l->b);
        fprintf(f, "<g class=\"%s-lane\">\n", l->is_device ? "device" : "host");
        draw_lane_boxes(&c, g, l, y, row_height);
        fputs("</g>\n", f);
        y += l->rows * row_height;
        if (l->is_device) {
            draw_busy_strip(&c, g, l, y + 1);
            y += BUSY_STRIP;
        }
        y += LANE_GAP;
    }
    /* the legend */
    double x = LABEL_WIDTH;
    y = lanes_bottom + 16;
    for (int k = 0; k < DT_TR_OTHER; k++) {
        fprintf(f, "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"%s\"/>", x, y - 10, kinds[k].color);
        fprintf(f, "<text x=\"%.0f\" y=\"%.0f\">%s</text>\n", x + 16, y, kinds[k].label);
        x += 30 + 7.0 * (double)strlen(kinds[k].label);
    }
    fprintf(f,
            "<rect x=\"%.0f\" y=\"%.0f\" width=\"12\" height=\"12\" fill=\"#1b3a5c\"/><text x=\"%.0f\" y=\"%.0f\">"
            "stream busy (darker: busier)</text>\n",
            x, y - 10, x + 16, y);
    fputs("</svg>\n", f);
    return ferror(f) ? -1 : 0;
}

int dt_svg_write(const dt_report *r, const char *out_path, const dt_svg_options *o, char *err, size_t errlen)
{
    gather g;
    memset(&g, 0, sizeof g);
    g.r = r;
    g.from = r->first_ts_ns + o->from_ns;
    g.to = o->to_ns >= 0 ? r->first_ts_ns + o->to_ns : r->last_end_ns;
    if (g.to <= g.from)
        g.to = g.from + 1000;
    int rc = -1;
    FILE *f = NULL;
    if (dt_intern_init(&g.names) != 0) {
        snprintf(err, errlen, "%s: out of memory", out_path);
        return -1;
    }
    if (dt_tr_read_file(r->path, on_event, &g, NULL, err, errlen) != 0) {
        if (g.failed)
            snprintf(err, errlen, "%s: out of memory gathering the window's events", r->path);
        goto end;
    }
    qsort(g.lanes, g.nlanes, sizeof *g.lanes, cmp_lane);
    uint32_t *order = malloc((g.nlanes ? g.nlanes : 1) * sizeof *order); /* old lane index -> new */
    if (!order) {
        snprintf(err, errlen, "%s: out of memory", out_path);
        goto end;
    }
    for (size_t i = 0; i < g.nlanes; i++)
        order[dt_keymap_get(&g.lane_map[g.lanes[i].is_device], g.lanes[i].a, g.lanes[i].b)] = (uint32_t)i;
    for (size_t i = 0; i < g.nboxes; i++)
        g.boxes[i].lane = order[g.boxes[i].lane];
    free(order);
    qsort(g.boxes, g.nboxes, sizeof *g.boxes, cmp_box);
    for (size_t i = 0, first = 0; i <= g.nboxes; i++) {
        if (i < g.nboxes && g.boxes[i].lane == g.boxes[first].lane)
            continue;
        if (first < g.nboxes) {
            lane *l = &g.lanes[g.boxes[first].lane];
            l->first = first;
            l->count = i - first;
            l->rows = l->is_device ? device_rows(&g.boxes[first], i - first) : assign_rows(&g.boxes[first], i - first);
        }
        first = i;
    }
    f = fopen(out_path, "w");
    if (!f) {
        snprintf(err, errlen, "%s: cannot write: %s", out_path, strerror(errno));
        goto end;
    }
    if (write_picture(f, &g, o) != 0 || fclose(f) != 0) {
        f = NULL;
        snprintf(err, errlen, "%s: write failed: %s", out_path, strerror(errno));
        goto end;
    }
    f = NULL;
    rc = 0;
end:
    if (f)
        fclose(f);
    dt_intern_destroy(&g.names);
    free(g.boxes);
    free(g.lanes);
    dt_keymap_free(&g.lane_map[0]);
    dt_keymap_free(&g.lane_map[1]);
    free(g.short_buf);
    return rc;
}
