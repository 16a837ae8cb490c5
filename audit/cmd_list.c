/*
 * cmd_list.c — `xferdb list DB [filters]`: one line per matching rule,
 *   ID  STATUS  SRC_OPS->DST_OPS  source  =>  target
 * with both sides rebuilt from their stored graphs and printed in infix
 * form using the rule's own input names. A rule that does not load (a
 * corrupt graph blob, a graph row that is missing) is reported on stderr
 * with its id and what is wrong, the rules after it are still listed, and
 * the exit status is 1.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "audit_impl.h"

/* Prints one rule's line; 1 (after an error message) when it does not load. */
static int print_rule(void *user, xf_rulesdb *db, const xf_rulesdb_rule_info *info)
{
    FILE *out = user;
    xf_error err;
    xf_rule r;
    if (xf_rulesdb_load_rule(db, info->id, &r, &err) != XF_OK) {
        audit_error(&err);
        return 1;
    }
    char *src = audit_format(&r.src, &err);
    char *dst = src ? audit_format(&r.dst, &err) : NULL;
    int rc = 0;
    if (!dst) {
        xf_error_prefix(&err, "rule %" PRId64, info->id);
        audit_error(&err);
        rc = 1;
    } else {
        fprintf(out, "%6" PRId64 "  %-9s  %d->%d  %s  =>  %s\n", info->id,
               xf_rulesdb_status_name(info->status), info->src_ops, info->dst_ops, src, dst);
    }
    xf_free(src);
    xf_free(dst);
    xf_rule_free(&r);
    return rc;
}

int xf_audit_list(FILE *out, xf_rulesdb *db, const xf_audit_options *o)
{
    return audit_each_rule(db, &o->filter, print_rule, out);
}
