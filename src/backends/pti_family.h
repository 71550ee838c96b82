/* pti_family.h: the PTI-family engine: the one engine behind every CUPTI-shaped vendor
 * tracing API (NVIDIA CUPTI, Alibaba PPU HGPTI, Iluvatar CoreX, MetaX MCPTI, Moore Threads
 * MUPTI, Huawei MSPTI, ...), parameterised by a const descriptor per vendor.
 *
 * A descriptor says where the library is (names, override and SDK variables, the
 * process itself), how its functions are spelled (symbol prefixes tried in order),
 * which are required, its numbers (activity kinds, result codes, CUSTOM0), its record
 * layouts (a decoder per kind and library version, chosen from the version the library
 * reports at run time), its callback-id names and its quirks. The vendor files
 * (cupti.c, ppu.c, iluvatar.c) are tables and one DT_PTI_BACKEND line each.
 *
 * Process model: the vendor's buffer callbacks carry no user pointer and cannot be
 * unregistered, so one engine binds one vendor library per process and registers its
 * callbacks once; the session that is open finds its state through a static pointer,
 * guarded so that close waits for callbacks in flight. Buffers come from a bounded
 * pool the engine owns. Decoding (the completion callback) allocates nothing, takes no
 * global lock and formats no text. */
#ifndef DT_PTI_FAMILY_H
#define DT_PTI_FAMILY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "backend.h"
#include "core/session.h"

#define DT_PTI_MAX_NAMES 8     /* entries in each name list of a descriptor (NULL-terminated) */
#define DT_PTI_MAX_KIND 64     /* vendor activity kinds 0..63 can have a decoder */
#define DT_PTI_CBID_CACHE 4096 /* runtime callback ids whose interned name is cached */
#define DT_PTI_MAX_ENABLED 12
#define DT_PTI_MAX_MORE_KINDS 8 /* further kinds a descriptor enables (dt_pti_more_kind) */
#define DT_PTI_MAX_HINTS 4
#define DT_PTI_SCAN_STATS 12 /* counters a descriptor's scanner may keep in the decoder */
#define DT_PTI_SKIP_KINDS 8  /* kinds without a layout whose record size is learned */

/* The vendor functions the engine binds, spelled <prefix><suffix> (cuptiActivityEnable). */
#define DT_PTI_FN_MAP(X)                                  \
    X(GET_VERSION, "GetVersion")                          \
    X(GET_RESULT_STRING, "GetResultString")               \
    X(GET_ERROR_MESSAGE, "GetErrorMessage")               \
    X(REGISTER_CALLBACKS, "ActivityRegisterCallbacks")    \
    X(ENABLE, "ActivityEnable")                           \
    X(DISABLE, "ActivityDisable")                         \
    X(GET_NEXT_RECORD, "ActivityGetNextRecord")           \
    X(FLUSH_ALL, "ActivityFlushAll")                      \
    X(GET_DROPPED, "ActivityGetNumDroppedRecords")        \
    X(PUSH_EXTERNAL, "ActivityPushExternalCorrelationId") \
    X(POP_EXTERNAL, "ActivityPopExternalCorrelationId")   \
    X(GET_TIMESTAMP, "GetTimestamp")                      \
    X(SUBSCRIBE, "Subscribe")                             \
    X(UNSUBSCRIBE, "Unsubscribe")                         \
    X(INIT, "Init")

typedef enum dt_pti_fn {
#define DT_PTI__FN_ENUM(id, suffix) DT_PTI_##id,
    DT_PTI_FN_MAP(DT_PTI__FN_ENUM)
#undef DT_PTI__FN_ENUM
        DT_PTI_FN_COUNT
} dt_pti_fn;

#define DT_PTI_BIT(fn) (1u << (DT_PTI_##fn))
/* What every CUPTI-shaped library must have for the engine to trace at all. */
#define DT_PTI_REQUIRED_DEFAULT                                                                                \
    (DT_PTI_BIT(REGISTER_CALLBACKS) | DT_PTI_BIT(ENABLE) | DT_PTI_BIT(DISABLE) | DT_PTI_BIT(GET_NEXT_RECORD) | \
     DT_PTI_BIT(FLUSH_ALL))

