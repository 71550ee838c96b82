/* wl.c: the strict parser of workload (.wl) files for the vendor ABI emulators.
 *
 * Works on (pointer, length) spans only, never on NUL-terminated copies of the input,
 * so any bytes are safe input (this is the fuzz entry). Every error names the file,
 * the line and the problem; on error nothing stays allocated. */
#include "wl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WL_MAX_TOKENS 24
#define WL_MAX_FILE_BYTES (64u << 20)
#define WL_MAX_DUR_NS 3600000000000ull /* one hour: larger is a typo, not a workload */
#define WL_MAX_GRID_DIM 2147483647ull
#define WL_SHOWN_VALUE_BYTES 64 /* values quoted in messages are cut here */

static const char *const wl_call_names[WL_CALL_COUNT] = {
#define WL__CALL_NAME(id, name) name,
    WL_CALL_MAP(WL__CALL_NAME)
#undef WL__CALL_NAME
};

const char *wl_call_name(int call)
{
    if (call < 0 || call >= WL_CALL_COUNT)
        return NULL;
    return wl_call_names[call];
}

int wl_call_from_name(const char *name, size_t len)
{
    for (int i = 0; i < WL_CALL_COUNT; i++) {
        if (strlen(wl_call_names[i]) == len && memcmp(wl_call_names[i], name, len) == 0)
            return i;
    }
    return -1;
}

/* ---- spans and tokens ---- */

typedef struct span {
    const char *p;
    size_t n;
} span;

typedef struct token {
    span key;
    span val;
    int used;
} token;

static int span_is(span s, const char *lit)
{
    size_t n = strlen(lit);
    return s.n == n && memcmp(s.p, lit, n) == 0;
}

static char *span_dup(span s)
{
    char *copy = malloc(s.n + 1);
    if (copy) {
        memcpy(copy, s.p, s.n);
        copy[s.n] = '\0';
    }
    return copy;
}

/* ---- the parser's state ---- */

typedef struct op_index {
    uint64_t *ids; /* open-addressing hash: op id -> index in w->ops */
    size_t *slots; /* index + 1; 0 = empty */
    size_t cap;
} op_index;

typedef struct open_op {
    size_t op; /* index in w->ops */
    int line;
} open_op;

typedef struct parser {
    const char *name;
    int line;
    char *err;
    size_t errlen;
    wl_workload *w;
    const char *stmt_name; /* for messages: "launch", "op push" */
    open_op *open;         /* stack of open ops */
    size_t nopen, capopen;
    size_t nmarks;      /* marker ranges open */
    int first_mark;     /* the line of the outermost one still open */
    uint64_t allocated; /* bytes allocated and not yet freed */
    op_index index;
    size_t capstmts, capops;
} parser;

