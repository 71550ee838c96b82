/* emu_faults.c: the strict parser of DEVEMU_FAULTS, the emulators' fault injection spec.
 *
 * Grammar: comma-separated items, each `name` or `name=value`:
 *   zero-time=N  drop=N  refuse-buffer=N  malformed=N   counts (decimal)
 *   clock-epoch=NS|load  clock-rate=R                   vendor clock = (realtime - epoch) * rate
 *   small-buffer[=BYTES]  subscribe-fail  stale-iterator  flush-hang[=MS]
 *   <vendor preset>, e.g. maca-3.8: expands to the vendor's preset spec
 * Anything else, or a fault the vendor does not emulate, is an error. */
#include "emu.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EMU_FAULTS_KNOWN                                                                     \
    "zero-time=N, drop=N, refuse-buffer=N, malformed=N, clock-epoch=NS|load, clock-rate=R, " \
    "small-buffer[=BYTES], subscribe-fail, stale-iterator, flush-hang[=MS], or the vendor preset"

typedef struct fault_item {
    const char *name;
    size_t name_len;
    const char *value; /* NULL when the item has no '=' */
    size_t value_len;
} fault_item;

static int fault_error(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        int n = snprintf(err, errlen, "devemu: ");
        va_list ap;
        va_start(ap, fmt);
        if (n >= 0 && (size_t)n < errlen)
            vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int item_is(const fault_item *it, const char *name)
{
    return strlen(name) == it->name_len && memcmp(it->name, name, it->name_len) == 0;
}

/* Copies the value into buf (NUL-terminated); -1 when absent or too long. */
static int value_copy(const fault_item *it, char *buf, size_t buflen)
{
    if (!it->value || it->value_len == 0 || it->value_len >= buflen)
        return -1;
    memcpy(buf, it->value, it->value_len);
    buf[it->value_len] = '\0';
    return 0;
}

static int parse_count(const fault_item *it, uint64_t *out)
{
    char buf[32], *end;
    if (value_copy(it, buf, sizeof buf) < 0 || buf[0] < '0' || buf[0] > '9')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 10);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

static int parse_epoch(const fault_item *it, emu_faults *f)
{
    char buf[32], *end;
    if (value_copy(it, buf, sizeof buf) < 0)
        return -1;
    f->has_epoch = 1;
    f->epoch_at_load = strcmp(buf, "load") == 0;
    if (f->epoch_at_load)
        return 0;
    if (!(buf[0] == '-' || (buf[0] >= '0' && buf[0] <= '9')))
        return -1;
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno || *end)
        return -1;
    f->clock_epoch_ns = v;
    return 0;
}

static int parse_rate(const fault_item *it, emu_faults *f)
{
    char buf[32], *end;
    if (value_copy(it, buf, sizeof buf) < 0 || buf[0] < '0' || buf[0] > '9')
        return -1;
    errno = 0;
    double r = strtod(buf, &end);
    if (errno || *end || !isfinite(r) || r <= 0.0 || r > 1e6)
        return -1;
    f->has_rate = 1;
    f->clock_rate = r;
    return 0;
}

static uint32_t largest_record(const emu_vendor *v)
{
    uint32_t sizes[] = {v->kernel.size, v->memcpy.size, v->memset.size, v->api.size, v->external_correlation.size,
                        v->bogus_size};
    uint32_t max = 0;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        max = sizes[i] > max ? sizes[i] : max;
    return max;
}

static int parse_small_buffer(const fault_item *it, const emu_vendor *v, emu_faults *f)
{
    uint64_t bytes = EMU_SMALL_BUFFER_DEFAULT;
    if (it->value && parse_count(it, &bytes) < 0)
        return -1;
    if (bytes < largest_record(v))
        return -1;
    f->small_buffer = (size_t)bytes;
    return 0;
}

