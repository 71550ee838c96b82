/* layout_check.h: the checks the layout tests make (test_cupti_layout.c, test_mspti_layout.c):
 * a record mirror of ours against the struct a vendor's header declares (its size, the
 * offset of each field, and its width where asked) and our numbers against the header's,
 * each one counted in layout_checks for the line the test prints at the end.
 *  - ASSERT_SAME_*: a _Static_assert, for what is known at compile time: a mismatch fails
 *    the test's build, so the suite.
 *  - CHECK_SAME_*: checked at run time (also what a descriptor's tables hold): a mismatch is
 *    told on stderr ("FAIL: what: ours N, <LAYOUT_THEIRS> M") and counted in layout_failures.
 * Include it once, in the test's main file; LAYOUT_THEIRS names the headers in a failure. */
#ifndef DT_TEST_LAYOUT_CHECK_H
#define DT_TEST_LAYOUT_CHECK_H

#include <stddef.h>
#include <stdio.h>

#ifndef LAYOUT_THEIRS
#define LAYOUT_THEIRS "the header's"
#endif

static int layout_checks, layout_failures;

#define LAYOUT_FIELD_SIZE(T, f) sizeof(((T *)0)->f)

/* The mirror's field sits where the header's does, with the same width (2 checks). */
#define ASSERT_SAME_FIELD(ours, of, theirs, tf)                                                                  \
    _Static_assert(offsetof(ours, of) == offsetof(theirs, tf), #ours "." #of " vs " #theirs "." #tf ": offset"); \
    _Static_assert(LAYOUT_FIELD_SIZE(ours, of) == LAYOUT_FIELD_SIZE(theirs, tf),                                 \
                   #ours "." #of " vs " #theirs "." #tf ": width");                                              \
    layout_checks += 2
#define ASSERT_SAME_SIZE(ours, theirs)                                                     \
    _Static_assert(sizeof(ours) == sizeof(theirs), "sizeof " #ours " vs sizeof " #theirs); \
    layout_checks++
#define ASSERT_SAME_VALUE(ours, theirs)                                                     \
    _Static_assert((long long)(ours) == (long long)(theirs), #ours " must equal " #theirs); \
    layout_checks++

/* One fact checked at run time: ours and theirs (the header's) must be equal. */
static inline void layout_same(const char *what, size_t ours, size_t theirs)
{
    layout_checks++;
    if (ours != theirs) {
        layout_failures++;
        fprintf(stderr, "FAIL: %s: ours %zu, " LAYOUT_THEIRS " %zu\n", what, ours, theirs);
    }
}

#define CHECK_SAME_SIZE(ours, theirs) layout_same("sizeof " #theirs, sizeof(ours), sizeof(theirs))
#define CHECK_SAME_OFFSET(ours, of, theirs, tf) layout_same(#theirs "." #tf, offsetof(ours, of), offsetof(theirs, tf))
#define CHECK_SAME_VALUE(ours, theirs) layout_same(#theirs, (size_t)(ours), (size_t)(theirs))

#endif
