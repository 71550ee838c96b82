/* op_window.h: a capture window chosen by an operator's name (devtrace record --capture-op):
 * it opens when the (skip+1)-th range of that name begins and closes when the
 * (skip+count)-th ends, in the session's own window (window_start, window_stop), which
 * finalise's filter applies. Ranges are devtrace_range_push/pop and the annotations
 * (devtrace_annotate_push/pop), which the PyTorch bridge's ops come through too. */
#ifndef DT_OP_WINDOW_H
#define DT_OP_WINDOW_H

#include <stdatomic.h>
#include <stdint.h>

typedef struct devtrace_session dt_session;

typedef struct dt_op_window {
    uint32_t name_id;
    uint64_t skip, count;
    _Atomic uint64_t begun, ended; /* ranges of that name so far */
} dt_op_window;

/* Arms the window on s (before devtrace_start); 0, or -1 when out of memory. */
int dt_op_window_arm(dt_session *s, const char *name, uint64_t skip, uint64_t count);
/* From range push and pop: a range named name_id begins at start_ns / ends at end_ns (host
 * realtime). 0: the range is stamped in TSC ticks (an operator observer's op), mapped to
 * realtime only at finalise: the window takes the realtime clock now, widened by
 * DT_OP_WINDOW_TICKS_MARGIN_NS, so that the op itself lies inside it after the mapping. */
#define DT_OP_WINDOW_TICKS_MARGIN_NS 20000u
void dt_op_window_range_begins(dt_session *s, uint32_t name_id, uint64_t start_ns);
void dt_op_window_range_ends(dt_session *s, uint32_t name_id, uint64_t end_ns);
/* At stop (window_stop not yet set by stop): 1 when the window closed already (stop keeps it). A
 * window that never opened is made empty at stop_ns, and a note says how many ranges ran. */
int dt_op_window_at_stop(dt_session *s, uint64_t stop_ns);

#endif