/* Quirks, each with the vendor and what was observed next to the descriptor that sets it. */
#define DT_PTI_QUIRK_KERNEL_EXCLUSIVE 0x001u    /* KERNEL and CONCURRENT_KERNEL exclusive: one only */
#define DT_PTI_QUIRK_NULL_RECORD_ENDS 0x002u    /* GetNextRecord: success with a NULL record = end */
#define DT_PTI_QUIRK_ANY_ERROR_ENDS 0x004u      /* MAX_LIMIT code unknown: any error = end */
#define DT_PTI_QUIRK_VENDOR_CLOCK 0x008u        /* timestamps in a device clock (epoch and rate) */
#define DT_PTI_QUIRK_COMPLETE_NO_CONTEXT 0x010u /* completion callback (buf, size, valid) */
#define DT_PTI_QUIRK_DROPPED_NO_CONTEXT 0x020u  /* GetNumDroppedRecords(size_t *) */
#define DT_PTI_QUIRK_STRICT_RECORDS 0x040u      /* reject device records with correlation 0 */
#define DT_PTI_QUIRK_FLUSH_NO_FLAG 0x080u       /* ActivityFlushAll(void): no flag argument */
#define DT_PTI_QUIRK_TIMESTAMP_VALUE 0x100u     /* uint64_t GetTimestamp(void): the value, no result */
#define DT_PTI_QUIRK_INIT_FIRST 0x200u          /* <prefix>Init(void) before any other call (required) */

/* Vendor activity kind numbers (0 = the vendor has none). */
typedef struct dt_pti_kinds {
    uint32_t memcpy, memset, kernel, concurrent_kernel, runtime, external_correlation;
} dt_pti_kinds;

/* A further activity kind enabled with the runtime kind at start (MSPTI's API record
 * levels: ACL_API, NODE_API, RUNTIME_API), named for messages. An optional kind may be
 * refused by some library versions: that is noted, never a failure. */
typedef struct dt_pti_more_kind {
    uint32_t kind; /* 0 ends the list */
    const char *name;
    int optional;
    int fallback; /* 1: enabled only when the entry before it could not be (the same records in another form) */
} dt_pti_more_kind;

/* A vendor result code whose fix is known: told with the error wherever it appears. */
typedef struct dt_pti_result_hint {
    int result; /* 0 ends the list (success needs no hint) */
    const char *fix;
} dt_pti_result_hint;

/* Vendor result codes the engine acts on (success is 0 for every vendor seen). */
typedef struct dt_pti_results {
    int success;
    int max_limit_reached;    /* GetNextRecord: no more records */
    int not_compatible;       /* Enable: kind not compatible with one already on */
    int multiple_subscribers; /* Subscribe: another subscriber holds the callback API */
} dt_pti_results;

/* What a record decoder says about one record. */
typedef enum dt_pti_decoded {
    DT_PTI_EMIT = 0,      /* *out is an event */
    DT_PTI_IGNORED = 1,   /* a valid record that is not ours (another tool's external kind) */
    DT_PTI_ZERO_TIME = 2, /* start == end == 0: timing not collected */
    DT_PTI_MALFORMED = 3  /* fields do not validate */
} dt_pti_decoded;

typedef struct dt_pti_decoder dt_pti_decoder;
typedef struct dt_pti_name_cache dt_pti_name_cache;
typedef struct dt_pti_layout dt_pti_layout;
/* Decodes one record (at least its layout's read_size bytes, any alignment) into *out with
 * the decoder the layout's id names; a string the record points to goes through
 * dt_pti_vendor_string_cached(d, nc, p) (pti_decode.h), nc the walk's name cache (NULL
 * outside a walk). The engine's is dt_pti_decode_record; a vendor with decoders of its own
 * gives its dispatch over its ids as the descriptor's vendor_decode. */
