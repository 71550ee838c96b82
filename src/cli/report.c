/* report.c: `devtrace report` (the tables of one trace, of every rank of a run, and a timeline
 * picture) and `devtrace diff` (two traces side by side), for any Kineto-format trace
 * (src/report/). Every trace is read whole before anything is printed: a trace that is
 * truncated or malformed prints its one-line error and no table. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "core/core.h"
#include "report/report.h"

static const char report_usage[] =
    "usage: devtrace report [OPTIONS] TRACE... | DIR\n"
    "\n"
    "Prints the tables of a Kineto-format trace (.json or .json.gz; devtrace's or one that\n"
    "torch.profiler exported): kernels, memory (copies and sets), api (runtime calls), ops\n"
    "(cpu_op names with the device time of the kernels, copies and sets launched inside them:\n"
    "self and total), streams (busy time, span and the longest idle gaps per device stream)\n"
    "and annotations, each sorted by time, and the devtrace section's losses and notes. Several traces, or a folder of "
    "them\n"
    "(*.json, *.json.gz), report each rank and then, per kernel and per op, the min, median\n"
    "and max total over the ranks and the slowest rank, and per rank its compute and\n"
    "collective time per step and the straggler (the slowest rank by compute; see\n"
    "docs/report.md). Times are microseconds, 3 decimals.\n"
    "\n"
    "options:\n"
    "  --top N               at most N rows per table (default 20 for table, all for csv/json)\n"
    "  --format FMT          table (default), csv (a header row, then one row per line) or json\n"
    "  --output DIR          write into DIR: kernels.csv memory.csv api.csv ops.csv streams.csv\n"
    "                        annotations.csv (csv), report.json (json) or report.txt (table); several traces:\n"
    "                        one folder per rank (rank0/ ...), the *_across_ranks tables and\n"
    "                        stragglers.csv\n"
    "  --names full|short    kernel names as recorded (default) or without template arguments\n"
    "  --svg OUT.svg         also draw the timeline of the (first) trace: one lane per device\n"
    "                        stream and host thread, a time axis, a legend, busy strips\n"
    "  --from US, --to US    the picture's window, microseconds from the trace's first event\n"
    "  --strict              an event left out of the tables (a complete event without a usable\n"
    "                        ts or dur, an event without ph) is an error (exit 1, no table);\n"
    "                        without it such events are counted and said on stderr\n"
    "  -h, --help            this text\n";

static const char diff_usage[] =
    "usage: devtrace diff [OPTIONS] A B\n"
    "\n"
    "Compares two Kineto-format traces table by table: ops (device_total, device_self and cpu\n"
    "time), kernels, memory (copies and sets, with bytes), api (runtime calls) and annotations:\n"
    "per name the count and time in A and in B, the delta (B - A) and the ratio (B / A),\n"
    "names only in B marked added and only in A removed, largest change first; first of all\n"
    "the top changes over every table. Op names (aten::mm) are the same on every vendor's\n"
    "chip, so two runs of one model on two vendors compare op by op.\n"
    "\n"
    "options:\n"
    "  --by TABLE            only op, kernel, memory, api or annotation (no top changes)\n"
    "  --per-step            per-ProfilerStep averages of what lies inside the steps, instead of\n"
    "                        whole-trace sums (both traces need ProfilerStep#N events)\n"
    "  --top N               at most N rows per table (default 20 for table, all for csv/json)\n"
    "  --format FMT          table (default), csv or json\n"
    "  --names full|short    kernel names as recorded (default) or without template arguments\n"
    "  --strict              an event left out of the tables is an error (as for report)\n"
    "  -h, --help            this text\n";

typedef struct report_options {
    dt_format format;
    long top; /* -1: the format's default */
    dt_names_mode names;
    const char *output, *svg;
    int has_from, has_to;
    double from_us, to_us;
    int by;       /* -1 both, else dt_compare_by */
    int strict;   /* --strict: a skipped event is an error */
    int per_step; /* diff --per-step */
    const char **inputs;
    int ninputs;
} report_options;

static int usage_error(const char *command, const char *fmt, const char *what)
{
    fprintf(stderr, "devtrace %s: ", command);
    fprintf(stderr, fmt, what);
    fprintf(stderr, "; run 'devtrace %s --help'\n", command);
    return DT_EXIT_USAGE;
}

static int parse_number(const char *text, double *out)
{
    char *end = NULL;
    errno = 0;
    double v = strtod(text, &end);
    if (!*text || *end || errno || !(v == v))
        return -1;
    *out = v;
    return 0;
}

