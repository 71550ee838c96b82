/* svg.h: `devtrace report --svg`: a timeline picture of a trace's window: one lane per device
 * stream (its work; under it its gpu_user_annotations and waits; then a strip: how busy the
 * stream is along the window) and per host thread
 * (runtime calls and ops, nested ops on rows below), boxes colored by kind, a time axis and a
 * legend. The trace is read a second time (the report's read gives its first event, which the
 * window counts from); boxes narrower than a pixel are merged with their neighbours of the same
 * kind, so that a window of millions of events stays a picture a browser opens. */
#ifndef DT_SVG_H
#define DT_SVG_H

#include <stdint.h>

#include "report/report.h"

typedef struct dt_svg_options {
    int64_t from_ns, to_ns; /* the window, from the trace's first event; to_ns < 0: to its end */
    dt_names_mode names;
    int width; /* pixels; 0: 1600 */
} dt_svg_options;

/* The picture of r's trace (r read with dt_report_read) at out_path: 0, or -1 with err. */
int dt_svg_write(const dt_report *r, const char *out_path, const dt_svg_options *o, char *err, size_t errlen);

#endif
