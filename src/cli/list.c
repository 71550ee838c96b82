/* list.c: devtrace list: every compiled-in backend, whether it can trace on this
 * machine (and why not), and how far it has been validated. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "devtrace.h"

static const char list_usage[] =
    "usage: devtrace list\n"
    "\n"
    "Shows every backend compiled into devtrace, in the order DEVTRACE_BACKEND=auto\n"
    "tries them, whether it can trace on this machine (and why not), and its validation:\n"
    "  hardware          run on the real device by this project\n"
    "  headers+emulated  record layouts checked against the vendor's real headers, and\n"
    "                    tested end to end against an emulator of the vendor library\n"
    "  emulated          tested against an emulator only; not run on the vendor's device\n";

static void print_backend(const devtrace_backend_info *b)
{
    char why[2048] = "";
    int ok = devtrace_backend_probe(b->name, why, sizeof why) == 1;
    printf("%-10s %-4s %s\n", b->name, ok ? "yes" : "no", b->description);
    printf("           validation: %s\n", b->validation);
    if (!ok)
        printf("           why not: %s\n", why);
}

int dt_cmd_list(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(list_usage, stdout);
            return 0;
        }
        fprintf(stderr, "devtrace list: unknown option '%s'; run 'devtrace list --help'\n", argv[i]);
        return DT_EXIT_USAGE;
    }
    printf("%-10s %-4s %s\n", "BACKEND", "CAN", "WHAT");
    devtrace_backend_info b = {.size = sizeof b};
    for (int i = 0; i < devtrace_backend_count(); i++)
        if (devtrace_backend_get(i, &b) == 0)
            print_backend(&b);
    if (devtrace_backend_find("none", &b) == 0)
        print_backend(&b);
    return 0;
}