typedef dt_pti_decoded (*dt_pti_decode_record_fn)(const dt_pti_layout *l, dt_pti_decoder *d, const uint8_t *rec,
                                                  devtrace_event *out, dt_pti_name_cache *nc);

/* Which decoder reads a layout's records. The engine's own, for the CUDA-shaped records
 * (CUPTI's, and the vendors that write CUPTI's shapes), are inline in the walks
 * (pti_decode.h); an id from DT_PTI_DECODE_VENDOR on names one of the vendor's own
 * decoders, in the vendor's files (mspti.c), reached through the descriptor's
 * vendor_decode. */
typedef enum dt_pti_decode_id {
    DT_PTI_DECODE_CUPTI_KERNEL = 1, /* dt_cupti_kernel_prefix: launch, registers, shared memory, queued */
    DT_PTI_DECODE_CUPTI_MEMCPY = 2, /* dt_cupti_memcpy_prefix */
    DT_PTI_DECODE_CUPTI_MEMSET = 3, /* dt_cupti_memset4 */
    DT_PTI_DECODE_CUPTI_API = 4,    /* dt_cupti_api: runtime kind only, named by cbid */
    DT_PTI_DECODE_CUPTI_EXTERNAL = 5,
    DT_PTI_DECODE_VENDOR = 16 /* and up: the vendor's ids, decoded by the descriptor's vendor_decode */
} dt_pti_decode_id;

/* One record layout: kind, the library versions that write it, and its decoder. */
struct dt_pti_layout {
    uint32_t kind;        /* vendor kind number */
    uint32_t min_version; /* GetVersion range, inclusive */
    uint32_t max_version;
    uint32_t size;      /* the vendor's whole record, bytes */
    uint32_t read_size; /* the bytes the decoder reads (a common prefix) */
    uint16_t dt_kind;   /* devtrace_kind of the events it makes */
    uint16_t decoder;   /* a dt_pti_decode_id, or a vendor's own id from DT_PTI_DECODE_VENDOR on */
    const char *name;   /* the vendor's struct name, for notes */
};
/* The layout of a record the same in every library version and read whole: its vendor kind,
 * our mirror of it, the devtrace_kind it makes, its decoder and the vendor's struct name. */
#define DT_PTI_LAYOUT_WHOLE(kind, mirror, dt_kind, decoder, name)                           \
    {                                                                                       \
        (kind), 0, UINT32_MAX, sizeof(mirror), sizeof(mirror), (dt_kind), (decoder), (name) \
    }

/* Where one of a vendor's decoders reads pointers (the strings it follows: names): record
 * offsets, 0 ends the list (the kind is at 0). */
typedef struct dt_pti_pointer_fields {
    uint16_t at[3];
} dt_pti_pointer_fields;

typedef struct dt_pti_cbid_name {
    uint32_t cbid;
    const char *name;
} dt_pti_cbid_name;

/* GetNextRecord's shape (CUPTI, MCPTI, MSPTI alike). */
typedef int (*dt_pti_next_fn)(uint8_t *buffer, size_t valid_size, void **record);

typedef struct dt_pti_walk_counts dt_pti_walk_counts;
typedef enum dt_pti_walk_mode {
    DT_PTI_WALK_DECODE = 0,        /* decode and store events */
    DT_PTI_WALK_OUT_OF_WINDOW = 1, /* count records as out_of_window per kind */
    DT_PTI_WALK_POOL_FULL = 2      /* count records as dropped_pool_full */
} dt_pti_walk_mode;
/* A vendor's own buffer scanner, for iterators that cannot be trusted (MCPTI on MACA 3.8
 * repeats a stale pointer after external-correlation records): walks the valid bytes
 * itself, handing each candidate record to dt_pti_take_record. */
typedef void (*dt_pti_scan_fn)(dt_pti_decoder *d, uint8_t *buf, size_t valid_size, dt_pti_walk_mode mode,
                               dt_pti_walk_counts *counts);

