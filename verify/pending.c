/*
 * pending.c — the verdicts xf_verify_db has decided and not yet written.
 * Holding a write transaction open across the workers' run (and reopening it
 * the moment it commits) kept every other writer out for the whole run:
 * SQLite's busy handler retries with sleeps, and never found the lock free.
 * Here the verdicts wait in memory and go to the database together, in one
 * short transaction, when XV_PENDING_MAX of them wait or the oldest has
 * waited XV_PENDING_MAX_AGE_S; in between the lock is free. A process
 * killed meanwhile loses at most that much work, which a rerun decides again.
 */
#include "pending_internal.h"

#include <string.h>

static char *dup_or_null(const char *s, int *oom)
{
    if (!s) return NULL;
    char *c = xf_strdup(s);
    if (!c) *oom = 1;
    return c;
}

static void verdict_free(xv_verdict *v)
{
    xf_free(v->axioms);
    xf_free(v->detail);
    xf_free(v->cex);
    xf_free(v->domain);
}

xf_status vf_pending_add(xv_pending *q, int64_t id, const xf_rulesdb_verdict *v, xf_error *err)
{
    if (q->n == q->cap) {
        int cap = q->cap ? 2 * q->cap : XV_PENDING_MAX;
        xv_verdict *p = xf_realloc(q->v, sizeof *p * (size_t)cap);
        if (!p) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory keeping the verdict of rule %lld",
                               (long long)id);
        q->v = p;
        q->cap = cap;
    }
    xv_verdict *e = &q->v[q->n];
    memset(e, 0, sizeof *e);
    int oom = 0;
    e->id = id;
    e->status = v->status;
    e->time_ms = v->time_ms;
    e->axioms = dup_or_null(v->axioms, &oom);
    e->detail = dup_or_null(v->detail, &oom);
    e->domain = dup_or_null(v->domain, &oom);
    if (v->counterexample && v->counterexample_len) {
        e->cex = xf_malloc(v->counterexample_len);
        if (e->cex) {
            memcpy(e->cex, v->counterexample, v->counterexample_len);
            e->cex_len = v->counterexample_len;
        } else {
            oom = 1;
        }
    }
    if (oom) {
        verdict_free(e);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory keeping the verdict of rule %lld",
                       (long long)id);
    }
    if (q->n++ == 0) q->oldest = xf_clock_now();
    return XF_OK;
}

int vf_pending_due(const xv_pending *q, double now)
{
    return q->n >= XV_PENDING_MAX || (q->n > 0 && now - q->oldest >= XV_PENDING_MAX_AGE_S);
}

xf_status vf_pending_flush(xv_pending *q, xf_rulesdb *db, xf_error *err)
{
    if (q->n == 0) return XF_OK;
    xf_status st = xf_rulesdb_begin(db, err);
    for (int i = 0; i < q->n && st == XF_OK; i++) {
        const xv_verdict *e = &q->v[i];
        xf_rulesdb_verdict v = {e->status,  e->time_ms, e->axioms, e->detail,
                                e->cex,     e->cex_len, e->domain};
        st = xf_rulesdb_set_verdict(db, e->id, &v, err);
    }
    if (st == XF_OK) st = xf_rulesdb_commit(db, err);
    if (st != XF_OK) {
        if (xf_rulesdb_in_batch(db)) xf_rulesdb_rollback(db, NULL);
        return st;
    }
    for (int i = 0; i < q->n; i++) verdict_free(&q->v[i]);
    q->n = 0;
    return XF_OK;
}

void vf_pending_free(xv_pending *q)
{
    for (int i = 0; i < q->n; i++) verdict_free(&q->v[i]);
    xf_free(q->v);
    memset(q, 0, sizeof *q);
}
