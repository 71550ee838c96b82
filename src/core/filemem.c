/* filemem.c: large memory, and memory kept out of the resident set (filemem.h). */
#include "filemem.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGE 4096u
/* Room up to a piece's size comes out of shared segments (one mapping for many event
 * chunks: a trim is then one madvise a segment, not one a chunk); larger room is a mapping
 * of its own. */
#define SEGMENT_BYTES (64u << 20)
#define PIECE_MAX (4u << 20)

typedef struct mapping {
    char *at;
    size_t bytes;
    uint64_t offset; /* in the file */
} mapping;

static struct {
    pthread_mutex_t lock;
    int fd; /* -1: not open */
    _Atomic int on;
    int statm;             /* /proc/self/statm, -1: not open */
    uint64_t base;         /* the resident shared pages when the file memory opened (libraries'): not ours */
    uint64_t resident_max; /* the bound on the file memory's resident pages (dt_filemem_open) */
    uint64_t size;
    mapping *maps; /* every mapping made: segments and large room (owned) */
    size_t nmaps, cap;
    mapping segment; /* the segment pieces come from; at == NULL: none */
    size_t segment_used;
    _Atomic uint64_t trims;
    /* the trimmer */
    pthread_t thread;
    int running;
    _Atomic int stop;
} fm = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1, .statm = -1};

static uint64_t resident_shared(int fd);

int dt_filemem_open(const char *dir, uint64_t resident_max)
{
    pthread_mutex_lock(&fm.lock);
    fm.resident_max = resident_max ? resident_max : DT_FILEMEM_RESIDENT_MAX;
    int rc = 0;
    if (fm.fd < 0) {
        fm.fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        rc = fm.fd < 0 ? -1 : 0;
        if (rc == 0) {
            fm.statm = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
            fm.base = resident_shared(fm.statm);
            atomic_store(&fm.on, 1);
        }
    }
    pthread_mutex_unlock(&fm.lock);
    return rc;
}

int dt_filemem_on(void)
{
    pthread_mutex_lock(&fm.lock);
    int on = fm.fd >= 0;
    pthread_mutex_unlock(&fm.lock);
    return on;
}

/* A new mapping of bytes at the file's end, its blocks reserved, listed for trims (under
 * the lock); 0 or -1. */
static int map_new(size_t bytes, mapping *out)
{
    if (fm.fd < 0 || fallocate(fm.fd, 0, (off_t)fm.size, (off_t)bytes) != 0)
        return -1;
    mapping m = {mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fm.fd, (off_t)fm.size), bytes, fm.size};
    if (m.at == MAP_FAILED) {
        fallocate(fm.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)fm.size, (off_t)bytes);
        return -1;
    }
    if (fm.nmaps == fm.cap) {
        size_t cap = fm.cap ? 2 * fm.cap : 64;
        mapping *grown = realloc(fm.maps, cap * sizeof *grown);
        if (!grown) {
            munmap(m.at, bytes);
            fallocate(fm.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)fm.size, (off_t)bytes);
            return -1;
        }
        fm.maps = grown;
        fm.cap = cap;
    }
    fm.maps[fm.nmaps++] = m;
    fm.size += bytes;
    *out = m;
    return 0;
}

void *dt_filemem_alloc(size_t bytes)
{
    size_t len = (bytes + PAGE - 1) & ~(size_t)(PAGE - 1);
    if (!len)
        len = PAGE;
    void *p = NULL;
    pthread_mutex_lock(&fm.lock);
    if (len > PIECE_MAX) {
        mapping m;
        if (map_new(len, &m) == 0)
            p = m.at;
    } else {
        if (!fm.segment.at || fm.segment_used + len > fm.segment.bytes) {
            mapping m;
            if (map_new(SEGMENT_BYTES, &m) == 0) {
                fm.segment = m;
                fm.segment_used = 0;
            } else {
                fm.segment.at = NULL;
            }
        }
        if (fm.segment.at) {
            p = fm.segment.at + fm.segment_used;
            fm.segment_used += len;
        }
    }
    pthread_mutex_unlock(&fm.lock);
    return p;
}

void dt_filemem_free(void *p, size_t bytes)
{
    if (!p)
        return;
    size_t len = (bytes + PAGE - 1) & ~(size_t)(PAGE - 1);
    if (!len)
        len = PAGE;
    pthread_mutex_lock(&fm.lock);
    for (size_t i = 0; i < fm.nmaps; i++) {
        mapping *m = &fm.maps[i];
        if ((char *)p < m->at || (char *)p >= m->at + m->bytes)
            continue;
        uint64_t offset = m->offset + (uint64_t)((char *)p - m->at);
        if ((char *)p == m->at && len == m->bytes && m->at != fm.segment.at && len > PIECE_MAX) {
            munmap(m->at, m->bytes); /* room of its own: the mapping goes */
            *m = fm.maps[--fm.nmaps];
        } else {
            madvise(p, len, MADV_DONTNEED); /* a piece of a segment: its pages leave, the mapping stays */
        }
        fallocate(fm.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)offset, (off_t)len);
        break;
    }
    pthread_mutex_unlock(&fm.lock);
}

void dt_filemem_trim(void)
{
    pthread_mutex_lock(&fm.lock);
    for (size_t i = 0; i < fm.nmaps; i++)
        madvise(fm.maps[i].at, fm.maps[i].bytes, MADV_DONTNEED); /* shared: the data stays in the file */
    pthread_mutex_unlock(&fm.lock);
    atomic_fetch_add(&fm.trims, 1);
}

_Thread_local uintptr_t dt_filemem_mapped_lo, dt_filemem_mapped_hi;

#define POPULATE_BYTES (256u << 10)

