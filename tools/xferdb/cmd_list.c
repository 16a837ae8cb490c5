/*
 * cmd_list.c — `xferdb list DB [filters]`: one line per matching rule,
 *   ID  STATUS  SRC_OPS->DST_OPS  source  =>  target
 * with both sides rebuilt from their stored graphs and printed in infix
 * form using the rule's own input names.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "xferdb.h"

/* Prints one rule's line; 1 (after an error message) when it does not load. */
static int print_rule(xf_rulesdb *db, const xf_rulesdb_rule_info *info)
{
    xf_error err;
    xf_rule r;
    if (xf_rulesdb_load_rule(db, info->id, &r, &err) != XF_OK) {
        xferdb_error(&err);
        return 1;
    }
    char *src = xferdb_format(&r.src, &err);
    char *dst = src ? xferdb_format(&r.dst, &err) : NULL;
    int rc = 0;
    if (!dst) {
        xf_error_prefix(&err, "rule %" PRId64, info->id);
        xferdb_error(&err);
        rc = 1;
    } else {
        printf("%6" PRId64 "  %-9s  %d->%d  %s  =>  %s\n", info->id,
               xf_rulesdb_status_name(info->status), info->src_ops, info->dst_ops, src, dst);
    }
    free(src);
    free(dst);
    xf_rule_free(&r);
    return rc;
}

int xferdb_list(xf_rulesdb *db, const xferdb_options *o)
{
    xf_error err;
    xf_rulesdb_iter *it = NULL;
    if (xf_rulesdb_iter_begin(db, &o->filter, &it, &err) != XF_OK) {
        xferdb_error(&err);
        return err.code == XF_ERR_INVALID ? 2 : 1; /* unknown op name: bad usage */
    }
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    int rc = 0, has = 0;
    while (rc == 0) {
        if (xf_rulesdb_iter_next(it, &info, &has, &err) != XF_OK) {
            xferdb_error(&err);
            rc = 1;
        } else if (!has) {
            break;
        } else {
            rc = print_rule(db, &info);
        }
    }
    xf_rulesdb_rule_info_free(&info);
    xf_rulesdb_iter_free(it);
    return rc;
}
