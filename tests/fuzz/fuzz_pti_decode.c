/* fuzz_pti_decode.c: libFuzzer target for the CUPTI-family record walker and decoders
 * (src/backends/pti_family.h): the fuzzer's bytes are a vendor's completed activity buffer.
 *
 * dt_pti_decoder_init for a descriptor (cupti, ppu, iluvatar, mspti, MSPTI's layouts under the
 * engine's iterator walk, then every other PTI-family descriptor of the registry: musa, mcpti,
 * cnpapi, ...) and a library version, then dt_pti_walk_buffer over the bytes, walked by
 *   - an honest iterator: the vendor's GetNextRecord, striding by its kind-to-size table and
 *     ending with MAX_LIMIT_REACHED or an error for an unknown or cut record; or
 *   - a hostile one, scripted by the input: pointers outside the buffer, one past its end, before
 *     it, repeated, going backwards, NULL with success, error codes.
 * The buffer is a heap copy of exactly the valid bytes, so AddressSanitizer sees any read past
 * them. Pointer fields (kernel and API names) belong to the vendor and are trusted by design:
 * before handing a record out, the iterator points them at NUL-terminated strings (odd ones:
 * invalid UTF-8, control characters, 4 KiB, the input's own tail) or NULL. Then clock samples and a
 * capture window from the input are added and the session is finalised and written: the trace
 * must be strict JSON (the unit tests' reader), whatever the records said.
 *
 * Input: u8 descriptor, u8 version, u8 flags (walk mode, iterator, quirks, clock samples), u8 window
 * (bit 0: a capture window; bit 1: no stepping by layout sizes), u8 script length (x3 bytes), 64 bytes of clock samples and window, the script, the buffer. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "backends/backend.h"
#include "backends/pti_family.h"
#include "backends/pti_records.h"
#ifdef DT_HAVE_MSPTI
#include "backends/mspti_records.h"
#endif
#include "fuzz_common.h"

#define FZ_INVALID_KIND 13 /* any non-success, non-MAX_LIMIT code (CUPTI_ERROR_INVALID_KIND) */

#ifdef DT_HAVE_MSPTI
/* MSPTI's own layouts and decoders walked by the engine's iterator walk (the real descriptor
 * has its own walker, the stride walk): the hostile iterator reaches MSPTI's decoders too.
 * Filled from dt_pti_mspti_descriptor on the first input. */
static dt_pti_descriptor mspti_under_an_iterator;
#endif
/* The descriptors an input picks from: these first, in this order (the corpus's seeds name
 * them by index), then every other PTI-family descriptor of the registry (its backends whose
 * raw_tables are a descriptor of the engine), found on the first input. */
static const dt_pti_descriptor *const first_descriptors[] = {
#ifdef DT_HAVE_CUPTI
    &dt_pti_cupti_descriptor,
#endif
#ifdef DT_HAVE_PPU
    &dt_pti_ppu_descriptor,
#endif
#ifdef DT_HAVE_ILUVATAR
    &dt_pti_iluvatar_descriptor,
#endif
#ifdef DT_HAVE_MSPTI
    &mspti_under_an_iterator,
    /* walked by its own walker, the stride walk */
    &dt_pti_mspti_descriptor,
#endif
};
#define MAX_DESCRIPTORS 32
static const dt_pti_descriptor *descriptors[MAX_DESCRIPTORS];
static size_t ndescriptors;

static void add_descriptor(const dt_pti_descriptor *d)
{
    for (size_t i = 0; i < ndescriptors; i++)
        if (descriptors[i] == d)
            return;
    if (ndescriptors < MAX_DESCRIPTORS)
        descriptors[ndescriptors++] = d;
}

static void fill_descriptors(void)
{
    if (ndescriptors)
        return;
    for (size_t i = 0; i < sizeof first_descriptors / sizeof first_descriptors[0]; i++)
        add_descriptor(first_descriptors[i]);
    for (const dt_backend *const *b = dt_backends(); *b; b++)
        if ((*b)->raw_decoder == &dt_pti_raw_decoder && (*b)->raw_tables)
            add_descriptor((*b)->raw_tables);
}

