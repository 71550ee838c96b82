/* tls.h: thread-local variables on the hot paths. */
#ifndef DT_TLS_H
#define DT_TLS_H

/* Thread-local variables in the shared library. There every access to a thread-local is a
 * call to __tls_get_addr (the general-dynamic model: a library that may be dlopen'd cannot
 * use initial-exec, whose static TLS block must then hold all of the library's 11 KB of
 * thread-locals, more than glibc keeps for dlopen: "cannot allocate memory in static TLS
 * block"), and GCC repeats the call rather than keep an address in a register: 12 calls per
 * traced ROCtracer call were counted, 13 ns of the 58 it cost. The callbacks take each
 * thread-local's address once (DT_TLS_SELF) and keep it. */

/* The address of a thread-local variable, taken once: the empty asm hides where the
 * pointer came from, so that the compiler keeps it instead of asking again. */
static inline void *dt_tls_pin(void *p)
{
    __asm__("" : "+r"(p));
    return p;
}
#define DT_TLS_SELF(var) ((__typeof__(var) *)dt_tls_pin(&(var)))

#endif