/* Whether a is an option of command that takes a value (the next argument). */
static int takes_value(const char *a, int is_report)
{
    if (!strcmp(a, "--top") || !strcmp(a, "--format") || !strcmp(a, "--names"))
        return 1;
    if (is_report)
        return !strcmp(a, "--output") || !strcmp(a, "-o") || !strcmp(a, "--svg") || !strcmp(a, "--from") ||
               !strcmp(a, "--to");
    return !strcmp(a, "--by");
}

/* The options whose value is one of a few words: the word's index is the value (the order of
 * dt_format, dt_names_mode, dt_compare_by). */
typedef struct word_option {
    const char *option;
    const char *words[6]; /* NULL after the last */
    const char *listed;   /* the words, for the error */
} word_option;

static const word_option word_options[] = {
    {"--format", {"table", "csv", "json", NULL}, "table, csv or json"},
    {"--names", {"full", "short", NULL}, "full or short"},
    {"--by", {"op", "kernel", "memory", "api", "annotation", NULL}, "op, kernel, memory, api or annotation"},
};

static const word_option *word_option_named(const char *option)
{
    for (size_t i = 0; i < sizeof word_options / sizeof word_options[0]; i++)
        if (!strcmp(option, word_options[i].option))
            return &word_options[i];
    return NULL;
}

/* Which of w's words v is (its index), or -1. */
static int word_index(const word_option *w, const char *v)
{
    for (int k = 0; k < 6 && w->words[k]; k++)
        if (!strcmp(v, w->words[k]))
            return k;
    return -1;
}

/* The option a (one that takes_value) with its value v; returns 0, or the exit status of a
 * usage error. */
static int set_value_option(const char *command, const char *a, const char *v, report_options *o)
{
    const word_option *w;
    if (!strcmp(a, "--top")) {
        char *end = NULL;
        long n = strtol(v, &end, 10);
        if (!*v || *end || n < 1)
            return usage_error(command, "--top takes a positive count, not '%s'", v);
        o->top = n;
    } else if ((w = word_option_named(a)) != NULL) {
        int k = word_index(w, v);
        if (k < 0) {
            fprintf(stderr, "devtrace %s: %s is %s, not '%s'; run 'devtrace %s --help'\n", command, a, w->listed, v,
                    command);
            return DT_EXIT_USAGE;
        }
        if (!strcmp(a, "--format"))
            o->format = (dt_format)k;
        else if (!strcmp(a, "--names"))
            o->names = (dt_names_mode)k;
        else
            o->by = k;
    } else if (!strcmp(a, "--output") || !strcmp(a, "-o")) {
        o->output = v;
    } else if (!strcmp(a, "--svg")) {
        o->svg = v;
    } else { /* --from, --to */
        double us;
        if (parse_number(v, &us) != 0 || us < 0)
            return usage_error(command, "--from and --to take microseconds (>= 0), not '%s'", v);
        if (a[2] == 'f') {
            o->has_from = 1;
            o->from_us = us;
        } else {
            o->has_to = 1;
            o->to_us = us;
        }
    }
    return 0;
}

/* The options both commands take; returns 0, or the exit status of a usage error. */
static int parse_options(const char *command, int argc, char **argv, report_options *o, int *help)
{
    memset(o, 0, sizeof *o);
    o->top = -1;
    o->by = -1;
    o->inputs = calloc((size_t)argc, sizeof *o->inputs);
    if (!o->inputs)
        return DT_EXIT_FAILURE;
    int is_report = !strcmp(command, "report");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            *help = 1;
            return 0;
        }
        if (!strcmp(a, "--strict")) {
            o->strict = 1;
            continue;
        }
        if (!is_report && !strcmp(a, "--per-step")) {
            o->per_step = 1;
            continue;
        }
        if (!takes_value(a, is_report)) {
            if (a[0] == '-' && a[1])
                return usage_error(command, "unknown option '%s'", a);
            o->inputs[o->ninputs++] = a;
            continue;
        }
        if (i + 1 >= argc)
            return usage_error(command, "%s needs a value", a);
        int rc = set_value_option(command, a, argv[++i], o);
        if (rc != 0)
            return rc;
    }
    if (o->has_from && o->has_to && o->to_us <= o->from_us)
        return usage_error(command, "%s", "--to must be after --from");
    if ((o->has_from || o->has_to) && !o->svg)
        return usage_error(command, "%s", "--from and --to choose the window of --svg");
    if (o->top < 0)
        o->top = o->format == DT_FORMAT_TABLE ? 20 : 0;
    return 0;
}

