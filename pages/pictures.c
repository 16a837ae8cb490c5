/*
 * pictures.c — the rule pictures of a page: each rule the page shows drawn
 * once into DIR/img/rule-<id>.svg by audit (the picture `xferdb report`
 * shows), from the database the optimisation read. Without graphviz, or
 * for a rule that cannot be drawn, the page shows the rule's text and says
 * why; that is not an error.
 */
#include <string.h>

#include "audit/audit.h"
#include "pages_internal.h"

xf_status pg_pictures_open(pg_pictures *p, const char *dir, const char *rules, xf_error *err)
{
    memset(p, 0, sizeof *p);
    p->img_dir = dir;
    p->can_draw = xf_audit_can_draw();
    if (!p->can_draw) {
        snprintf(p->why, sizeof p->why,
                 "graphviz's dot was not found when this page was written (Debian package "
                 "graphviz): rules are shown in text form");
        return XF_OK;
    }
    xf_error e = {0};
    xf_status st = rules ? xf_rulesdb_open(rules, XF_RULESDB_READONLY, &p->db, &e) : XF_OK;
    if (st == XF_ERR_NOMEM) {
        *err = e;
        return st;
    }
    if (!rules || st) {
        p->can_draw = 0;
        snprintf(p->why, sizeof p->why, "the rules database could not be opened: %s",
                 rules ? e.msg : "none given");
        return XF_OK;
    }
    if ((st = pg_make_dir(dir, err))) pg_pictures_close(p);
    return st;
}

xf_status pg_picture(pg_pictures *p, int64_t id, xf_rule_status *status, int *drawn,
                     xf_error *err)
{
    *drawn = 0;
    for (int i = 0; i < p->n; i++)
        if (p->ids[i] == id) {
            *status = p->status[i];
            *drawn = 1;
            return XF_OK;
        }
    if (!p->can_draw) return XF_OK;
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 32;
        int64_t *ids = xf_realloc(p->ids, (size_t)cap * sizeof *ids);
        if (ids) p->ids = ids;
        xf_rule_status *sts = ids ? xf_realloc(p->status, (size_t)cap * sizeof *sts) : NULL;
        if (!sts) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory drawing the rules");
        p->status = sts;
        p->cap = cap;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/rule-%lld.svg", p->img_dir, (long long)id);
    xf_error e = {0};
    xf_status st = xf_audit_draw_rule(p->db, id, path, status, &e);
    if (st == XF_ERR_NOMEM) {
        *err = e;
        return st;
    }
    if (st) {
        snprintf(p->why, sizeof p->why, "rule %lld was not drawn: %s", (long long)id, e.msg);
        return XF_OK;
    }
    p->ids[p->n] = id;
    p->status[p->n++] = *status;
    *drawn = 1;
    return XF_OK;
}

void pg_pictures_close(pg_pictures *p)
{
    if (p->db) xf_rulesdb_close(p->db);
    xf_free(p->ids);
    xf_free(p->status);
    p->db = NULL;
    p->ids = NULL;
    p->status = NULL;
    p->n = p->cap = 0;
}