typedef struct dt_pti_descriptor {
    const char *name;       /* backend name, "cupti": in messages */
    const char *vendor_api; /* "CUPTI" */
    /* Finding the library, in this order: override_env (a path, alone); a copy the
     * process already loaded (system_names, RTLD_NOLOAD); each root from sdk_env, then
     * sdk_default_roots, joined with each of sdk_subdirs and library_names; the loader's
     * own search for system_names; the process itself when search_process (its global
     * symbols, e.g. a program linked with the library). */
    const char *override_env;
    const char *library_names[DT_PTI_MAX_NAMES];
    const char *sdk_env[DT_PTI_MAX_NAMES];
    const char *sdk_default_roots[DT_PTI_MAX_NAMES];
    const char *sdk_subdirs[DT_PTI_MAX_NAMES];
    const char *system_names[DT_PTI_MAX_NAMES];
    int search_process;
    /* Symbols: each function is tried as prefix + suffix for each prefix, in order. */
    const char *symbol_prefixes[DT_PTI_MAX_NAMES];
    unsigned required; /* DT_PTI_BIT(...) */
    /* Numbers. */
    dt_pti_kinds kinds;
    dt_pti_results results;
    uint32_t external_kind_custom0;
    /* Buffer requests may be refused (size 0) only by libraries reporting at least this
     * version; older ones crash on a refusal. UINT32_MAX: never refuse. */
    uint32_t refuse_from_version;
    const dt_pti_layout *layouts;
    size_t nlayouts;
    /* The vendor's own decoders, for the layouts with ids from DT_PTI_DECODE_VENDOR on (its
     * dispatch over those ids); NULL: such layouts are not used. */
    dt_pti_decode_record_fn vendor_decode;
    /* Its decoders' pointer fields, indexed by id - DT_PTI_DECODE_VENDOR (the engine knows its
     * own): what a fuzz target that walks any descriptor's records points at strings
     * (tests/fuzz/fuzz_pti_decode.c); a decoder not listed reads no pointer. */
    const dt_pti_pointer_fields *vendor_pointers;
    size_t nvendor_pointers;
    /* The vendor's memcpy kind -> devtrace_memcpy_dir (out of range: UNKNOWN). */
    const uint8_t *copy_kinds;
    size_t ncopy_kinds;
    /* Runtime callback-id names, sorted by cbid; unknown ids are named
     * "<unknown_runtime_prefix>#<cbid>" and counted in unresolved_names. */
    const dt_pti_cbid_name *runtime_names;
    size_t nruntime_names;
    const char *unknown_runtime_prefix;
    /* Device properties: the vendor runtime's attribute query with CUDA attribute
     * numbers (cudaDeviceGetAttribute(int *value, int attr, int device)) and device
     * count, found in the process: dlsym(RTLD_DEFAULT), then runtime_libraries already
     * loaded (RTLD_NOLOAD), then the tracing library itself. */
    const char *attribute_fn[DT_PTI_MAX_NAMES];
    const char *device_count_fn[DT_PTI_MAX_NAMES];
    const char *runtime_libraries[DT_PTI_MAX_NAMES];
    const char *device_name_prefix; /* "CUDA device" -> "CUDA device 0" */
    unsigned quirks;                /* DT_PTI_QUIRK_* */
    dt_pti_scan_fn scan;            /* NULL: the engine's walks (dt_pti_walk_buffer) */
    /* The kind enabled (then disabled) to check that the library can trace here, at
     * probe and open; 0: external_correlation (else memcpy). A vendor whose library
     * refuses some kinds under a condition (MSPTI: memcpy without LD_PRELOAD) names
     * such a kind, so that the condition is found before a session starts. */
    uint32_t usable_check_kind;
    dt_pti_more_kind more_kinds[DT_PTI_MAX_MORE_KINDS]; /* enabled after runtime at start */
    dt_pti_result_hint result_hints[DT_PTI_MAX_HINTS];  /* appended to messages with that code */
    const char *facts_note; /* told in every session: what this vendor never collects; or NULL */
    /* The vendor's callback-id name resolver, <prefix><api_name_suffix>(api_name_arg, cbid,
     * const char **name) (MCPTI: ActivityGetApiName(RUNTIME kind, ...); CUPTI-shaped
     * GetCallbackName(domain, ...)): called for every runtime cbid seen, after the final
     * flush and disable at stop, never from a buffer callback (MACA 3.8 deadlocks there).
     * What it names replaces the table's name (or the "<prefix>#<cbid>" placeholder) on
     * the session's stored events. NULL: the table's names stand. */
    const char *api_name_suffix;
    uint32_t api_name_arg;
    /* Called at the end of stop (after the final flush and the names): a vendor scanner
     * tells what it did (dt_add_note) from the decoder's scan_stats. Not called in replay,
     * whose notes are the captured session's. */
    void (*finish)(dt_pti_decoder *d);
} dt_pti_descriptor;