/* ---- the traces to read ---- */

/* Reads one trace; events left out of its tables are said on stderr, and under --strict are an
 * error. 0, or -1 said on stderr (r is then still to be freed). */
static int read_trace(const char *command, dt_report *r, const char *path, const report_options *o)
{
    char err[1024];
    if (dt_report_read(r, path, o->names, err, sizeof err) != 0) {
        fprintf(stderr, "devtrace %s: %s\n", command, err);
        return -1;
    }
    if (r->nskipped) {
        char line[1024];
        dt_report_skipped_text(r, line, sizeof line);
        fprintf(stderr, "devtrace %s: %s: %s; %s\n", command, path, line,
                o->strict ? "no table under --strict (fix the events, or run without --strict)"
                          : "left out of every table (--strict makes this an error)");
        if (o->strict)
            return -1;
    }
    return 0;
}

typedef struct path_list {
    char **paths; /* owned */
    size_t n, cap;
} path_list;

/* 0, or -1 said on stderr (out of memory). */
static int add_path(path_list *l, const char *path)
{
    char **p = dt_room_for_one(l->paths, l->n, &l->cap, sizeof *p, 16);
    if (p)
        l->paths = p;
    if (!p || !(l->paths[l->n] = strdup(path))) {
        fprintf(stderr, "devtrace report: out of memory listing the traces to read (at %s)\n", path);
        return -1;
    }
    l->n++;
    return 0;
}

static int is_trace_name(const char *name)
{
    size_t n = strlen(name);
    return (n > 5 && !strcmp(name + n - 5, ".json")) || (n > 8 && !strcmp(name + n - 8, ".json.gz"));
}

static int by_path(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The traces named: files as given, folders' *.json and *.json.gz sorted by name. */
static int expand_inputs(const report_options *o, path_list *l)
{
    for (int i = 0; i < o->ninputs; i++) {
        struct stat st;
        if (stat(o->inputs[i], &st) != 0) {
            fprintf(stderr, "devtrace report: %s: %s\n", o->inputs[i], strerror(errno));
            return -1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if (add_path(l, o->inputs[i]) != 0)
                return -1;
            continue;
        }
        DIR *d = opendir(o->inputs[i]);
        if (!d) {
            fprintf(stderr, "devtrace report: %s: cannot read the folder: %s\n", o->inputs[i], strerror(errno));
            return -1;
        }
        size_t first = l->n;
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!is_trace_name(e->d_name))
                continue;
            char path[4096];
            if (snprintf(path, sizeof path, "%s/%s", o->inputs[i], e->d_name) >= (int)sizeof path) {
                fprintf(stderr, "devtrace report: %s/%s: the path is too long\n", o->inputs[i], e->d_name);
                closedir(d);
                return -1;
            }
            if (add_path(l, path) != 0) {
                closedir(d);
                return -1;
            }
        }
        closedir(d);
        if (l->n == first) {
            fprintf(stderr, "devtrace report: %s: no trace in this folder (*.json, *.json.gz)\n", o->inputs[i]);
            return -1;
        }
        qsort(l->paths + first, l->n - first, sizeof *l->paths, by_path);
    }
    return 0;
}

static void path_list_free(path_list *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->paths[i]);
    free(l->paths);
}

/* ---- writing ---- */

static FILE *open_output(const char *dir, const char *name, char *path, size_t pathlen)
{
    if (snprintf(path, pathlen, "%s/%s", dir, name) >= (int)pathlen) {
        fprintf(stderr, "devtrace report: %s/%s: the path is too long\n", dir, name);
        return NULL;
    }
    FILE *f = fopen(path, "w");
    if (!f)
        fprintf(stderr, "devtrace report: %s: cannot write: %s\n", path, strerror(errno));
    return f;
}

