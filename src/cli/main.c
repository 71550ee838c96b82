/* main.c: the devtrace command: record a program's device timeline, list the
 * backends, replay a raw capture, convert one into another format. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "devtrace.h"

static const char usage[] =
    "usage: devtrace COMMAND [OPTIONS]\n"
    "\n"
    "Records the device timeline of an accelerator program (kernels, memory copies,\n"
    "memsets and the runtime calls that caused them) through the vendor's own tracing\n"
    "API and writes a Kineto-compatible Chrome trace.\n"
    "\n"
    "commands:\n"
    "  record [-o TRACE] [--backend NAME] -- PROGRAM [ARGS...]\n"
    "                 run PROGRAM and write its trace (see 'devtrace record --help')\n"
    "  list           show every backend, whether it can trace here, and why not\n"
    "  replay FILE -o TRACE\n"
    "                 decode a raw capture (.dtraw) into a trace\n"
    "  convert IN OUT write IN's trace as OUT (.pftrace: Perfetto's protobuf)\n"
    "  help           this text\n"
    "\n"
    "options:\n"
    "  -h, --help     this text\n"
    "  --version      print the version\n";

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return DT_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        fputs(usage, stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("devtrace %s\n", DEVTRACE_VERSION_STRING);
        return 0;
    }
    if (!strcmp(cmd, "record"))
        return dt_cmd_record(argc - 1, argv + 1);
    if (!strcmp(cmd, "list"))
        return dt_cmd_list(argc - 1, argv + 1);
    if (!strcmp(cmd, "replay"))
        return dt_cmd_replay(argc - 1, argv + 1);
    if (!strcmp(cmd, "convert"))
        return dt_cmd_convert(argc - 1, argv + 1);
    fprintf(stderr, "devtrace: unknown command '%s'; run 'devtrace --help' for the commands\n", cmd);
    return DT_EXIT_USAGE;
}