static int fail(parser *ps, const char *fmt, ...)
{
    if (ps->err && ps->errlen > 0) {
        int n = snprintf(ps->err, ps->errlen, "%s:%d: ", ps->name, ps->line);
        if (n >= 0 && (size_t)n < ps->errlen) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return -1;
}

static int fail_oom(parser *ps)
{
    return fail(ps, "out of memory");
}

static int shown_len(span s)
{
    return (int)(s.n < WL_SHOWN_VALUE_BYTES ? s.n : WL_SHOWN_VALUE_BYTES);
}

/* Grows *arr (of elem bytes each) so that it holds at least need elements. */
static int grow(void **arr, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 16;
    while (ncap < need)
        ncap *= 2;
    void *p = realloc(*arr, ncap * elem);
    if (!p)
        return -1;
    *arr = p;
    *cap = ncap;
    return 0;
}

/* ---- values ---- */

static int parse_u64_span(span s, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (s.n == 0 || s.n > 20)
        return -1;
    for (size_t i = 0; i < s.n; i++) {
        unsigned d = (unsigned)(unsigned char)s.p[i] - '0';
        if (d > 9)
            return -1;
        if (v > (UINT64_MAX - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    if (v > max)
        return -1;
    *out = v;
    return 0;
}

static token *find_token(token *toks, size_t ntoks, const char *key)
{
    for (size_t i = 0; i < ntoks; i++) {
        if (span_is(toks[i].key, key))
            return &toks[i];
    }
    return NULL;
}

static int need(parser *ps, token *toks, size_t ntoks, const char *key, span *out)
{
    token *t = find_token(toks, ntoks, key);
    if (!t)
        return fail(ps, "%s: missing required key '%s='", ps->stmt_name, key);
    *out = t->val;
    return 0;
}

static int need_number(parser *ps, token *toks, size_t ntoks, const char *key, uint64_t min, uint64_t max,
                       uint64_t *out)
{
    span v = {0};
    if (need(ps, toks, ntoks, key, &v) < 0)
        return -1;
    if (parse_u64_span(v, max, out) < 0 || *out < min)
        return fail(ps, "%s: bad number '%.*s' for %s= (expected an integer %llu..%llu)", ps->stmt_name, shown_len(v),
                    v.p, key, (unsigned long long)min, (unsigned long long)max);
    return 0;
}

static int need_u32(parser *ps, token *toks, size_t ntoks, const char *key, uint64_t min, uint64_t max, uint32_t *out)
{
    uint64_t v;
    if (need_number(ps, toks, ntoks, key, min, max, &v) < 0)
        return -1;
    *out = (uint32_t)v;
    return 0;
}

static int need_string(parser *ps, token *toks, size_t ntoks, const char *key, char **out)
{
    span v = {0};
    if (need(ps, toks, ntoks, key, &v) < 0)
        return -1;
    *out = span_dup(v);
    return *out ? 0 : fail_oom(ps);
}

/* grid=x,y,z: three integers 1..2^31-1. */
static int need_dim3(parser *ps, token *toks, size_t ntoks, const char *key, uint32_t out[3])
{
    span v = {0}, rest = {0};
    if (need(ps, toks, ntoks, key, &v) < 0)
        return -1;
    rest = v;
    for (int i = 0; i < 3; i++) {
        const char *comma = memchr(rest.p, ',', rest.n);
        size_t n = comma ? (size_t)(comma - rest.p) : rest.n;
        span part = {rest.p, n};
        uint64_t d;
        int last = (i == 2);
        if ((comma != NULL) == last || parse_u64_span(part, WL_MAX_GRID_DIM, &d) < 0 || d == 0)
            return fail(ps, "%s: bad value '%.*s' for %s= (expected x,y,z with each 1..%llu)", ps->stmt_name,
                        shown_len(v), v.p, key, WL_MAX_GRID_DIM);
        out[i] = (uint32_t)d;
        if (!last) {
            rest.p = comma + 1;
            rest.n -= n + 1;
        }
    }
    return 0;
}

/* Rejects keys outside allowed (a NULL-terminated list) and repeated keys. */
static int check_keys(parser *ps, token *toks, size_t ntoks, const char *const *allowed)
{
    for (size_t i = 0; i < ntoks; i++) {
        int known = 0;
        for (const char *const *k = allowed; *k; k++)
            known |= span_is(toks[i].key, *k);
        if (!known)
            return fail(ps, "%s: unknown key '%.*s'", ps->stmt_name, shown_len(toks[i].key), toks[i].key.p);
        for (size_t j = 0; j < i; j++) {
            if (toks[j].key.n == toks[i].key.n && memcmp(toks[j].key.p, toks[i].key.p, toks[i].key.n) == 0)
                return fail(ps, "%s: key '%.*s=' given twice", ps->stmt_name, shown_len(toks[i].key), toks[i].key.p);
        }
    }
    return 0;
}

/* ---- the op index (id -> w->ops entry) ---- */

static uint64_t hash_id(uint64_t id)
{
    id ^= id >> 33;
    id *= 0xff51afd7ed558ccdull;
    id ^= id >> 33;
    return id;
}

static size_t *index_slot(op_index *ix, uint64_t id)
{
    size_t mask = ix->cap - 1;
    for (size_t i = (size_t)hash_id(id) & mask;; i = (i + 1) & mask) {
        if (ix->slots[i] == 0 || ix->ids[i] == id)
            return &ix->slots[i];
    }
}

static int index_rehash(op_index *ix, size_t ncap)
{
    op_index bigger = {calloc(ncap, sizeof(uint64_t)), calloc(ncap, sizeof(size_t)), ncap};
    if (!bigger.ids || !bigger.slots) {
        free(bigger.ids);
        free(bigger.slots);
        return -1;
    }
    for (size_t i = 0; i < ix->cap; i++) {
        if (ix->slots[i]) {
            size_t *slot = index_slot(&bigger, ix->ids[i]);
            *slot = ix->slots[i];
            bigger.ids[slot - bigger.slots] = ix->ids[i];
        }
    }
    free(ix->ids);
    free(ix->slots);
    *ix = bigger;
    return 0;
}

/* The w->ops index for id, creating the entry (named name) when new. */
static int op_entry(parser *ps, uint64_t id, const char *name, size_t *out)
{
    wl_workload *w = ps->w;
    if ((w->nops + 1) * 2 > ps->index.cap && index_rehash(&ps->index, ps->index.cap ? ps->index.cap * 2 : 64) < 0)
        return fail_oom(ps);
    size_t *slot = index_slot(&ps->index, id);
    if (*slot) {
        *out = *slot - 1;
        return 0;
    }
    if (grow((void **)&w->ops, &ps->capops, w->nops + 1, sizeof *w->ops) < 0)
        return fail_oom(ps);
    w->ops[w->nops] = (wl_op_expect){.id = id, .name = name};
    ps->index.ids[slot - ps->index.slots] = id;
    *slot = ++w->nops;
    *out = w->nops - 1;
    return 0;
}

/* ---- statements ---- */

static int parse_device(parser *ps, token *toks, size_t ntoks, wl_stmt *st)
{
    static const char *const keys[] = {"id",
                                       "name",
                                       "sms",
                                       "warp",
                                       "max_threads_per_sm",
                                       "max_blocks_per_sm",
                                       "regs_per_sm",
                                       "smem_per_sm",
                                       "max_threads_per_block",
                                       NULL};
    wl_workload *w = ps->w;
    wl_device d = {0};
    if (check_keys(ps, toks, ntoks, keys) < 0 || need_u32(ps, toks, ntoks, "id", 0, UINT32_MAX, &d.id) < 0)
        return -1;
    for (size_t i = 0; i < w->ndevices; i++) {
        if (w->devices[i].id == d.id)
            return fail(ps, "device: duplicate device id %u", (unsigned)d.id);
    }
    if (w->ndevices == WL_MAX_DEVICES)
        return fail(ps, "device: more than %d devices", WL_MAX_DEVICES);
    if (need_u32(ps, toks, ntoks, "sms", 1, UINT32_MAX, &d.sms) < 0 ||
        need_u32(ps, toks, ntoks, "warp", 1, 1024, &d.warp) < 0 ||
        need_u32(ps, toks, ntoks, "max_threads_per_sm", 1, UINT32_MAX, &d.max_threads_per_sm) < 0 ||
        need_u32(ps, toks, ntoks, "max_blocks_per_sm", 1, UINT32_MAX, &d.max_blocks_per_sm) < 0 ||
        need_u32(ps, toks, ntoks, "regs_per_sm", 1, UINT32_MAX, &d.regs_per_sm) < 0 ||
        need_u32(ps, toks, ntoks, "smem_per_sm", 1, UINT32_MAX, &d.smem_per_sm) < 0 ||
        need_u32(ps, toks, ntoks, "max_threads_per_block", 1, UINT32_MAX, &d.max_threads_per_block) < 0 ||
        need_string(ps, toks, ntoks, "name", &d.name) < 0)
        return -1;
    st->u.device_index = w->ndevices;
    w->devices[w->ndevices++] = d;
    return 0;
}

static int parse_api(parser *ps, token *toks, size_t ntoks, wl_stmt *st)
{
    static const char *const keys[] = {"call", NULL};
    span v = {0};
    if (check_keys(ps, toks, ntoks, keys) < 0 || need(ps, toks, ntoks, "call", &v) < 0)
        return -1;
    st->u.call = wl_call_from_name(v.p, v.n);
    if (st->u.call < 0)
        return fail(ps, "api: unknown call '%.*s' (expected a generic name such as get_device or malloc)", shown_len(v),
                    v.p);
    return 0;
}

/* levels=node,runtime (optional): the API levels below the call the launch is also recorded at. */
static int optional_levels(parser *ps, token *toks, size_t ntoks, uint32_t *out)
{
    static const char *const names[WL_LEVEL_COUNT] = {"node", "runtime"};
    token *t = find_token(toks, ntoks, "levels");
    *out = 0;
    if (!t)
        return 0;
    span rest = t->val;
    for (;;) {
        const char *comma = memchr(rest.p, ',', rest.n);
        span part = {rest.p, comma ? (size_t)(comma - rest.p) : rest.n};
        int level = -1;
        for (int i = 0; i < WL_LEVEL_COUNT; i++)
            if (span_is(part, names[i]))
                level = i;
        if (level < 0 || (*out & (1u << level)))
            return fail(ps, "%s: bad value '%.*s' for levels= (expected node, runtime or node,runtime, each once)",
                        ps->stmt_name, shown_len(t->val), t->val.p);
        *out |= 1u << level;
        if (!comma)
            return 0;
        rest.n -= part.n + 1;
        rest.p = comma + 1;
    }
}

static int parse_launch(parser *ps, token *toks, size_t ntoks, wl_stmt *st)
{
    static const char *const keys[] = {"kernel",   "grid",   "block",  "regs",   "smem",
                                       "dyn_smem", "dur_ns", "stream", "levels", NULL};
    wl_launch *l = &st->u.launch;
    if (check_keys(ps, toks, ntoks, keys) < 0 || need_dim3(ps, toks, ntoks, "grid", l->grid) < 0 ||
        need_dim3(ps, toks, ntoks, "block", l->block) < 0 ||
        need_u32(ps, toks, ntoks, "regs", 0, 65535, &l->regs) < 0 ||
        need_u32(ps, toks, ntoks, "smem", 0, UINT32_MAX, &l->smem) < 0 ||
        need_u32(ps, toks, ntoks, "dyn_smem", 0, UINT32_MAX, &l->dyn_smem) < 0 ||
        need_number(ps, toks, ntoks, "dur_ns", 0, WL_MAX_DUR_NS, &l->dur_ns) < 0 ||
        need_u32(ps, toks, ntoks, "stream", 0, UINT32_MAX, &l->stream) < 0 ||
        optional_levels(ps, toks, ntoks, &l->levels) < 0)
        return -1;
    return need_string(ps, toks, ntoks, "kernel", &l->kernel);
}

static int parse_memcpy(parser *ps, token *toks, size_t ntoks, wl_stmt *st)
{
    static const char *const keys[] = {"dir", "bytes", "dur_ns", "stream", NULL};
    wl_memcpy *m = &st->u.memcpy;
    span dir = {0};
    if (check_keys(ps, toks, ntoks, keys) < 0 || need(ps, toks, ntoks, "dir", &dir) < 0)
        return -1;
    if (span_is(dir, "htod"))
        m->dir = WL_COPY_HTOD;
    else if (span_is(dir, "dtoh"))
        m->dir = WL_COPY_DTOH;
    else if (span_is(dir, "dtod"))
        m->dir = WL_COPY_DTOD;
    else
        return fail(ps, "memcpy: bad value '%.*s' for dir= (expected htod, dtoh or dtod)", shown_len(dir), dir.p);
    if (need_number(ps, toks, ntoks, "bytes", 1, UINT64_MAX, &m->bytes) < 0 ||
        need_number(ps, toks, ntoks, "dur_ns", 0, WL_MAX_DUR_NS, &m->dur_ns) < 0)
        return -1;
    return need_u32(ps, toks, ntoks, "stream", 0, UINT32_MAX, &m->stream);
}

static int parse_memset(parser *ps, token *toks, size_t ntoks, wl_stmt *st)
{
    static const char *const keys[] = {"bytes", "value", "dur_ns", "stream", NULL};
    wl_memset *m = &st->u.memset;
    if (check_keys(ps, toks, ntoks, keys) < 0 || need_number(ps, toks, ntoks, "bytes", 1, UINT64_MAX, &m->bytes) < 0 ||
        need_u32(ps, toks, ntoks, "value", 0, 255, &m->value) < 0 ||
        need_number(ps, toks, ntoks, "dur_ns", 0, WL_MAX_DUR_NS, &m->dur_ns) < 0)
        return -1;
    return need_u32(ps, toks, ntoks, "stream", 0, UINT32_MAX, &m->stream);
}

static int parse_sync(parser *ps, token *toks, size_t ntoks, wl_stmt *st)
{
    static const char *const keys[] = {"what", "stream", NULL};
    wl_sync *s = &st->u.sync;
    span what = {0};
    if (check_keys(ps, toks, ntoks, keys) < 0 || need(ps, toks, ntoks, "what", &what) < 0)
        return -1;
    if (span_is(what, "device")) {
        s->device_wide = 1;
        if (find_token(toks, ntoks, "stream"))
            return fail(ps, "sync: stream= is only valid with what=stream");
        return 0;
    }
    if (!span_is(what, "stream"))
        return fail(ps, "sync: bad value '%.*s' for what= (expected stream or device)", shown_len(what), what.p);
    return need_u32(ps, toks, ntoks, "stream", 0, UINT32_MAX, &s->stream);
}

static int parse_op_push(parser *ps, token *toks, size_t ntoks, wl_stmt *st)
{
    static const char *const keys[] = {"name", "id", NULL};
    size_t op = 0;
    if (check_keys(ps, toks, ntoks, keys) < 0 || need_number(ps, toks, ntoks, "id", 0, UINT64_MAX, &st->u.op.id) < 0 ||
        need_string(ps, toks, ntoks, "name", &st->u.op.name) < 0)
        return -1;
    if (op_entry(ps, st->u.op.id, st->u.op.name, &op) < 0)
        return -1;
    if (grow((void **)&ps->open, &ps->capopen, ps->nopen + 1, sizeof *ps->open) < 0)
        return fail_oom(ps);
    ps->open[ps->nopen++] = (open_op){op, ps->line};
    return 0;
}

static int parse_op_pop(parser *ps, token *toks, size_t ntoks)
{
    static const char *const keys[] = {NULL};
    if (check_keys(ps, toks, ntoks, keys) < 0)
        return -1;
    if (ps->nopen == 0)
        return fail(ps, "op pop without a matching op push");
    ps->nopen--;
    return 0;
}

static const struct {
    const char *name;
    unsigned size;
} wl_dtypes[WL_DTYPE_COUNT] = {
#define WL__DTYPE_ROW(id, name, size) {name, size},
    WL_DTYPE_MAP(WL__DTYPE_ROW)
#undef WL__DTYPE_ROW
};

unsigned wl_dtype_size(int dtype)
{
    return dtype >= 0 && dtype < WL_DTYPE_COUNT ? wl_dtypes[dtype].size : 0;
}

static int parse_collective(parser *ps, token *toks, size_t ntoks, wl_stmt *st)
{
    static const char *const keys[] = {"call", "name", "comm", "alg", "count", "dtype", "dur_ns", "stream", NULL};
    wl_collective *c = &st->u.collective;
    span dtype = {0};
    if (check_keys(ps, toks, ntoks, keys) < 0 || need_string(ps, toks, ntoks, "call", &c->call) < 0 ||
        need_string(ps, toks, ntoks, "name", &c->name) < 0 || need_string(ps, toks, ntoks, "comm", &c->comm) < 0 ||
        need_string(ps, toks, ntoks, "alg", &c->alg) < 0 ||
        need_number(ps, toks, ntoks, "count", 1, UINT32_MAX, &c->count) < 0 ||
        need(ps, toks, ntoks, "dtype", &dtype) < 0 ||
        need_number(ps, toks, ntoks, "dur_ns", 1, WL_MAX_DUR_NS, &c->dur_ns) < 0)
        return -1;
    c->dtype = -1;
    for (int i = 0; i < WL_DTYPE_COUNT; i++)
        if (span_is(dtype, wl_dtypes[i].name))
            c->dtype = i;
    if (c->dtype < 0)
        return fail(ps, "collective: bad value '%.*s' for dtype= (expected int8, int32, fp16, fp32 or bf16)",
                    shown_len(dtype), dtype.p);
    return need_u32(ps, toks, ntoks, "stream", 0, UINT32_MAX, &c->stream);
}

static int parse_mark_push(parser *ps, token *toks, size_t ntoks, wl_stmt *st)
{
    static const char *const keys[] = {"name", "id", NULL};
    if (check_keys(ps, toks, ntoks, keys) < 0 ||
        need_number(ps, toks, ntoks, "id", 0, UINT64_MAX, &st->u.mark.id) < 0 ||
        need_string(ps, toks, ntoks, "name", &st->u.mark.name) < 0)
        return -1;
    if (ps->nmarks++ == 0)
        ps->first_mark = ps->line;
    return 0;
}

static int parse_mark_pop(parser *ps, token *toks, size_t ntoks)
{
    static const char *const keys[] = {NULL};
    if (check_keys(ps, toks, ntoks, keys) < 0)
        return -1;
    if (ps->nmarks == 0)
        return fail(ps, "mark pop without a matching mark push");
    ps->nmarks--;
    return 0;
}

/* alloc addr= bytes= stream= | free addr= bytes= stream=: what is freed must have been allocated. */
static int parse_memory(parser *ps, token *toks, size_t ntoks, wl_stmt *st)
{
    static const char *const keys[] = {"addr", "bytes", "stream", NULL};
    wl_memory *m = &st->u.memory;
    if (check_keys(ps, toks, ntoks, keys) < 0 || need_number(ps, toks, ntoks, "addr", 1, UINT64_MAX, &m->address) < 0 ||
        need_number(ps, toks, ntoks, "bytes", 1, UINT32_MAX, &m->bytes) < 0 ||
        need_u32(ps, toks, ntoks, "stream", 0, UINT32_MAX, &m->stream) < 0)
        return -1;
    if (st->kind == WL_STMT_FREE) {
        if (m->bytes > ps->allocated)
            return fail(ps, "free: %llu bytes freed but only %llu allocated", (unsigned long long)m->bytes,
                        (unsigned long long)ps->allocated);
        ps->allocated -= m->bytes;
    } else {
        ps->allocated += m->bytes;
    }
    return 0;
}

/* Attributes a device statement's duration to the innermost open op. */
static void attribute_device_time(parser *ps, const wl_stmt *st)
{
    uint64_t dur;
    if (st->kind == WL_STMT_LAUNCH)
        dur = st->u.launch.dur_ns;
    else if (st->kind == WL_STMT_MEMCPY)
        dur = st->u.memcpy.dur_ns;
    else if (st->kind == WL_STMT_MEMSET)
        dur = st->u.memset.dur_ns;
    else if (st->kind == WL_STMT_COLLECTIVE)
        dur = st->u.collective.dur_ns;
    else
        return;
    if (ps->nopen == 0)
        return;
    wl_op_expect *op = &ps->w->ops[ps->open[ps->nopen - 1].op];
    op->device_ns += dur;
    op->device_events++;
}

static void free_stmt(wl_stmt *st)
{
    if (st->kind == WL_STMT_LAUNCH)
        free(st->u.launch.kernel);
    else if (st->kind == WL_STMT_OP_PUSH)
        free(st->u.op.name);
    else if (st->kind == WL_STMT_MARK_PUSH)
        free(st->u.mark.name);
    else if (st->kind == WL_STMT_COLLECTIVE) {
        free(st->u.collective.call);
        free(st->u.collective.name);
        free(st->u.collective.comm);
        free(st->u.collective.alg);
    }
}

/* Splits a line into tokens; the first one or two (for `op`) are words, the rest key=value. */
static int tokenize(parser *ps, span line, span words[2], size_t nwords_max, size_t *nwords, token *toks, size_t *ntoks)
{
    size_t i = 0;
    *nwords = *ntoks = 0;
    while (i < line.n) {
        while (i < line.n && (line.p[i] == ' ' || line.p[i] == '\t' || line.p[i] == '\r'))
            i++;
        if (i == line.n)
            break;
        size_t start = i;
        while (i < line.n && line.p[i] != ' ' && line.p[i] != '\t' && line.p[i] != '\r')
            i++;
        span tok = {line.p + start, i - start};
        const char *eq = memchr(tok.p, '=', tok.n);
        if (!eq && *ntoks == 0 && *nwords < nwords_max) {
            words[(*nwords)++] = tok;
            continue;
        }
        if (!eq || eq == tok.p)
            return fail(ps, "%s: token '%.*s' is not key=value", ps->stmt_name, shown_len(tok), tok.p);
        if (*ntoks == WL_MAX_TOKENS)
            return fail(ps, "%s: more than %d keys", ps->stmt_name, WL_MAX_TOKENS);
        token *t = &toks[(*ntoks)++];
        t->key = (span){tok.p, (size_t)(eq - tok.p)};
        t->val = (span){eq + 1, tok.n - t->key.n - 1};
        if (t->val.n == 0)
            return fail(ps, "%s: empty value for %.*s=", ps->stmt_name, shown_len(t->key), t->key.p);
    }
    return 0;
}

static int check_bytes(parser *ps, span line)
{
    for (size_t i = 0; i < line.n; i++) {
        unsigned char c = (unsigned char)line.p[i];
        if ((c < 0x20 && c != '\t' && c != '\r') || c == 0x7f)
            return fail(ps, "invalid byte 0x%02x in column %zu", c, i + 1);
    }
    return 0;
}

static int is_comment_or_blank(span line)
{
    for (size_t i = 0; i < line.n; i++) {
        char c = line.p[i];
        if (c == '#')
            return 1;
        if (c != ' ' && c != '\t' && c != '\r')
            return 0;
    }
    return 1;
}

static int dispatch(parser *ps, span *words, size_t nwords, token *toks, size_t ntoks, wl_stmt *st)
{
    span s = words[0];
    if (span_is(s, "op")) {
        if (nwords < 2)
            return fail(ps, "op: expected push or pop");
        if (span_is(words[1], "push")) {
            st->kind = WL_STMT_OP_PUSH;
            ps->stmt_name = "op push";
            return parse_op_push(ps, toks, ntoks, st);
        }
        if (span_is(words[1], "pop")) {
            st->kind = WL_STMT_OP_POP;
            ps->stmt_name = "op pop";
            return parse_op_pop(ps, toks, ntoks);
        }
        return fail(ps, "op: unknown verb '%.*s' (expected push or pop)", shown_len(words[1]), words[1].p);
    }
    if (span_is(s, "mark")) {
        if (nwords < 2)
            return fail(ps, "mark: expected push or pop");
        if (span_is(words[1], "push")) {
            st->kind = WL_STMT_MARK_PUSH;
            ps->stmt_name = "mark push";
            return parse_mark_push(ps, toks, ntoks, st);
        }
        if (span_is(words[1], "pop")) {
            st->kind = WL_STMT_MARK_POP;
            ps->stmt_name = "mark pop";
            return parse_mark_pop(ps, toks, ntoks);
        }
        return fail(ps, "mark: unknown verb '%.*s' (expected push or pop)", shown_len(words[1]), words[1].p);
    }
    static const struct {
        const char *name;
        int kind;
        int (*parse)(parser *, token *, size_t, wl_stmt *);
    } table[] = {
        {"device", WL_STMT_DEVICE, parse_device},
        {"api", WL_STMT_API, parse_api},
        {"launch", WL_STMT_LAUNCH, parse_launch},
        {"memcpy", WL_STMT_MEMCPY, parse_memcpy},
        {"memset", WL_STMT_MEMSET, parse_memset},
        {"sync", WL_STMT_SYNC, parse_sync},
        {"collective", WL_STMT_COLLECTIVE, parse_collective},
        {"alloc", WL_STMT_ALLOC, parse_memory},
        {"free", WL_STMT_FREE, parse_memory},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        if (span_is(s, table[i].name)) {
            st->kind = table[i].kind;
            return table[i].parse(ps, toks, ntoks, st);
        }
    }
    return fail(ps,
                "unknown statement '%.*s' (expected device, op, api, launch, memcpy, memset, sync, collective, mark, "
                "alloc or free)",
                shown_len(s), s.p);
}

/* The first blank-separated word of a line that is not blank. */
static span first_word(span line)
{
    size_t i = 0, start;
    while (i < line.n && (line.p[i] == ' ' || line.p[i] == '\t' || line.p[i] == '\r'))
        i++;
    start = i;
    while (i < line.n && line.p[i] != ' ' && line.p[i] != '\t' && line.p[i] != '\r')
        i++;
    return (span){line.p + start, i - start};
}

static int parse_line(parser *ps, span line)
{
    span words[2];
    token toks[WL_MAX_TOKENS];
    size_t nwords, ntoks;
    char name_buf[16];
    if (check_bytes(ps, line) < 0)
        return -1;
    if (is_comment_or_blank(line))
        return 0;
    span first = first_word(line);
    snprintf(name_buf, sizeof name_buf, "%.*s", (int)(first.n < 15 ? first.n : 15), first.p);
    ps->stmt_name = name_buf;
    if (tokenize(ps, line, words, span_is(first, "op") || span_is(first, "mark") ? 2 : 1, &nwords, toks, &ntoks) < 0)
        return -1;
    if (nwords == 0)
        return fail(ps, "line starts with '%.*s'; expected a statement name", shown_len(first), first.p);
    if (grow((void **)&ps->w->stmts, &ps->capstmts, ps->w->nstmts + 1, sizeof *ps->w->stmts) < 0)
        return fail_oom(ps);
    wl_stmt *st = &ps->w->stmts[ps->w->nstmts];
    memset(st, 0, sizeof *st);
    st->line = ps->line;
    if (dispatch(ps, words, nwords, toks, ntoks, st) < 0) {
        free_stmt(st);
        return -1;
    }
    ps->w->nstmts++;
    attribute_device_time(ps, st);
    return 0;
}

static int check_balanced(parser *ps)
{
    if (ps->nmarks)
        return fail(ps, "end of file with %zu mark%s still open (the outermost pushed at line %d)", ps->nmarks,
                    ps->nmarks == 1 ? "" : "s", ps->first_mark);
    if (ps->nopen == 0)
        return 0;
    const open_op *top = &ps->open[ps->nopen - 1];
    const wl_op_expect *op = &ps->w->ops[top->op];
    return fail(ps, "end of file with %zu op%s still open (innermost '%s' id=%llu pushed at line %d)", ps->nopen,
                ps->nopen == 1 ? "" : "s", op->name, (unsigned long long)op->id, top->line);
}

int wl_parse_buffer(const char *text, size_t len, const char *name, wl_workload *out, char *err, size_t errlen)
{
    parser ps = {.name = name ? name : "<buffer>", .err = err, .errlen = errlen, .w = out};
    int rc = 0;
    if (err && errlen)
        err[0] = '\0';
    memset(out, 0, sizeof *out);
    if (!text && len)
        return fail(&ps, "no text");
    out->path = span_dup((span){ps.name, strlen(ps.name)});
    if (!out->path)
        return fail_oom(&ps);
    size_t pos = 0;
    while (rc == 0 && pos < len) {
        const char *nl = memchr(text + pos, '\n', len - pos);
        size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
        ps.line++;
        rc = parse_line(&ps, (span){text + pos, n});
        pos += n + (nl ? 1 : 0);
    }
    if (rc == 0)
        rc = check_balanced(&ps);
    free(ps.open);
    free(ps.index.ids);
    free(ps.index.slots);
    if (rc < 0)
        wl_free(out);
    return rc;
}

static void set_error(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Reads a whole file into a malloc'd buffer; 0, or -1 with err set. */
static int read_whole_file(const char *path, char **text, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    size_t cap = 0;
    *text = NULL;
    *len = 0;
    if (!f) {
        set_error(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    for (;;) {
        if (*len == cap) {
            char *bigger = cap < WL_MAX_FILE_BYTES ? realloc(*text, cap ? cap * 2 : 65536) : NULL;
            if (!bigger) {
                set_error(err, errlen, cap < WL_MAX_FILE_BYTES ? "%s: out of memory" : "%s: larger than %u bytes", path,
                          WL_MAX_FILE_BYTES);
                break;
            }
            *text = bigger;
            cap = cap ? cap * 2 : 65536;
        }
        size_t got = fread(*text + *len, 1, cap - *len, f);
        *len += got;
        if (got == 0) {
            int bad = ferror(f);
            fclose(f);
            if (!bad)
                return 0;
            set_error(err, errlen, "%s: read error", path);
            free(*text);
            *text = NULL;
            return -1;
        }
    }
    fclose(f);
    free(*text);
    *text = NULL;
    return -1;
}

int wl_parse_file(const char *path, wl_workload *out, char *err, size_t errlen)
{
    char *text;
    size_t len;
    memset(out, 0, sizeof *out);
    if (read_whole_file(path, &text, &len, err, errlen) < 0)
        return -1;
    int rc = wl_parse_buffer(text, len, path, out, err, errlen);
    free(text);
    return rc;
}

void wl_free(wl_workload *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->nstmts; i++)
        free_stmt(&w->stmts[i]);
    for (size_t i = 0; i < w->ndevices; i++)
        free(w->devices[i].name);
    free(w->stmts);
    free(w->ops);
    free(w->path);
    memset(w, 0, sizeof *w);
}

void wl_expected_counts(const wl_workload *w, wl_counts *out)
{
    uint64_t device_ns = 0, attributed_ns = 0;
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < w->nstmts; i++) {
        const wl_stmt *st = &w->stmts[i];
        switch (st->kind) {
        case WL_STMT_LAUNCH:
            out->kernels++;
            device_ns += st->u.launch.dur_ns;
            break;
        case WL_STMT_MEMCPY:
            out->memcpys++;
            device_ns += st->u.memcpy.dur_ns;
            break;
        case WL_STMT_MEMSET:
            out->memsets++;
            device_ns += st->u.memset.dur_ns;
            break;
        case WL_STMT_COLLECTIVE:
            out->collectives++;
            device_ns += st->u.collective.dur_ns;
            break;
        case WL_STMT_ALLOC:
        case WL_STMT_FREE:
            out->memory_events++;
            break;
        case WL_STMT_MARK_PUSH:
            out->marks++;
            continue; /* not a runtime call */
        case WL_STMT_API:
        case WL_STMT_SYNC:
            break;
        default:
            continue; /* device and op statements are not runtime calls */
        }
        out->runtime++;
    }
    for (size_t i = 0; i < w->nops; i++)
        attributed_ns += w->ops[i].device_ns;
    out->unattributed_ns = device_ns - attributed_ns;
    out->ops = w->ops;
    out->nops = w->nops;
}

const wl_op_expect *wl_find_op(const wl_workload *w, uint64_t id)
{
    for (size_t i = 0; i < w->nops; i++) {
        if (w->ops[i].id == id)
            return &w->ops[i];
    }
    return NULL;
}
