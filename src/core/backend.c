/* backend.c: what the core reads from a table of backends (core/backend.h): a backend by
 * name, the names with a capability, and a backend's validation text. The table itself is
 * the registry's (backends/registry.c). */
#include <stdio.h>
#include <string.h>

#include "backend.h"

const dt_backend *dt_backend_table_find(const dt_backend_table *t, const char *name)
{
    if (!name)
        return NULL;
    if (t->unavailable && strcmp(name, t->unavailable->name) == 0)
        return t->unavailable;
    for (const dt_backend *const *b = t->list; *b; b++)
        if (strcmp((*b)->name, name) == 0)
            return *b;
    return NULL;
}

void dt_backend_table_names(const dt_backend_table *t, unsigned caps, const char *tail, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (const dt_backend *const *b = t->list; *b; b++) {
        if (((*b)->caps & caps) != caps)
            continue;
        int n = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", (*b)->name);
        if (n < 0 || (size_t)n >= len - used)
            return;
        used += (size_t)n;
    }
    if (tail)
        snprintf(buf + used, len - used, "%s%s", used ? ", " : "", tail);
}

void dt_backend_validation_text(const dt_backend *b, char *buf, size_t len)
{
    if (!b->validated) {
        snprintf(buf, len, "n/a: %s", b->validation_note ? b->validation_note : "");
        return;
    }
    const char *level = (b->validated & DT_VALIDATED_HARDWARE)  ? "hardware"
                        : (b->validated & DT_VALIDATED_HEADERS) ? "headers+emulated"
                                                                : "emulated";
    snprintf(buf, len, "%s: %s", level, b->validation_note ? b->validation_note : "");
}