/* Decoding state: separate from binding so that tests (and replay) decode buffers
 * with any iterator. */
struct dt_pti_decoder {
    const dt_pti_descriptor *desc; /* borrowed */
    dt_session *s;                 /* borrowed */
    uint32_t version;              /* what the library reported */
    dt_pti_next_fn next;           /* the vendor's GetNextRecord */
    const dt_pti_layout *by_kind[DT_PTI_MAX_KIND];
    uint32_t check_size[DT_PTI_MAX_KIND]; /* bytes a record of that kind must have left */
    int prefix_only;                      /* some kind decoded by its common prefix only */
    uint32_t unnamed_kernel_id;
    _Atomic uint32_t cbid_name[DT_PTI_CBID_CACHE];            /* interned name per runtime cbid; 0 = not yet */
    _Atomic uint32_t cbid_unresolved[DT_PTI_CBID_CACHE / 32]; /* bit set: named by the placeholder */
    /* Raw capture (live): the strings records point to are saved as they are decoded. */
    struct dt_raw_writer *_Atomic raw; /* borrowed from the state; NULL: no capture */
    /* Replay: record pointers are not this process's; resolve_string gives the string a
     * pointer value pointed to when the capture was taken (NULL when unknown). */
    const char *(*resolve_string)(void *user, uint64_t pointer);
    void *resolve_user;
    /* Kinds without a layout that the vendor's iterator stepped over, as (kind << 32 | size):
     * learned live (and saved in a raw capture), used by the offline stride. 0 = empty. */
    _Atomic uint64_t skip_sizes[DT_PTI_SKIP_KINDS];
    /* The iterator's step over each kind, checked against the layout's size: once a kind's
     * step is seen to be its size (DT_PTI_STRIDE_OK), records of that kind are stepped over
     * by the size, with no call into the library; a kind whose step differs
     * (DT_PTI_STRIDE_NO) is always stepped by the library. iterator_only: never stride. */
    _Atomic uint8_t stride[DT_PTI_MAX_KIND];
    _Atomic uint32_t stride_size[DT_PTI_MAX_KIND]; /* the layout's size once DT_PTI_STRIDE_OK, else 0 */
    int iterator_only;
    /* Counters for a descriptor's scanner (its own meaning per index), read by its finish. */
    _Atomic uint64_t scan_stats[DT_PTI_SCAN_STATS];
};

enum { DT_PTI_STRIDE_UNSEEN = 0, DT_PTI_STRIDE_OK = 1, DT_PTI_STRIDE_NO = 2 };

/* Where a walk interned the name addresses it met (pti_decode.h): the first sight of an
 * address in a walk goes to the session's table (verified there), later ones of the same
 * walk are found here. Zero to start; valid for one walk of one session. */
#define DT_PTI_NAME_CACHE 64
struct dt_pti_name_cache {
    const char *ptr[DT_PTI_NAME_CACHE];
    uint32_t id[DT_PTI_NAME_CACHE];
};