/* Library versions around every boundary the layout tables have. */
static const uint32_t versions[] = {0, 1, 18, 19, 26, 27, 28, 129999, 130000, 130001, 130100, 200000, UINT32_MAX};

/* Where a layout's decoder reads a pointer (up to three); -1: none. A layout whose decoder is not
 * listed here could read a pointer this harness does not know about: its descriptor is skipped. */
typedef struct pointer_fields {
    int at[3];
} pointer_fields;
/* The engine's decoders, by id (DT_PTI_DECODE_CUPTI_*). */
static const pointer_fields engine_decoders[DT_PTI_DECODE_CUPTI_EXTERNAL + 1] = {
    [DT_PTI_DECODE_CUPTI_KERNEL] = {{offsetof(dt_cupti_kernel_prefix, name), -1, -1}},
    [DT_PTI_DECODE_CUPTI_MEMCPY] = {{-1, -1, -1}},
    [DT_PTI_DECODE_CUPTI_MEMSET] = {{-1, -1, -1}},
    [DT_PTI_DECODE_CUPTI_API] = {{-1, -1, -1}},
    [DT_PTI_DECODE_CUPTI_EXTERNAL] = {{-1, -1, -1}},
};

/* A vendor's decoders: what its descriptor declares (vendor_pointers; one not listed reads
 * no pointer). A wrong declaration is a wild pointer read here, which the sanitizers report. */
static pointer_fields vendor_fields;

static const pointer_fields *fields_of(const dt_pti_descriptor *d, const dt_pti_layout *l)
{
    if (l->decoder >= DT_PTI_DECODE_CUPTI_KERNEL && l->decoder <= DT_PTI_DECODE_CUPTI_EXTERNAL)
        return &engine_decoders[l->decoder];
    if (!d->vendor_decode || l->decoder < DT_PTI_DECODE_VENDOR)
        return NULL;
    size_t id = (size_t)l->decoder - DT_PTI_DECODE_VENDOR;
    for (int i = 0; i < 3; i++) {
        uint16_t at = id < d->nvendor_pointers ? d->vendor_pointers[id].at[i] : 0;
        vendor_fields.at[i] = at ? at : -1;
    }
    return &vendor_fields;
}

/* A vendor scanner walks the buffer by itself (no iterator to patch records on the way): only
 * MSPTI's, the engine's stride walk, which steps by the layout sizes from the start, is fuzzed
 * here (its pointers are patched beforehand along the same stride); MCPTI's has its own target
 * (fuzz_mcpti_scan). */
static int walks_by_sizes(const dt_pti_descriptor *d)
{
#ifdef DT_HAVE_MSPTI
    return d->scan && d->scan == dt_pti_mspti_descriptor.scan;
#else
    (void)d;
    return 0;
#endif
}

static int all_decoders_known(const dt_pti_descriptor *d)
{
    for (size_t i = 0; i < d->nlayouts; i++)
        if (!fields_of(d, &d->layouts[i]))
            return 0;
    return !d->scan || walks_by_sizes(d);
}

/* Strings the patched pointers point at. */
static char long_name[4097];
static char input_tail[65];
static const char *const strings[] = {
    "",
    "_Z6kernelPf",
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_",
    "_Z", /* not a valid mangling */
    "_ZNK3foo3barIiEclEv\xff\xfe (invalid UTF-8)",
    "tab\tnewline\nquote\"backslash\\ bell\x07",
    "cudaLaunchKernel",
    long_name,
    input_tail,
};
#define NSTRINGS (sizeof strings / sizeof strings[0])

static struct {
    dt_pti_decoder *d;
    int hostile;
    const uint8_t *script;
    size_t script_len, pos;
} it;

