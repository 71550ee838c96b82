/* record_capture.c: devtrace record's capture window options (see record_capture.h). */
#include "record_capture.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dt_capture_parse_seconds(const char *text, uint64_t *ns)
{
    char *end = NULL;
    if (!text || !*text || strchr(text, '-') || strchr(text, 'e') || strchr(text, 'E') || strchr(text, 'x'))
        return -1;
    double s = strtod(text, &end);
    if (end == text || *end || !isfinite(s) || s < 0 || s > DT_CAPTURE_MAX_SECONDS)
        return -1;
    *ns = (uint64_t)(s * 1e9 + 0.5);
    return 0;
}

/* --delay S, --duration S: seconds into *ns, and *given set; 1, or -1 (said). */
static int take_seconds(const char *flag, const char *value, uint64_t *ns, int *given)
{
    if (dt_capture_parse_seconds(value, ns) != 0) {
        fprintf(stderr, "devtrace record: %s takes seconds (like 2 or 0.5, at most %.0f), not '%.100s'\n", flag,
                DT_CAPTURE_MAX_SECONDS, value);
        return -1;
    }
    *given = 1;
    return 1;
}

/* --skip K (min 0), --count C (min 1): a count into *n, and *given set; 1, or -1 (said). */
static int take_count(const char *flag, const char *value, uint64_t min, uint64_t *n, int *given)
{
    if (dt_parse_u64(value, n) != 0 || *n > (1ull << 40) || *n < min) {
        fprintf(stderr, "devtrace record: %s takes a count (%s), not '%.100s'\n", flag, min ? "1 or more" : "0 or more",
                value);
        return -1;
    }
    *given = 1;
    return 1;
}

int dt_capture_option(dt_capture_opts *c, const char *flag, const char *value)
{
    if (!strcmp(flag, "--on-demand")) {
        c->on_demand = 1;
        return 2;
    }
    enum { DELAY, DURATION, SKIP, COUNT, OP, NFLAGS };
    static const char *const with_value[NFLAGS] = {
        [DELAY] = "--delay", [DURATION] = "--duration", [SKIP] = "--skip", [COUNT] = "--count", [OP] = "--capture-op"};
    int which = 0;
    while (which < NFLAGS && strcmp(flag, with_value[which]) != 0)
        which++;
    if (which == NFLAGS)
        return 0;
    if (!value) {
        fprintf(stderr, "devtrace record: %s needs a value; run 'devtrace record --help'\n", flag);
        return -1;
    }
    switch (which) {
    case DELAY:
        return take_seconds(flag, value, &c->delay_ns, &c->has_delay);
    case DURATION:
        return take_seconds(flag, value, &c->duration_ns, &c->has_duration);
    case SKIP:
        return take_count(flag, value, 0, &c->skip, &c->has_skip);
    case COUNT:
        return take_count(flag, value, 1, &c->count, &c->has_count);
    default: /* OP */
        break;
    }
    if (!*value || strlen(value) > 1000) {
        fprintf(stderr, "devtrace record: --capture-op takes an op's name (1 to 1000 bytes)\n");
        return -1;
    }
    c->op = value;
    return 1;
}

int dt_capture_check(const dt_capture_opts *c)
{
    if ((c->has_skip || c->has_count) && !c->op) {
        fprintf(stderr, "devtrace record: --skip and --count count the ops of --capture-op NAME; give --capture-op\n");
        return -1;
    }
    if (c->op && (c->has_delay || c->has_duration)) {
        fprintf(stderr, "devtrace record: --capture-op chooses the window by op; it cannot be combined with "
                        "--delay or --duration\n");
        return -1;
    }
    if (c->on_demand && (c->op || c->has_delay || c->has_duration)) {
        fprintf(stderr, "devtrace record: --on-demand windows are opened by 'devtrace capture PID --duration S'; "
                        "drop --delay, --duration and --capture-op\n");
        return -1;
    }
    if (c->has_duration && c->duration_ns == 0) {
        fprintf(stderr, "devtrace record: --duration 0 would capture nothing; give a positive number of seconds\n");
        return -1;
    }
    return 0;
}

void dt_capture_child_env(const dt_capture_opts *c)
{
    unsetenv("DEVTRACE_CAPTURE_OP");
    if (!c->op)
        return;
    char num[32];
    setenv("DEVTRACE_CAPTURE_OP", c->op, 1);
    snprintf(num, sizeof num, "%llu", (unsigned long long)c->skip);
    setenv("DEVTRACE_CAPTURE_SKIP", num, 1);
    snprintf(num, sizeof num, "%llu", (unsigned long long)(c->has_count ? c->count : 1));
    setenv("DEVTRACE_CAPTURE_COUNT", num, 1);
}

void dt_capture_apply(const dt_capture_opts *c, dt_session *s, uint64_t program_start_ns)
{
    if (!c->has_delay && !c->has_duration)
        return;
    uint64_t open = program_start_ns + c->delay_ns;
    uint64_t close = c->has_duration ? open + c->duration_ns : 0;
    uint64_t ended = s->window_stop; /* the processes' own windows (0: still open, or none) */
    s->window_start = open;          /* from the program's start, even where its collectors started later */
    if (close && (!s->window_stop || s->window_stop > close))
        s->window_stop = close;
    if (ended && ended < open) {
        s->window_stop = s->window_start;
        dt_add_note(s, "the program ended %.3f s after it started, before the capture window opened (--delay %.3f)",
                    (double)(ended - program_start_ns) / 1e9, (double)c->delay_ns / 1e9);
    }
}
