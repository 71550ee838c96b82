/* core.h: the core's interface for the command (src/cli), one header for the layer: the
 * session and its parts the command reads and builds (session.h), the raw capture and
 * replay (raw.h), files created without following links (new_file.h), the clocks
 * (clock.h, hostclock.h), the growth helpers (grow.h), the error codes (errors.h) and
 * memory kept out of the resident set (filemem.h).
 * The public API (include/devtrace.h) comes first where it serves; scripts/check-layers
 * holds the command to this header and one header of each other layer. */
#ifndef DT_CORE_CORE_H
#define DT_CORE_CORE_H

#include "core/clock.h"
#include "core/errors.h"
#include "core/filemem.h"
#include "core/grow.h"
#include "core/hostclock.h"
#include "core/new_file.h"
#include "core/raw.h"
#include "core/session.h"

#endif