/* The fault bit an item name needs, or 0 when the name is unknown. */
static unsigned fault_bit(const fault_item *it, const emu_vendor *v)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {
        {"zero-time", EMU_FAULT_ZERO_TIME},
        {"clock-epoch", EMU_FAULT_CLOCK},
        {"clock-rate", EMU_FAULT_CLOCK},
        {"drop", EMU_FAULT_DROP},
        {"refuse-buffer", EMU_FAULT_REFUSE_BUFFER},
        {"subscribe-fail", EMU_FAULT_SUBSCRIBE_FAIL},
        {"malformed", EMU_FAULT_MALFORMED},
        {"small-buffer", EMU_FAULT_SMALL_BUFFER},
        {"stale-iterator", EMU_FAULT_STALE_ITERATOR},
        {"flush-hang", EMU_FAULT_FLUSH_HANG},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (item_is(it, names[i].name))
            return names[i].bit;
    }
    if (v->preset_name && item_is(it, v->preset_name))
        return EMU_FAULT_VENDOR_PRESET;
    return 0;
}

static int apply_spec(const char *spec, const emu_vendor *v, emu_faults *f, int depth, char *err, size_t errlen);

static int apply_item(const fault_item *it, const emu_vendor *v, emu_faults *f, int depth, char *err, size_t errlen)
{
    int n = (int)(it->name_len < 40 ? it->name_len : 40);
    unsigned bit = fault_bit(it, v);
    int flag = bit == EMU_FAULT_SUBSCRIBE_FAIL || bit == EMU_FAULT_STALE_ITERATOR || bit == EMU_FAULT_VENDOR_PRESET;
    int rc;
    if (!bit)
        return fault_error(err, errlen, "unknown fault '%.*s' in DEVEMU_FAULTS (known: %s)", n, it->name,
                           EMU_FAULTS_KNOWN);
    if (!((v->faults_supported | EMU_FAULTS_EVERY_VENDOR) & bit))
        return fault_error(err, errlen, "fault '%.*s' is not emulated by the %s emulator", n, it->name, v->name);
    if (flag && it->value)
        return fault_error(err, errlen, "fault '%.*s' takes no value", n, it->name);
    if (bit == EMU_FAULT_VENDOR_PRESET)
        return depth > 0 ? fault_error(err, errlen, "preset '%.*s' inside a preset", n, it->name)
                         : apply_spec(v->preset_spec, v, f, depth + 1, err, errlen);
    if (item_is(it, "zero-time"))
        rc = parse_count(it, &f->zero_time);
    else if (item_is(it, "drop"))
        rc = parse_count(it, &f->drop);
    else if (item_is(it, "refuse-buffer"))
        rc = parse_count(it, &f->refuse_buffer);
    else if (item_is(it, "malformed"))
        rc = parse_count(it, &f->malformed);
    else if (item_is(it, "clock-epoch"))
        rc = parse_epoch(it, f);
    else if (item_is(it, "clock-rate"))
        rc = parse_rate(it, f);
    else if (item_is(it, "small-buffer"))
        rc = parse_small_buffer(it, v, f);
    else if (item_is(it, "flush-hang")) {
        f->flush_hang = 1;
        rc = it->value ? parse_count(it, &f->flush_hang_ms) : 0;
        rc = rc == 0 && it->value && f->flush_hang_ms == 0 ? -1 : rc; /* for ever is the bare name */
    } else {
        rc = 0;
        if (bit == EMU_FAULT_SUBSCRIBE_FAIL)
            f->subscribe_fail = 1;
        else
            f->stale_iterator = 1;
    }
    if (rc < 0)
        return fault_error(err, errlen, "bad value '%.*s' for fault '%.*s'",
                           (int)(it->value_len < 40 ? it->value_len : 40), it->value ? it->value : "", n, it->name);
    return 0;
}

static int apply_spec(const char *spec, const emu_vendor *v, emu_faults *f, int depth, char *err, size_t errlen)
{
    const char *p = spec;
    if (!spec || !*spec)
        return 0;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        fault_item it = {p, eq ? (size_t)(eq - p) : len, eq ? eq + 1 : NULL, eq ? len - (size_t)(eq - p) - 1 : 0};
        if (len == 0)
            return fault_error(err, errlen, "empty item in DEVEMU_FAULTS '%s'", spec);
        if (apply_item(&it, v, f, depth, err, errlen) < 0)
            return -1;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

int emu_faults_parse(const char *spec, const emu_vendor *v, emu_faults *out, char *err, size_t errlen)
{
    emu_faults f = {0};
    if (err && errlen)
        err[0] = '\0';
    if (apply_spec(spec, v, &f, 0, err, errlen) < 0)
        return -1;
    *out = f;
    return 0;
}