static uint32_t vendor_size(uint32_t kind)
{
    const dt_pti_layout *l = kind < DT_PTI_MAX_KIND ? it.d->by_kind[kind] : NULL;
    return l ? l->size : 0;
}

/* Points the record's pointer fields that lie inside the valid bytes at strings (or NULL). */
static void patch_pointers(uint8_t *rec, size_t avail)
{
    if (avail < 4)
        return;
    uint32_t kind;
    memcpy(&kind, rec, 4);
    const dt_pti_layout *l = kind < DT_PTI_MAX_KIND ? it.d->by_kind[kind] : NULL;
    const pointer_fields *pf = l ? fields_of(it.d->desc, l) : NULL;
    for (int i = 0; pf && i < 3; i++) {
        if (pf->at[i] < 0 || (size_t)pf->at[i] + sizeof(void *) > avail)
            continue;
        uint8_t pick = rec[pf->at[i]];
        const char *p = pick % (NSTRINGS + 1) == NSTRINGS ? NULL : strings[pick % (NSTRINGS + 1)];
        memcpy(rec + pf->at[i], &p, sizeof p);
    }
}

/* The vendor's GetNextRecord: the record after *rec by the kind's size. */
static int honest_step(uint8_t *buf, size_t valid, void **rec)
{
    const dt_pti_descriptor *desc = it.d->desc;
    size_t off = 0;
    uintptr_t p = (uintptr_t)*rec, base = (uintptr_t)buf;
    if (p >= base && valid >= 4 && p - base <= valid - 4) { /* else (NULL, or a hostile pointer): from the start */
        uint32_t kind;
        memcpy(&kind, *rec, 4);
        off = (size_t)(p - base) + vendor_size(kind);
    }
    if (off >= valid)
        return desc->results.max_limit_reached;
    if (valid - off < 4)
        return FZ_INVALID_KIND;
    uint32_t kind;
    memcpy(&kind, buf + off, 4);
    uint32_t size = vendor_size(kind);
    if (!size || size > valid - off)
        return FZ_INVALID_KIND;
    patch_pointers(buf + off, valid - off);
    *rec = buf + off;
    return desc->results.success;
}

static int fuzz_next(uint8_t *buf, size_t valid, void **rec)
{
    const dt_pti_descriptor *desc = it.d->desc;
    if (!it.hostile)
        return honest_step(buf, valid, rec);
    if (it.pos + 3 > it.script_len)
        return desc->results.max_limit_reached;
    uint8_t op = it.script[it.pos];
    size_t arg = (size_t)it.script[it.pos + 1] | (size_t)it.script[it.pos + 2] << 8;
    it.pos += 3;
    uintptr_t base = (uintptr_t)buf;
    switch (op % 8) {
    case 0: /* anywhere in or just past the valid bytes */
        *rec = (void *)(base + arg % (valid + 64));
        break;
    case 1: /* the same record again */
        break;
    case 2:
        *rec = NULL;
        return desc->results.success;
    case 3:
        return desc->results.max_limit_reached;
    case 4:
        return (int)(arg % 64);
    case 5: /* before the buffer */
        *rec = (void *)(base - 1 - arg);
        return desc->results.success;
    case 6:
        return honest_step(buf, valid, rec);
    default: /* one past the end */
        *rec = (void *)(base + valid);
        return desc->results.success;
    }
    uintptr_t p = (uintptr_t)*rec;
    if (p >= base && p < base + valid)
        patch_pointers((uint8_t *)p, valid - (p - base));
    return desc->results.success;
}

static void fill_long_name(void)
{
    if (long_name[0])
        return;
    memcpy(long_name, "_ZN", 3);
    for (size_t i = 3; i < sizeof long_name - 1; i++)
        long_name[i] = (char)('a' + i % 26);
}

