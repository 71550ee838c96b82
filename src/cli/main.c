/* main.c: the devtrace command: record a program's device timeline, open a capture
 * window in a recording, list the backends, replay a raw capture, report on, compare
 * and convert traces. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "devtrace.h"

static const char usage[] = "usage: devtrace COMMAND [OPTIONS]\n"
                            "\n"
                            "Records the device timeline of an accelerator program (kernels, memory copies,\n"
                            "memsets and the runtime calls that caused them) through the vendor's own tracing\n"
                            "API and writes a Kineto-compatible Chrome trace.\n"
                            "\n"
                            "commands:\n"
                            "  record [-o TRACE] [--backend NAME] -- PROGRAM [ARGS...]\n"
                            "                 run PROGRAM and write its trace (see 'devtrace record --help')\n"
                            "  capture PID [--duration S] [-o TRACE]\n"
                            "                 open a capture window in a program recorded with --on-demand\n"
                            "  list           show every backend, whether it can trace here, and why not\n"
                            "  replay FILE -o TRACE\n"
                            "                 decode a raw capture (.dtraw) into a trace\n"
                            "  report TRACE... | DIR\n"
                            "                 the tables of a Kineto trace (kernels, memory, api, ops, streams),\n"
                            "                 of every rank of a run, and a timeline picture (--svg)\n"
                            "  diff A B       two traces per kernel and per op: counts, totals, delta, ratio\n"
                            "  convert IN OUT write IN's trace as OUT (.pftrace: Perfetto's protobuf)\n"
                            "  help [COMMAND] this text, or COMMAND's (as 'devtrace COMMAND --help')\n"
                            "  version        print the version\n"
                            "\n"
                            "options:\n"
                            "  -h, --help     this text\n"
                            "  -V, --version  print the version\n";

typedef int (*command_fn)(int argc, char **argv);

static const struct command {
    const char *name;
    command_fn run;
} commands[] = {
    {"record", dt_cmd_record}, {"capture", dt_cmd_capture}, {"list", dt_cmd_list},       {"replay", dt_cmd_replay},
    {"report", dt_cmd_report}, {"diff", dt_cmd_diff},       {"convert", dt_cmd_convert},
};

static command_fn find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (!strcmp(commands[i].name, name))
            return commands[i].run;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return DT_EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "help") && argc >= 3) { /* devtrace help COMMAND: that command's --help */
        command_fn run = find_command(argv[2]);
        if (!run) {
            fprintf(stderr, "devtrace: no help for '%s': the commands are", argv[2]);
            for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
                fprintf(stderr, "%s %s", i ? "," : "", commands[i].name);
            fputc('\n', stderr);
            return DT_EXIT_USAGE;
        }
        char *help_argv[] = {argv[2], "--help", NULL};
        return run(2, help_argv);
    }
    if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
        fputs(usage, stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V") || !strcmp(cmd, "version")) {
        printf("devtrace %s\n", DEVTRACE_VERSION_STRING);
        return 0;
    }
    command_fn run = find_command(cmd);
    if (run)
        return run(argc - 1, argv + 1);
    fprintf(stderr, "devtrace: unknown command '%s'; run 'devtrace --help' for the commands\n", cmd);
    return DT_EXIT_USAGE;
}