/* What a walk over one buffer found. */
struct dt_pti_walk_counts {
    uint64_t records;   /* records with a known kind */
    uint64_t emitted;   /* events stored */
    uint64_t malformed; /* rejected: unknown kind, bad pointer, too short, bad fields */
    uint64_t zero_time;
    uint64_t ignored;
    dt_store_cursor cursor;  /* the walk's run in the store (zero to start) */
    dt_pti_name_cache names; /* the walk's name addresses */
};

/* Per-session state (the core allocates it zeroed: dt_backend.state_size). */
typedef struct dt_pti_state {
    dt_pti_decoder dec;
    const dt_pti_descriptor *desc;   /* borrowed */
    dt_session *s;                   /* borrowed */
    _Atomic int accepting;           /* between start and the end of stop */
    _Atomic uint64_t last_sample_ns; /* monotonic time of the last clock sample */
    int enabled[DT_PTI_MAX_ENABLED]; /* kinds enabled at start, disabled at stop */
    int nenabled;
    int devices_done;
    void *subscriber; /* the callback-API handle, or NULL */
    int attached;     /* this state is the process's active engine */
    /* Raw capture ($DEVTRACE_RAW): completed at the session's on_stop (when the window is
     * closed), or at close. */
    struct dt_raw_writer *_Atomic raw; /* owned */
    int raw_pid;                       /* the process that writes it (a forked child does not) */
    void (*prev_on_stop)(dt_session *s, void *user);
    void *prev_on_stop_user;
} dt_pti_state;

/* ---- the dt_backend functions ---- */
int dt_pti_probe(const dt_pti_descriptor *d, char *why, size_t whylen);
int dt_pti_open(const dt_pti_descriptor *d, dt_session *s, void *state, devtrace_error *err);
int dt_pti_start(dt_session *s, void *state);
int dt_pti_stop(dt_session *s, void *state);
int dt_pti_push_external(void *state, uint64_t id);
int dt_pti_pop_external(void *state, uint64_t *id);
int dt_pti_push_user_external(void *state, uint64_t id);
int dt_pti_flush(dt_session *s, void *state);
int dt_pti_pop_user_external(void *state, uint64_t *id);
void dt_pti_close(dt_session *s, void *state);

/* Which vendor functions the library the descriptor finds has (DT_PTI_BIT mask), for
 * tests and diagnostics; path gets the library's path, or why none was found. */
unsigned dt_pti_symbols_found(const dt_pti_descriptor *d, char *path, size_t pathlen);

/* The path of the library the descriptor would load, found without loading anything
 * (for the recorder, which preloads it into the program: MSPTI needs LD_PRELOAD):
 * the override variable, then the SDK roots joined with the subdirectories, then each
 * system name in $LD_LIBRARY_PATH. 0 with path set, or -1 with why (what was tried). */
int dt_pti_locate_library(const dt_pti_descriptor *d, char *path, size_t pathlen, char *why, size_t whylen);
/* Where the descriptor's search looks (devtrace_backend_info's library fields). */
void dt_pti_describe_library(const dt_pti_descriptor *d, devtrace_backend_info *info);

/* Replays a raw capture's buffers (pti_replay.c): each DT_PTI_BACKEND's raw_decoder, with
 * its descriptor as raw_tables. */
struct dt_raw_decoder;
extern const struct dt_raw_decoder dt_pti_raw_decoder;
/* The session's devices (pti_devices.c): the vendor's attribute query looked up in the
 * process, the runtime libraries and handle (the bound library, named path in the note). */
void dt_pti_read_devices(dt_pti_state *st, void *handle, const char *path);

/* Defines `const dt_backend var` for a descriptor: the rest of the initialiser is
 * given as designated fields (.name, .description, .caps, .validated, ...). */
