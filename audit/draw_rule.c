/*
 * draw_rule.c — one rule's picture, the one `xferdb report` shows, drawn
 * on its own for another page (an optimisation's page shows the rules it
 * applied), and the report pages' style sheet and HTML escaping
 * (report_html.c): the pages of rlflow look and draw alike.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "audit_internal.h"

int xf_audit_can_draw(void)
{
    return audit_have_dot();
}

xf_status xf_audit_draw_rule(xf_rulesdb *db, int64_t id, const char *path,
                             xf_rule_status *status, xf_error *err)
{
    if (!audit_have_dot()) return audit_no_dot(err);
    xf_rulesdb_rule_info info;
    xf_rule r;
    xf_status st = audit_load(db, id, &info, &r, err);
    if (st != XF_OK) {
        xf_rulesdb_rule_info_free(&info);
        xf_rule_free(&r);
        return st;
    }
    if (status) *status = info.status;
    xf_outfile out;
    FILE *dot = tmpfile();
    if (!dot) {
        st = XF_FAIL(err, XF_ERR_IO, "cannot make a scratch file for rule %lld's picture: %s",
                     (long long)id, strerror(errno));
    } else {
        xf_audit_write_dot(dot, &info, &r);
        if (fflush(dot) != 0 || ferror(dot))
            st = XF_FAIL(err, XF_ERR_IO, "cannot write rule %lld's picture", (long long)id);
        rewind(dot);
        if (!st && !(st = xf_outfile_open(&out, path, err))) {
            st = audit_run_dot("svg", dot, out.f, err);
            if (st) xf_outfile_abort(&out);
            else st = xf_outfile_commit(&out, err);
        }
        fclose(dot);
    }
    xf_rulesdb_rule_info_free(&info);
    xf_rule_free(&r);
    return st;
}

const char *xf_audit_page_css(void)
{
    return audit_report_css;
}
