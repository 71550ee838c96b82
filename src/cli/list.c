/* list.c: devtrace list: every compiled-in backend, whether it can trace on this
 * machine (and why not), and how far it has been validated. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "devtrace.h"

static const char list_usage[] =
    "usage: devtrace list [--json]\n"
    "\n"
    "Shows every backend compiled into devtrace, in the order DEVTRACE_BACKEND=auto\n"
    "tries them, whether it can trace on this machine (and why not), and its validation:\n"
    "  hardware          run on the real device by this project\n"
    "  headers+emulated  record layouts checked against the vendor's real headers, and\n"
    "                    tested end to end against an emulator of the vendor library\n"
    "  emulated          tested against an emulator only; not run on the vendor's device\n"
    "\n"
    "  --json            every backend's facts instead, one JSON object, \"none\" last: name,\n"
    "                    description, can (and why not), validation, capabilities, runtime\n"
    "                    category, how the collector is loaded, where the vendor library is\n"
    "                    looked for (devtrace_backend_info, include/devtrace.h)\n";

static void print_backend(const devtrace_backend_info *b)
{
    char why[2048] = "";
    int ok = devtrace_backend_probe(b->name, why, sizeof why) == 1;
    printf("%-10s %-4s %s\n", b->name, ok ? "yes" : "no", b->description);
    printf("           validation: %s\n", b->validation);
    if (!ok)
        printf("           why not: %s\n", why);
}

static void json_string(const char *s)
{
    if (!s) {
        fputs("null", stdout);
        return;
    }
    putchar('"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            printf("\\%c", *p);
        else if (*p < 0x20)
            printf("\\u%04x", *p);
        else
            putchar(*p);
    }
    putchar('"');
}

static void json_member(const char *key, const char *value)
{
    printf(", ");
    json_string(key);
    printf(": ");
    json_string(value);
}

static void json_list(const char *key, const char *const *names, int cap)
{
    printf(", ");
    json_string(key);
    printf(": [");
    for (int i = 0; i < cap && names[i]; i++) {
        printf("%s", i ? ", " : "");
        json_string(names[i]);
    }
    putchar(']');
}

static void json_backend(const devtrace_backend_info *b, int first)
{
    static const char *const load_methods[] = {"preload", "injection", "layer"};
    char why[2048] = "";
    int ok = devtrace_backend_probe(b->name, why, sizeof why) == 1;
    printf("%s\n  {", first ? "" : ",");
    json_string("name");
    printf(": ");
    json_string(b->name);
    json_member("description", b->description);
    printf(", \"can\": %s", ok ? "true" : "false");
    json_member("why_not", ok ? NULL : why);
    json_member("validation", b->validation);
    printf(", \"capabilities\": {\"kernel_launch\": %s, \"occupancy\": %s, \"external\": %s, \"raw_capture\": %s}",
           b->capabilities & DEVTRACE_CAP_KERNEL_LAUNCH ? "true" : "false",
           b->capabilities & DEVTRACE_CAP_OCCUPANCY ? "true" : "false",
           b->capabilities & DEVTRACE_CAP_EXTERNAL ? "true" : "false",
           b->capabilities & DEVTRACE_CAP_RAW_CAPTURE ? "true" : "false");
    json_member("runtime_category", b->runtime_category);
    int m = b->load_method;
    json_member("load_method", m >= 0 && m <= DEVTRACE_LOAD_LAYER ? load_methods[m] : "?");
    json_member("load_variable", b->load_variable);
    json_member("preload_library", b->preload_library);
    json_member("library_api", b->library_api);
    json_member("library_variable", b->library_variable);
    json_list("sdk_variables", b->sdk_variables, (int)(sizeof b->sdk_variables / sizeof b->sdk_variables[0]));
    json_list("library_files", b->library_files, (int)(sizeof b->library_files / sizeof b->library_files[0]));
    putchar('}');
}

/* {"backends": [...]}: the compiled-in backends in the auto order, then "none". */
static void list_json(void)
{
    printf("{\"backends\": [");
    devtrace_backend_info b = {.size = sizeof b};
    int n = 0;
    for (int i = 0; i < devtrace_backend_count(); i++)
        if (devtrace_backend_get(i, &b) == 0)
            json_backend(&b, n++ == 0);
    if (devtrace_backend_find("none", &b) == 0)
        json_backend(&b, n++ == 0);
    printf("\n]}\n");
}

int dt_cmd_list(int argc, char **argv)
{
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            fputs(list_usage, stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--json")) {
            json = 1;
            continue;
        }
        fprintf(stderr, "devtrace list: unknown option '%s'; run 'devtrace list --help'\n", argv[i]);
        return DT_EXIT_USAGE;
    }
    if (json) {
        list_json();
        return 0;
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
