/*
 * views.c — the audit views by name: the one table from a command name
 * ("stats", "list", ...) to its view, shared by xferdb's commands and the
 * Python package's Rules, so that the names cannot drift apart.
 */
#include "audit/audit.h"

#include <string.h>

static const struct {
    const char *name;
    xf_audit_view *view;
    int reads_db_only; /* prints what the database holds, reading or writing no
                          other file */
} views[] = {
    {"stats", xf_audit_stats, 1},       {"list", xf_audit_list, 1},
    {"families", xf_audit_families, 1}, {"show", xf_audit_show, 1},
    {"explain", xf_audit_explain, 1},   {"export", xf_audit_export, 0},
    {"check-export", xf_audit_check_export, 0}, {"report", xf_audit_report, 0},
};

xf_audit_view *xf_audit_find_view(const char *name, int db_only)
{
    for (size_t i = 0; name && i < sizeof views / sizeof views[0]; i++)
        if (!strcmp(name, views[i].name) && (!db_only || views[i].reads_db_only))
            return views[i].view;
    return NULL;
}
