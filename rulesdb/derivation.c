/*
 * derivation.c — derived rules: a rule joined by rewriting with other rules
 * of the database (derive/) is stored with status `derived` and its chain,
 * one row per step in the derivations table (schema version 3): the rule
 * applied, which way, and where. Setting the status and writing the chain
 * is one operation, so a rule is never derived without its proof; a later
 * verdict that changes the status drops the chain (trigger, schema.c).
 */
#include "db_internal.h"

#include <stdio.h>
#include <string.h>

static xf_status need_v3(xf_rulesdb *db, xf_error *err)
{
    if (db->version >= 3) return XF_OK;
    return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                   "%s has schema version %d, derived rules need version 3 (open it for "
                   "writing once to migrate it)",
                   db->path, db->version);
}

static xf_status put_steps(xf_rulesdb *db, int64_t id, const xf_rulesdb_step *steps, int n,
                           xf_error *err)
{
    sqlite3_stmt *s = db_stmt(db, STMT_DERIV_DELETE, err);
    if (!s) return err ? err->code : XF_ERR_IO;
    sqlite3_bind_int64(s, 1, id);
    xf_status st = db_step_done(db, s, "clearing a derivation", err);
    for (int i = 0; i < n && st == XF_OK; i++) {
        if (steps[i].by_rule <= 0 || steps[i].by_rule == id)
            return XF_FAIL(err, XF_ERR_INVALID, "derivation of rule %lld: step %d uses rule %lld",
                           (long long)id, i, (long long)steps[i].by_rule);
        if (i > 0 && steps[i - 1].from_target && !steps[i].from_target)
            return XF_FAIL(err, XF_ERR_INVALID,
                           "derivation of rule %lld: step %d from the source follows one from "
                           "the target",
                           (long long)id, i);
        s = db_stmt(db, STMT_DERIV_INSERT, err);
        if (!s) return err ? err->code : XF_ERR_IO;
        sqlite3_bind_int64(s, 1, id);
        sqlite3_bind_int(s, 2, i);
        sqlite3_bind_int64(s, 3, steps[i].by_rule);
        sqlite3_bind_text(s, 4, steps[i].backward ? "backward" : "forward", -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 5, steps[i].location, -1, SQLITE_STATIC);
        sqlite3_bind_text(s, 6, steps[i].from_target ? "target" : "source", -1, SQLITE_STATIC);
        st = db_step_done(db, s, "storing a derivation step", err);
        sqlite3_clear_bindings(s);
    }
    return st;
}

xf_status xf_rulesdb_set_derived(xf_rulesdb *db, int64_t id, const xf_rulesdb_step *steps, int n,
                                 double time_ms, const char *detail, const char *domain,
                                 xf_error *err)
{
    xf_status st = need_v3(db, err);
    if (st != XF_OK) return st;
    if (n < 1)
        return XF_FAIL(err, XF_ERR_INVALID, "rule %lld: a derivation needs at least one step",
                       (long long)id);
    st = db_op_begin(db, err);
    if (st != XF_OK) return st;
    xf_rulesdb_verdict v;
    memset(&v, 0, sizeof v);
    v.status = XF_RULE_DERIVED;
    v.time_ms = time_ms;
    v.detail = detail;
    v.domain = domain;
    /* A savepoint inside ours: the verdict and the steps stand or fall together. */
    st = xf_rulesdb_set_verdict(db, id, &v, err);
    if (st == XF_OK) st = put_steps(db, id, steps, n, err);
    if (st == XF_OK) db->batch_writes += n;
    return db_op_end(db, st, err);
}

xf_status xf_rulesdb_get_derivation(xf_rulesdb *db, int64_t id, xf_rulesdb_step **steps, int *n,
                                    xf_error *err)
{
    *steps = NULL;
    *n = 0;
    if (db->version < 3) return XF_OK; /* no derived rules before version 3 */
    sqlite3_stmt *s = db_stmt(db, STMT_DERIV_LOAD, err);
    if (!s) return err ? err->code : XF_ERR_IO;
    sqlite3_bind_int64(s, 1, id);
    xf_rulesdb_step *v = NULL;
    int cap = 0, rc;
    xf_status st = XF_OK;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 8;
            xf_rulesdb_step *p = xf_realloc(v, sizeof *p * (size_t)cap);
            if (!p) {
                st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory reading the derivation of rule %lld",
                             (long long)id);
                break;
            }
            v = p;
        }
        xf_rulesdb_step *e = &v[(*n)++];
        memset(e, 0, sizeof *e);
        e->by_rule = sqlite3_column_int64(s, 0);
        const char *dir = (const char *)sqlite3_column_text(s, 1);
        e->backward = dir && strcmp(dir, "backward") == 0;
        const char *loc = (const char *)sqlite3_column_text(s, 2);
        snprintf(e->location, sizeof e->location, "%s", loc ? loc : "");
        const char *side = (const char *)sqlite3_column_text(s, 3);
        e->from_target = side && strcmp(side, "target") == 0;
    }
    if (st == XF_OK && rc != SQLITE_DONE) st = db_fail(db, err, "reading a derivation");
    sqlite3_reset(s);
    if (st != XF_OK) {
        xf_free(v);
        v = NULL;
        *n = 0;
    }
    *steps = v;
    return st;
}
