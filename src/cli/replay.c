/* replay.c: devtrace replay: decodes a raw capture (.dtraw) into a trace. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

int dt_cmd_replay(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        fputs("usage: devtrace replay FILE.dtraw -o TRACE.json\n\n"
              "Decodes a raw capture saved with 'devtrace record --raw' (or $DEVTRACE_RAW)\n"
              "through the same decoders as live collection.\n", stdout);
        return 0;
    }
    fprintf(stderr, "devtrace replay: not available in this build yet (raw capture is not implemented)\n");
    return DT_EXIT_FAILURE;
}
