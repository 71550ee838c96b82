/* exit_hook.c: the collector's last ship when the program ends with _exit (collector.h).
 * exit() runs atexit handlers, _exit() and _Exit() do not: a Python multiprocessing worker
 * (fork, forkserver) ends with os._exit, a C program may call _exit, and what the collector
 * had not shipped yet (up to DT_SHIP_AGE_MS of events) was lost. The collector is loaded
 * into the program without being first in the symbol lookup (the OpenCL loader opens it as a
 * layer), so it cannot define _exit itself: instead the slots through which the objects
 * already loaded call _exit and _Exit (their PLT/GOT entries) are pointed at dt_exit_hook,
 * which runs the final flush in the process that owns the session and then calls the real
 * one. Objects loaded later keep calling _exit directly (they lose what was not shipped, as
 * before). */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "collector.h"

#if defined(__x86_64__)
#define DT_R_JUMP_SLOT R_X86_64_JUMP_SLOT
#define DT_R_GLOB_DAT R_X86_64_GLOB_DAT
#elif defined(__aarch64__)
#define DT_R_JUMP_SLOT R_AARCH64_JUMP_SLOT
#define DT_R_GLOB_DAT R_AARCH64_GLOB_DAT
#endif

#if defined(DT_R_JUMP_SLOT) && defined(__LP64__)

typedef void (*exit_fn)(int);
static exit_fn real_exit, real_Exit; /* what the slots held */

static void run_hook(int status, exit_fn real)
{
    dt_collector_finish(); /* only in the process that owns the session: a fork or vfork child returns at once */
    real(status);
    _exit(status); /* not reached */
}

static void dt_exit_hook(int status)
{
    run_hook(status, real_exit ? real_exit : _exit);
}

static void dt_Exit_hook(int status)
{
    run_hook(status, real_Exit ? real_Exit : _exit);
}

/* A dynamic entry's address: already relocated by the loader, or relative to the object. */
static uintptr_t dyn_addr(const struct dl_phdr_info *info, ElfW(Addr) value)
{
    return value < info->dlpi_addr ? info->dlpi_addr + value : value;
}

/* Points one slot at hook (the first value seen kept in *real); a slot in the RELRO range,
 * read-only after relocation, is made writable for the store and read-only again. */
static void patch_slot(uintptr_t slot, void *hook, exit_fn *real, int in_relro)
{
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    void *start = (void *)(slot & ~(page - 1));
    void *now;
    memcpy(&now, (void *)slot, sizeof now);
    if (now == hook || mprotect(start, page, PROT_READ | PROT_WRITE) != 0)
        return;
    if (!*real)
        memcpy(real, &now, sizeof now);
    memcpy((void *)slot, &hook, sizeof hook);
    if (in_relro)
        mprotect(start, page, PROT_READ);
}

static void patch_relocations(const struct dl_phdr_info *info, const ElfW(Rela) * rela, size_t bytes,
                              const ElfW(Sym) * symtab, const char *strtab, const uintptr_t relro[2])
{
    for (size_t i = 0; i < bytes / sizeof *rela; i++) {
        unsigned long type = ELF64_R_TYPE(rela[i].r_info);
        if (type != DT_R_JUMP_SLOT && type != DT_R_GLOB_DAT)
            continue;
        const char *name = strtab + symtab[ELF64_R_SYM(rela[i].r_info)].st_name;
        int is_exit = !strcmp(name, "_exit"), is_Exit = !strcmp(name, "_Exit");
        if (!is_exit && !is_Exit)
            continue;
        uintptr_t slot = info->dlpi_addr + rela[i].r_offset;
        patch_slot(slot, is_exit ? (void *)dt_exit_hook : (void *)dt_Exit_hook, is_exit ? &real_exit : &real_Exit,
                   slot >= relro[0] && slot < relro[1]);
    }
}

static int patch_object(struct dl_phdr_info *info, size_t size, void *self)
{
    (void)size;
    const ElfW(Dyn) *dyn = NULL;
    uintptr_t relro[2] = {0, 0};
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
        else if (ph->p_type == PT_GNU_RELRO) {
            relro[0] = info->dlpi_addr + ph->p_vaddr;
            relro[1] = relro[0] + ph->p_memsz;
        }
    }
    if (!dyn || (self && info->dlpi_addr == (uintptr_t)self))
        return 0;
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const ElfW(Rela) *jmprel = NULL, *rela = NULL;
    size_t jmprel_bytes = 0, rela_bytes = 0;
    int pltrel_is_rela = 1;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        switch (dyn->d_tag) {
        case DT_SYMTAB:
            symtab = (const ElfW(Sym) *)dyn_addr(info, dyn->d_un.d_ptr);
            break;
        case DT_STRTAB:
            strtab = (const char *)dyn_addr(info, dyn->d_un.d_ptr);
            break;
        case DT_JMPREL:
            jmprel = (const ElfW(Rela) *)dyn_addr(info, dyn->d_un.d_ptr);
            break;
        case DT_PLTRELSZ:
            jmprel_bytes = dyn->d_un.d_val;
            break;
        case DT_PLTREL:
            pltrel_is_rela = dyn->d_un.d_val == DT_RELA;
            break;
        case DT_RELA:
            rela = (const ElfW(Rela) *)dyn_addr(info, dyn->d_un.d_ptr);
            break;
        case DT_RELASZ:
            rela_bytes = dyn->d_un.d_val;
            break;
        default:
            break;
        }
    }
    if (!symtab || !strtab)
        return 0;
    if (jmprel && pltrel_is_rela)
        patch_relocations(info, jmprel, jmprel_bytes, symtab, strtab, relro);
    if (rela)
        patch_relocations(info, rela, rela_bytes, symtab, strtab, relro);
    return 0;
}

void dt_exit_hook_install(void)
{
    Dl_info me;
    void *self = dladdr((void *)dt_exit_hook_install, &me) ? me.dli_fbase : NULL;
    dl_iterate_phdr(patch_object, self);
}

#else

void dt_exit_hook_install(void)
{
}

#endif