static void fill_mspti_under_an_iterator(void)
{
#ifdef DT_HAVE_MSPTI
    if (mspti_under_an_iterator.name)
        return;
    mspti_under_an_iterator = dt_pti_mspti_descriptor;
    mspti_under_an_iterator.name = "mspti-iterator";
    mspti_under_an_iterator.scan = NULL;
#endif
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fill_long_name();
    fill_mspti_under_an_iterator();
    fill_descriptors();
    if (!ndescriptors)
        return 0; /* no PTI-family backend compiled in */
    fz_input in = {data, size};
    const dt_pti_descriptor *chosen = descriptors[fz_u8(&in) % ndescriptors];
    if (!all_decoders_known(chosen))
        return 0;
    uint32_t version = versions[fz_u8(&in) % (sizeof versions / sizeof versions[0])];
    uint8_t flags = fz_u8(&in);
    uint8_t window = fz_u8(&in);
    size_t script_len = (size_t)fz_u8(&in) * 3;
    uint64_t params[8];
    for (int i = 0; i < 8; i++)
        params[i] = fz_bytes_u64(&in, 8);
    if (script_len > in.n)
        script_len = in.n;
    const uint8_t *script = in.p;
    in.p += script_len;
    in.n -= script_len;

    /* The descriptor with quirks toggled by the input: how a walk ends differs between them. */
    dt_pti_descriptor desc = *chosen;
    desc.quirks ^= (flags & 0x8 ? DT_PTI_QUIRK_NULL_RECORD_ENDS : 0) |
                   (flags & 0x10 ? DT_PTI_QUIRK_ANY_ERROR_ENDS : 0) | (flags & 0x20 ? DT_PTI_QUIRK_STRICT_RECORDS : 0);
    size_t tail = in.n < sizeof input_tail - 1 ? in.n : sizeof input_tail - 1;
    memcpy(input_tail, in.p + in.n - tail, tail);
    input_tail[tail] = '\0';

    devtrace_error err;
    dt_session *s = dt_session_new_offline("fuzz", "fuzz", "cuda_runtime", &err);
    if (!s)
        abort();
    static dt_pti_decoder d; /* large (the cbid name cache): not on the stack */
    dt_pti_decoder_init(&d, &desc, s, version, fuzz_next);
    it.d = &d;
    it.hostile = (flags & 0x4) != 0;
    it.script = script;
    it.script_len = script_len;
    it.pos = 0;

    uint8_t *buf = malloc(in.n ? in.n : 1); /* exactly the valid bytes: reads past them are reported */
    if (!buf)
        abort();
    memcpy(buf, in.p, in.n);
    /* The engine steps over a kind by its layout's size once the iterator's step matched it,
     * without calling the iterator, so the honest iterator's records are patched beforehand
     * along its stride. A hostile iterator hands out records anywhere: with it the engine is
     * kept on the iterator (iterator_only), so that only records it handed out (and patched)
     * are read. Window bit 1 keeps an honest walk on the iterator too. */
    d.iterator_only = it.hostile || (window & 2);
    if (walks_by_sizes(&desc) || !it.hostile) {
        for (size_t off = 0; off + 4 <= in.n;) {
            uint32_t kind, rec_size;
            memcpy(&kind, buf + off, 4);
            if (!(rec_size = vendor_size(kind)))
                break;
            patch_pointers(buf + off, in.n - off);
            off += rec_size;
        }
    }
    dt_pti_walk_counts c;
    dt_pti_walk_buffer(&d, buf, in.n, (dt_pti_walk_mode)((flags & 3) % 3), &c);
    if (c.emitted > c.records || s->stats.malformed_records != c.malformed || s->stats.zero_timestamp != c.zero_time)
        abort(); /* the walk's counts and the session's must agree */

    /* Clock samples and a window from the input, then the whole drain and the JSON writer. */
    for (int i = 0; i < ((flags >> 6) & 3); i++)
        dt_add_clock_sample(s, params[2 * i], params[2 * i + 1]);
    if (window & 1)
        dt_set_window(s, params[6], params[7]);
    fz_check_trace(s);
    free(buf);
    devtrace_close(s);
    return 0;
}
