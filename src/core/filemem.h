/* filemem.h: large memory, and memory kept out of the process's resident set.
 *
 * dt_bigmem is the core's memory for arrays that grow with the event count (finalise's
 * pointer array, correlation map and sort arrays; a writer's per-event facts): a zeroed
 * mapping where huge pages may back it when large, calloc's when small, and, once the
 * process has opened its file memory (dt_filemem_open: devtrace record and convert do, at
 * the end of a run), pages of an unnamed file mapped shared.
 *
 * File memory lets a process hold more events than it keeps resident: the pages are the
 * page cache's, which the kernel can write out and reclaim, and the loops that walk them
 * (dt_filemem_every) and a trimmer thread (dt_filemem_trimmer_start) take them out of the
 * process's resident set whenever they pass a bound (24 MiB by default), so that its peak
 * resident memory stays flat however many events the run had (docs/reliability.md, "Scale
 * of a long run"). A page taken out is read back from the page cache (or the file) at its
 * next touch; nothing is lost. */
#ifndef DT_FILEMEM_H
#define DT_FILEMEM_H

#include <stddef.h>
#include <stdint.h>

/* The file memory's resident pages above which they are all taken out, by default. */
#define DT_FILEMEM_RESIDENT_MAX (24u << 20)

/* Opens the process's file memory: an unnamed file (O_TMPFILE) in folder dir, whose pages
 * are trimmed out of the resident set when more than resident_max bytes of them are
 * resident (0: DT_FILEMEM_RESIDENT_MAX). Once per process (a second call with it open
 * returns 0). 0, or -1 (errno: a file system without unnamed files, say; memory then stays
 * anonymous). */
int dt_filemem_open(const char *dir, uint64_t resident_max);
/* Whether it is open. */
int dt_filemem_on(void);
/* Zeroed room for bytes in the file, mapped shared, page-aligned; its blocks are reserved
 * first (a full disk gives NULL, never a SIGBUS at a later write). NULL when the file
 * memory is not open or the room cannot be had. */
void *dt_filemem_alloc(size_t bytes);
/* Gives back room dt_filemem_alloc gave (its blocks leave the file). */
void dt_filemem_free(void *p, size_t bytes);
/* Takes every page of the file memory out of the process's resident set now. */
void dt_filemem_trim(void);
/* Trims when the file memory's resident pages have passed the bound (one read of
 * /proc/self/statm; nothing when the file memory is not open). The loops that walk
 * file memory call it every DT_FILEMEM_EVERY items (dt_filemem_every), so that the bound
 * holds however the threads are scheduled; the trimmer thread covers the rest. */
void dt_filemem_check(void);
#define DT_FILEMEM_EVERY 1024u
static inline void dt_filemem_every(size_t i)
{
    if ((i & (DT_FILEMEM_EVERY - 1)) == DT_FILEMEM_EVERY - 1)
        dt_filemem_check();
}
/* Loops that read and then write items of file memory in address order call this with
 * each: when p leaves the pages it mapped last (per thread), the next 256 KiB from p's page
 * are mapped for writing in one call (MADV_POPULATE_WRITE). A page of a shared file mapping
 * read first and written after otherwise takes two faults (the read maps it read-only so
 * that the kernel sees the write), and ext4 does work for each. Off file memory, the first
 * call makes every later one return at once. */
void dt_filemem_populate_from(const void *p);
extern _Thread_local uintptr_t dt_filemem_mapped_lo, dt_filemem_mapped_hi;
static inline void dt_filemem_will_write(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    if (__builtin_expect(a - dt_filemem_mapped_lo < dt_filemem_mapped_hi - dt_filemem_mapped_lo, 1))
        return;
    dt_filemem_populate_from(p);
}
/* The trimmer: a thread that runs dt_filemem_check every millisecond or so. Start once the
 * file memory is open; stop when the work is done (a destructor stops it at exit too). */
void dt_filemem_trimmer_start(void);
void dt_filemem_trimmer_stop(void);
/* How many times it trimmed (for the recorder's figures and tests). */
uint64_t dt_filemem_trims(void);

/* Large zeroed memory (see above). */
typedef struct dt_bigmem {
    void *mem;    /* owned */
    size_t bytes; /* of the mapping; 0 when mem came from calloc */
    int in_file;  /* from dt_filemem_alloc */
} dt_bigmem;
/* Zeroed room for bytes: file memory when it is open, else a mapping (from 8 MiB) or
 * calloc's. NULL when out of memory. */
void *dt_bigmem_alloc(dt_bigmem *m, size_t bytes);
/* A zeroed anonymous mapping of len bytes (a multiple of 2 MiB), 2 MiB-aligned, asked to be
 * transparent huge pages (MADV_HUGEPAGE); NULL when out of memory. */
void *dt_huge_map(size_t len);
/* Whether transparent huge pages are on ("always" or "madvise" chosen in sysfs). */
int dt_thp_enabled(void);
/* Frees it; safe on a zeroed or freed dt_bigmem. */
void dt_bigmem_free(dt_bigmem *m);

#endif