#define DT_PTI_BACKEND(var, desc, ...)                                       \
    static int var##__probe(char *why, size_t whylen)                        \
    {                                                                        \
        return dt_pti_probe(&(desc), why, whylen);                           \
    }                                                                        \
    static int var##__locate(char *path, size_t n, char *why, size_t whyn)   \
    {                                                                        \
        return dt_pti_locate_library(&(desc), path, n, why, whyn);           \
    }                                                                        \
    static void var##__describe(devtrace_backend_info *info)                 \
    {                                                                        \
        dt_pti_describe_library(&(desc), info);                              \
    }                                                                        \
    static int var##__open(dt_session *s, void *state, devtrace_error *err)  \
    {                                                                        \
        return dt_pti_open(&(desc), s, state, err);                          \
    }                                                                        \
    const dt_backend var = {__VA_ARGS__,                                     \
                            .state_size = sizeof(dt_pti_state),              \
                            .probe = var##__probe,                           \
                            .locate_library = var##__locate,                 \
                            .describe_library = var##__describe,             \
                            .open = var##__open,                             \
                            .start = dt_pti_start,                           \
                            .stop = dt_pti_stop,                             \
                            .push_external = dt_pti_push_external,           \
                            .pop_external = dt_pti_pop_external,             \
                            .push_user_external = dt_pti_push_user_external, \
                            .pop_user_external = dt_pti_pop_user_external,   \
                            .close = dt_pti_close,                           \
                            .flush = dt_pti_flush,                           \
                            .raw_decoder = &dt_pti_raw_decoder,              \
                            .raw_tables = &(desc)}

/* While set on this thread (the vendor driver's InitializeInjection), start does not
 * call into the vendor runtime (it could re-enter the driver's initialisation); device
 * properties are then read at stop. */
void dt_pti_set_in_vendor_init(int on);

/* ---- decoding ---- */

/* Prepares d for buffers of a library reporting version; picks each kind's layout. */
void dt_pti_decoder_init(dt_pti_decoder *d, const dt_pti_descriptor *desc, dt_session *s, uint32_t version,
                         dt_pti_next_fn next);
/* Walks valid_size bytes of buf, validating every record: with the descriptor's scanner
 * when it has one; else by the layouts' record sizes offline (the stride walk: replay has
 * no iterator); else with the vendor's iterator, until each kind's step is verified. Adds
 * the loss counts to the session and fills *counts (may be NULL). */
void dt_pti_walk_buffer(dt_pti_decoder *d, uint8_t *buf, size_t valid_size, dt_pti_walk_mode mode,
                        dt_pti_walk_counts *counts);
/* One candidate record at rec with avail valid bytes from rec on: its kind looked up,
 * its size checked, then decoded and stored (or counted, per mode); counts go to *c
 * (commit them with dt_pti_commit_counts). For walkers and vendor scanners; the walkers'
 * loops use its inline body, dt_pti_take_record_inline (pti_decode.h). */
typedef enum dt_pti_taken {
    DT_PTI_TAKEN = 0,              /* a known record, handled (emitted, ignored or zero time) */
    DT_PTI_TAKEN_INVALID = 1,      /* a known kind whose fields do not validate (malformed) */
    DT_PTI_TAKEN_UNKNOWN_KIND = 2, /* malformed: no layout for this kind */
    DT_PTI_TAKEN_TRUNCATED = 3     /* malformed: fewer valid bytes than the record's size */
} dt_pti_taken;
dt_pti_taken dt_pti_take_record(dt_pti_decoder *d, const uint8_t *rec, size_t avail, dt_pti_walk_mode mode,
                                dt_pti_walk_counts *c);
/* Ends a walk: its events published in the store, its loss counts added to the session. */
void dt_pti_commit_counts(dt_pti_decoder *d, dt_pti_walk_counts *c);

/* The interned name of a runtime callback id (cached; the first sight of an unknown id
 * counts one unresolved name). */