void dt_filemem_populate_from(const void *p)
{
    if (!atomic_load_explicit(&fm.on, memory_order_acquire)) {
        dt_filemem_mapped_lo = 0; /* every address: nothing to do */
        dt_filemem_mapped_hi = UINTPTR_MAX;
        return;
    }
    uintptr_t lo = (uintptr_t)p & ~(uintptr_t)(PAGE - 1), hi = lo + POPULATE_BYTES, end = 0;
    pthread_mutex_lock(&fm.lock); /* only the file memory's own pages: never a neighbouring mapping's */
    for (size_t i = 0; i < fm.nmaps && !end; i++)
        if (lo >= (uintptr_t)fm.maps[i].at && lo < (uintptr_t)fm.maps[i].at + fm.maps[i].bytes)
            end = (uintptr_t)fm.maps[i].at + fm.maps[i].bytes;
    pthread_mutex_unlock(&fm.lock);
    dt_filemem_mapped_lo = lo;
    dt_filemem_mapped_hi = hi; /* (memory that is not file memory: nothing done for this window) */
#ifdef MADV_POPULATE_WRITE
    if (end)
        madvise((void *)lo, (hi < end ? hi : end) - lo, MADV_POPULATE_WRITE);
#endif
}

void dt_filemem_check(void)
{
    if (!atomic_load_explicit(&fm.on, memory_order_acquire) || fm.statm < 0)
        return;
    uint64_t now = resident_shared(fm.statm);
    if (now > fm.base + fm.resident_max)
        dt_filemem_trim();
}

uint64_t dt_filemem_trims(void)
{
    return atomic_load(&fm.trims);
}

/* The process's resident shared pages (file and shared memory): /proc/self/statm's third
 * field, in bytes; 0 when it cannot be read. */
static uint64_t resident_shared(int fd)
{
    char buf[256];
    ssize_t n = fd >= 0 ? pread(fd, buf, sizeof buf - 1, 0) : -1;
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    unsigned long size, resident, shared;
    if (sscanf(buf, "%lu %lu %lu", &size, &resident, &shared) != 3)
        return 0;
    return (uint64_t)shared * (uint64_t)sysconf(_SC_PAGESIZE);
}

static void *trimmer_main(void *arg)
{
    (void)arg;
    const struct timespec tick = {0, 1000000};
    while (!atomic_load(&fm.stop)) {
        nanosleep(&tick, NULL);
        dt_filemem_check();
    }
    return NULL;
}

void dt_filemem_trimmer_start(void)
{
    pthread_mutex_lock(&fm.lock);
    if (!fm.running && fm.fd >= 0) {
        atomic_store(&fm.stop, 0);
        fm.running = pthread_create(&fm.thread, NULL, trimmer_main, NULL) == 0;
    }
    pthread_mutex_unlock(&fm.lock);
}

void dt_filemem_trimmer_stop(void)
{
    pthread_mutex_lock(&fm.lock);
    int running = fm.running;
    fm.running = 0;
    pthread_mutex_unlock(&fm.lock);
    if (!running)
        return;
    atomic_store(&fm.stop, 1);
    pthread_join(fm.thread, NULL);
}

__attribute__((destructor)) static void trimmer_stop_at_exit(void)
{
    dt_filemem_trimmer_stop(); /* no thread of devtrace's runs on into the exit's own work */
}

/* ---- dt_bigmem ----
 *
 * Large anonymous arrays are zeroed mappings where huge pages may back them: one page
 * fault per 2 MiB instead of one per 4 KiB (about 2 us each on these VMs: 30 k faults,
 * half of finalise's time at 1 M events, went to first touches of these arrays). */
#define BIG_HUGE (2u << 20)
#define FILE_MIN (256u << 10) /* smaller arrays stay calloc's, file memory or not */

void *dt_bigmem_alloc(dt_bigmem *m, size_t bytes)
{
    memset(m, 0, sizeof *m);
    if (bytes >= FILE_MIN && (m->mem = dt_filemem_alloc(bytes)) != NULL) {
        m->bytes = bytes;
        m->in_file = 1;
        return m->mem;
    }
    if (bytes < 4 * (size_t)BIG_HUGE) {
        m->mem = calloc(1, bytes ? bytes : 1);
        return m->mem;
    }
    size_t len = (bytes + BIG_HUGE - 1) & ~(size_t)(BIG_HUGE - 1);
    char *start = dt_huge_map(len);
    if (!start)
        return NULL;
    m->mem = start;
    m->bytes = len;
    return start;
}

void *dt_huge_map(size_t len)
{
    size_t over = len + BIG_HUGE;
    char *p = mmap(NULL, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    char *start = (char *)(((uintptr_t)p + BIG_HUGE - 1) & ~(uintptr_t)(BIG_HUGE - 1));
    if (start > p)
        munmap(p, (size_t)(start - p));
    if (p + over > start + len)
        munmap(start + len, (size_t)(p + over - (start + len)));
#ifdef MADV_HUGEPAGE
    madvise(start, len, MADV_HUGEPAGE); /* a hint: 4 KiB pages work too */
#endif
    return start;
}

int dt_thp_enabled(void)
{
    char line[128] = "";
    FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");
    if (!f)
        return 0;
    int got = fgets(line, sizeof line, f) != NULL;
    fclose(f);
    return got && (strstr(line, "[always]") || strstr(line, "[madvise]"));
}

void dt_bigmem_free(dt_bigmem *m)
{
    if (m->in_file)
        dt_filemem_free(m->mem, m->bytes);
    else if (m->bytes)
        munmap(m->mem, m->bytes);
    else
        free(m->mem);
    memset(m, 0, sizeof *m);
}