static int close_output(FILE *f, const char *path)
{
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        fprintf(stderr, "devtrace report: %s: write failed: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* One report into a folder: csv tables, report.json or report.txt. */
static int write_report_dir(const dt_report *r, const report_options *o, const char *dir)
{
    char err[512];
    if (o->format != DT_FORMAT_TABLE) {
        if (dt_report_write_dir(r, o->format, dir, (size_t)o->top, err, sizeof err) != 0) {
            fprintf(stderr, "devtrace report: %s\n", err);
            return -1;
        }
        return 0;
    }
    if (dt_report_make_dir(dir, err, sizeof err) != 0) {
        fprintf(stderr, "devtrace report: %s\n", err);
        return -1;
    }
    char path[4096];
    FILE *f = open_output(dir, "report.txt", path, sizeof path);
    if (!f)
        return -1;
    dt_report_write(r, o->format, f, (size_t)o->top);
    return close_output(f, path);
}

/* The across-ranks tables: per kernel, per op, and the stragglers. */
#define NRANK_TABLES 3
static int make_rank_tables(const dt_report *const *reports, size_t n, dt_table *t)
{
    int bad = dt_ranks_table(reports, n, DT_BY_KERNEL, &t[0]);
    bad |= dt_ranks_table(reports, n, DT_BY_OP, &t[1]);
    bad |= dt_stragglers_table(reports, n, &t[2]);
    if (bad)
        fprintf(stderr, "devtrace report: out of memory for the across-ranks tables\n");
    return bad ? -1 : 0;
}

/* The across-ranks tables to out (one json object, or csv / text tables one after another). */
static int write_ranks(const dt_report *const *reports, size_t n, const report_options *o, FILE *out)
{
    dt_table t[NRANK_TABLES];
    int rc = make_rank_tables(reports, n, t);
    if (rc != 0)
        goto end;
    if (o->format == DT_FORMAT_JSON) {
        fputs("{\"ranks\": [", out);
        for (size_t i = 0; i < n; i++) {
            fprintf(out, "%s{\"rank\": %lld, \"trace\": ", i ? ", " : "",
                    (long long)dt_report_rank_label(reports[i], i));
            dt_json_write_string(out, reports[i]->path);
            fputc('}', out);
        }
        fputs("]", out);
        for (int i = 0; i < NRANK_TABLES; i++) {
            fputs(",\n", out);
            dt_table_write_json(&t[i], out, (size_t)o->top);
        }
        fputs("}\n", out);
    } else {
        for (int i = 0; i < NRANK_TABLES; i++) {
            if (o->format == DT_FORMAT_CSV)
                fprintf(out, "%s# %s\n", i ? "\n" : "", t[i].title);
            else
                fputc('\n', out);
            dt_table_write(&t[i], o->format, out, (size_t)o->top);
        }
    }
end:
    for (int i = 0; i < NRANK_TABLES; i++)
        dt_table_free(&t[i]);
    return rc;
}

static int write_ranks_dir(const dt_report *const *reports, size_t n, const report_options *o)
{
    char path[4096];
    if (o->format == DT_FORMAT_CSV) {
        dt_table t[NRANK_TABLES];
        int rc = make_rank_tables(reports, n, t);
        for (int i = 0; rc == 0 && i < NRANK_TABLES; i++) {
            char name[64];
            snprintf(name, sizeof name, "%s.csv", t[i].title);
            FILE *f = open_output(o->output, name, path, sizeof path);
            if (!f) {
                rc = -1;
                break;
            }
            dt_table_write_csv(&t[i], f, (size_t)o->top);
            rc = close_output(f, path);
        }
        for (int i = 0; i < NRANK_TABLES; i++)
            dt_table_free(&t[i]);
        return rc;
    }
    FILE *f = open_output(o->output, o->format == DT_FORMAT_JSON ? "ranks.json" : "ranks.txt", path, sizeof path);
    if (!f)
        return -1;
    int rc = write_ranks(reports, n, o, f);
    return close_output(f, path) != 0 || rc != 0 ? -1 : 0;
}

static int draw_svg(const dt_report *r, const report_options *o)
{
    dt_svg_options so;
    memset(&so, 0, sizeof so);
    so.from_ns = o->has_from ? (int64_t)(o->from_us * 1000.0 + 0.5) : 0;
    so.to_ns = o->has_to ? (int64_t)(o->to_us * 1000.0 + 0.5) : -1;
    so.names = r->names_mode;
    char err[512];
    if (dt_svg_write(r, o->svg, &so, err, sizeof err) != 0) {
        fprintf(stderr, "devtrace report: %s\n", err);
        return -1;
    }
    return 0;
}

/* Two traces with one rank label would print as that rank twice and write rankN/ twice, one
 * over the other: refused, naming both. 0, or -1 said on stderr. */
static int check_distinct_ranks(const dt_report *reports, size_t n)
{
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++) {
            int64_t a = dt_report_rank_label(&reports[i], i), b = dt_report_rank_label(&reports[j], j);
            if (a != b)
                continue;
            fprintf(stderr,
                    "devtrace report: %s and %s are both rank %lld (%s); give one trace per rank, or compare "
                    "the two with 'devtrace diff'\n",
                    reports[i].path, reports[j].path, (long long)a,
                    reports[i].rank >= 0 && reports[j].rank >= 0
                        ? "their distributedInfo.rank"
                        : "a trace without distributedInfo.rank takes its place in the list as its rank");
            return -1;
        }
    return 0;
}

int dt_cmd_report(int argc, char **argv)
{
    report_options o;
    int help = 0, status = DT_EXIT_FAILURE;
    path_list l = {0};
    dt_report *reports = NULL;
    const dt_report **views = NULL;
    size_t nread = 0;
    int rc = parse_options("report", argc, argv, &o, &help);
    if (rc || help) {
        if (help)
            fputs(report_usage, stdout);
        free(o.inputs);
        return help ? 0 : rc;
    }
    if (expand_inputs(&o, &l) != 0)
        goto end;
    if (l.n == 0) { /* no input named (a folder without traces is an error of expand_inputs) */
        status = usage_error("report", "%s", "name a trace (or a folder of traces)");
        goto end;
    }
    reports = calloc(l.n, sizeof *reports);
    views = calloc(l.n, sizeof *views);
    if (!reports || !views)
        goto end;
    for (; nread < l.n; nread++) {
        if (read_trace("report", &reports[nread], l.paths[nread], &o) != 0) {
            nread++;
            goto end;
        }
        views[nread] = &reports[nread];
    }
    if (l.n > 1 && check_distinct_ranks(reports, l.n) != 0)
        goto end;
    if (o.output) {
        char err[512];
        if (dt_report_make_dir(o.output, err, sizeof err) != 0) {
            fprintf(stderr, "devtrace report: %s\n", err);
            goto end;
        }
    }
    for (size_t i = 0; i < l.n; i++) {
        if (o.output) {
            char dir[4096];
            int n = l.n == 1 ? snprintf(dir, sizeof dir, "%s", o.output)
                             : snprintf(dir, sizeof dir, "%s/rank%lld", o.output,
                                        (long long)dt_report_rank_label(&reports[i], i));
            if (n >= (int)sizeof dir) {
                fprintf(stderr, "devtrace report: %s: the path is too long\n", o.output);
                goto end;
            }
            if (write_report_dir(&reports[i], &o, dir) != 0)
                goto end;
            continue;
        }
        if (l.n > 1 && o.format == DT_FORMAT_TABLE)
            printf("%s== rank %lld ==\n", i ? "\n" : "", (long long)dt_report_rank_label(&reports[i], i));
        else if (l.n > 1 && o.format == DT_FORMAT_CSV)
            printf("%s# rank %lld: %s\n", i ? "\n" : "", (long long)dt_report_rank_label(&reports[i], i),
                   reports[i].path);
        if (l.n > 1 && o.format == DT_FORMAT_JSON)
            continue; /* json: one object with every rank, below */
        dt_report_write(&reports[i], o.format, stdout, (size_t)o.top);
    }
    if (l.n > 1) {
        if (o.output) {
            if (write_ranks_dir(views, l.n, &o) != 0)
                goto end;
        } else if (o.format == DT_FORMAT_JSON) {
            fputs("{\"reports\": [\n", stdout);
            for (size_t i = 0; i < l.n; i++) {
                if (i)
                    fputs(",\n", stdout);
                dt_report_write(&reports[i], o.format, stdout, (size_t)o.top);
            }
            fputs("],\n\"across_ranks\": ", stdout);
            if (write_ranks(views, l.n, &o, stdout) != 0)
                goto end;
            fputs("}\n", stdout);
        } else {
            if (o.format == DT_FORMAT_TABLE)
                printf("\n== across %zu ranks ==\n", l.n);
            else
                printf("\n");
            if (write_ranks(views, l.n, &o, stdout) != 0)
                goto end;
        }
    }
    if (o.svg && draw_svg(&reports[0], &o) != 0)
        goto end;
    status = fflush(stdout) == 0 && !ferror(stdout) ? 0 : DT_EXIT_FAILURE;
end:
    for (size_t i = 0; i < nread; i++)
        dt_report_free(&reports[i]);
    free(reports);
    free(views);
    path_list_free(&l);
    free(o.inputs);
    return status;
}

/* The diff's tables: the top changes over every table (unless --by names one), then each. */
static int write_diff(const dt_report *a, const dt_report *b, const report_options *o, const dt_diff_options *dopt)
{
    unsigned only = o->by >= 0 ? 1u << o->by : (1u << DT_BY_COUNT) - 1;
    int first = 1;
    if (o->by < 0) {
        dt_table t;
        if (dt_diff_top_table(a, b, only, dopt, &t) != 0) {
            dt_table_free(&t);
            fprintf(stderr, "devtrace diff: out of memory\n");
            return -1;
        }
        if (o->format == DT_FORMAT_JSON)
            fputs(",\n", stdout);
        else if (o->format == DT_FORMAT_CSV)
            printf("# %s\n", t.title);
        else
            fputc('\n', stdout);
        dt_table_write(&t, o->format, stdout, (size_t)o->top);
        dt_table_free(&t);
        first = 0;
    }
    for (int by = 0; by < DT_BY_COUNT; by++) {
        if (!(only & (1u << by)))
            continue;
        dt_table t;
        if (dt_diff_table(a, b, (dt_compare_by)by, dopt, &t) != 0) {
            dt_table_free(&t);
            fprintf(stderr, "devtrace diff: out of memory\n");
            return -1;
        }
        if (o->format == DT_FORMAT_JSON)
            fputs(",\n", stdout);
        else if (o->format == DT_FORMAT_CSV && o->by < 0)
            printf("%s# %s\n", first ? "" : "\n", t.title);
        else if (o->format == DT_FORMAT_TABLE)
            fputc('\n', stdout);
        dt_table_write(&t, o->format, stdout, (size_t)o->top);
        dt_table_free(&t);
        first = 0;
    }
    return 0;
}

int dt_cmd_diff(int argc, char **argv)
{
    report_options o;
    int help = 0, status = DT_EXIT_FAILURE;
    dt_report r[2], steps[2];
    int nread = 0, nsteps_read = 0;
    int rc = parse_options("diff", argc, argv, &o, &help);
    if (rc || help) {
        if (help)
            fputs(diff_usage, stdout);
        free(o.inputs);
        return help ? 0 : rc;
    }
    if (o.ninputs != 2) {
        status = usage_error("diff", "%s", "name two traces, A and B");
        goto end;
    }
    for (; nread < 2; nread++) {
        if (read_trace("diff", &r[nread], o.inputs[nread], &o) != 0) {
            nread++;
            goto end;
        }
    }
    dt_diff_options dopt = {o.per_step};
    const dt_report *a = &r[0], *b = &r[1];
    if (o.per_step) {
        for (int i = 0; i < 2; i++)
            if (!r[i].nsteps) {
                fprintf(stderr,
                        "devtrace diff: %s: no ProfilerStep#N event (cpu_op or user_annotation); --per-step "
                        "needs steps in both traces (run without it to compare whole traces)\n",
                        r[i].path);
                goto end;
            }
        for (; nsteps_read < 2; nsteps_read++) {
            char err[1024];
            if (dt_report_read_steps(&steps[nsteps_read], &r[nsteps_read], err, sizeof err) != 0) {
                fprintf(stderr, "devtrace diff: %s\n", err);
                nsteps_read++;
                goto end;
            }
        }
        a = &steps[0];
        b = &steps[1];
    }
    if (o.format == DT_FORMAT_TABLE) {
        printf("A: %s\nB: %s\n", a->path, b->path);
        if (o.per_step)
            printf("per step: the averages over A's %llu and B's %llu ProfilerSteps (only what lies inside the "
                   "steps)\n",
                   (unsigned long long)a->nsteps, (unsigned long long)b->nsteps);
    } else if (o.format == DT_FORMAT_JSON) {
        fputs("{\"a\": ", stdout);
        dt_json_write_string(stdout, a->path);
        fputs(", \"b\": ", stdout);
        dt_json_write_string(stdout, b->path);
        fprintf(stdout, ", \"per_step\": %s, \"steps_a\": %llu, \"steps_b\": %llu", o.per_step ? "true" : "false",
                (unsigned long long)r[0].nsteps, (unsigned long long)r[1].nsteps);
    }
    if (write_diff(a, b, &o, &dopt) != 0)
        goto end;
    if (o.format == DT_FORMAT_JSON)
        fputs("}\n", stdout);
    status = fflush(stdout) == 0 && !ferror(stdout) ? 0 : DT_EXIT_FAILURE;
end:
    for (int i = 0; i < nread; i++)
        dt_report_free(&r[i]);
    for (int i = 0; i < nsteps_read; i++)
        dt_report_free(&steps[i]);
    free(o.inputs);
    return status;
}