uint32_t dt_pti_runtime_name(dt_pti_decoder *d, uint32_t cbid);
uint32_t dt_pti_runtime_name_slow(dt_pti_decoder *d, uint32_t cbid); /* the first sight of a cbid */
/* The interned id of a string a record points to (kernel and API names): saved into the
 * raw capture when one is written, resolved through the capture's strings in replay. */
uint32_t dt_pti_vendor_string(dt_pti_decoder *d, const char *p);
/* dt_pti_vendor_string for an address not in the walk's cache, which it then enters. */
uint32_t dt_pti_vendor_string_miss(dt_pti_decoder *d, dt_pti_name_cache *nc, const char *p);
/* A runtime cbid's name from the vendor's resolver (live, after the final flush) or a
 * capture's API chunk (replay): interned, and put on every stored runtime event of that
 * cbid that still carries the name it had; a placeholder it replaces is no longer
 * counted as unresolved. Call only when no buffer is being decoded. */
void dt_pti_apply_api_name(dt_pti_decoder *d, uint32_t cbid, const char *name);
/* Prepares d for decoding a raw capture's buffers offline (no library, no iterator):
 * the descriptor's scanner walks them, or the engine strides by its layout sizes. */
void dt_pti_decoder_init_offline(dt_pti_decoder *d, const dt_pti_descriptor *desc, dt_session *s, uint32_t version,
                                 const char *(*resolve_string)(void *user, uint64_t pointer), void *user);
/* The size of a record kind without a layout, as the vendor's iterator stepped over it
 * (learned live, or from a capture); 1 when it is new. 0 is returned for a size not kept. */
int dt_pti_learn_kind_size(dt_pti_decoder *d, uint32_t kind, uint32_t size);
/* The size learned for a kind without a layout (dt_pti_learn_kind_size), or 0. */
uint32_t dt_pti_learned_kind_size(dt_pti_decoder *d, uint32_t kind);

/* ---- shared tables of the CUDA-shaped vendors (pti_family.c) ---- */

/* CUPTI record layouts (CUDA 12.x and 13.0), also used by PPU and Iluvatar. The sizes
 * are part of the declarations so that descriptors can take them in initialisers. */
#define DT_PTI_CUPTI_NLAYOUTS 10
extern const dt_pti_layout dt_pti_cupti_layouts[DT_PTI_CUPTI_NLAYOUTS];
/* CUpti_ActivityMemcpyKind -> devtrace_memcpy_dir. */
#define DT_PTI_CUPTI_NCOPY_KINDS 11
extern const uint8_t dt_pti_cupti_copy_kinds[DT_PTI_CUPTI_NCOPY_KINDS];
/* CUDA runtime callback ids (cupti_runtime_cbid.h, CUDA 13.0: 1..522), sorted. */
#define DT_PTI_CUDA_NRUNTIME_NAMES 522
extern const dt_pti_cbid_name dt_pti_cuda_runtime_names[DT_PTI_CUDA_NRUNTIME_NAMES];

/* The vendors' descriptors (cupti.c, ppu.c, iluvatar.c, mspti.c), visible for tests. Each file
 * defines its own; no file uses another's. */
extern const dt_pti_descriptor dt_pti_cupti_descriptor;
extern const dt_pti_descriptor dt_pti_ppu_descriptor;
extern const dt_pti_descriptor dt_pti_iluvatar_descriptor;
extern const dt_pti_descriptor dt_pti_mspti_descriptor; /* mspti.c */

/* The descriptor fields every CUDA-shaped vendor shares (CUPTI's layouts and names). */
#define DT_PTI_CUDA_SHAPED_TABLES                                                                              \
    .layouts = dt_pti_cupti_layouts, .nlayouts = DT_PTI_CUPTI_NLAYOUTS, .copy_kinds = dt_pti_cupti_copy_kinds, \
    .ncopy_kinds = DT_PTI_CUPTI_NCOPY_KINDS, .runtime_names = dt_pti_cuda_runtime_names,                       \
    .nruntime_names = DT_PTI_CUDA_NRUNTIME_NAMES

#endif /* DT_PTI_FAMILY_H */
