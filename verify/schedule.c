/*
 * schedule.c — xf_verify_db: selects the rules of a rules database, has
 * them decided, and records each verdict as it arrives. Here, they are
 * decided by forked workers (forks.c, worker.c), at most `jobs` at a time,
 * from a verifier created and prepared once before the first fork (Z3's
 * set-up costs more than most rules); under MPI (o->mpi) by the other
 * ranks (mpi.c), this process only recording. A worker that outlives its
 * hard deadline is killed and a crashed one noticed from its pipe, so
 * either costs one rule, recorded unknown with the reason (a kill is
 * counted: t->killed), as is a worker's error (out of memory
 * included): an error never becomes proved or refuted, and never replaces a
 * stored proved or refuted verdict either (--recheck). A rule that does not
 * load is reported and left as it is. Running out of memory here, reading a
 * worker's message, stops the run with XF_ERR_NOMEM. Verdicts wait in memory
 * and are written in short batches (pending.c), so the write lock is free
 * for other writers between them and an interrupted or failed call keeps
 * most of its work.
 */
#include "schedule_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

void xf_verify_db_options_init(xf_verify_db_options *o)
{
    memset(o, 0, sizeof *o);
    o->jobs = 1;
    xf_verify_options_init(&o->vo);
}

/* ------------------------------------------------------------ selection */

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The rules to decide, in id order, with the status each has now. */
static xf_status select_rules(xf_rulesdb *db, const xf_verify_db_options *o, int64_t **ids,
                              xf_rule_status **was, int64_t *n, xf_error *err)
{
    xf_rulesdb_filter f;
    memset(&f, 0, sizeof f);
    f.any_status = o->recheck;
    f.status = XF_RULE_CANDIDATE;
    f.size = o->size;
    xf_rulesdb_iter *it = NULL;
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    *ids = NULL;
    *was = NULL;
    *n = 0;
    int64_t cap = 0;
    int has = 1;
    xf_status st = xf_rulesdb_iter_begin(db, &f, &it, err);
    while (st == XF_OK && (o->limit == 0 || *n < o->limit)) {
        st = xf_rulesdb_iter_next(it, &info, &has, err);
        if (st != XF_OK || !has) break;
        if (info.status == XF_RULE_PRUNED) continue;
        if (o->only && !bsearch(&info.id, o->only, (size_t)o->n_only, sizeof *o->only, cmp_id))
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 256;
            int64_t *p = xf_realloc(*ids, (size_t)cap * sizeof *p);
            if (p) *ids = p;
            xf_rule_status *w = xf_realloc(*was, (size_t)cap * sizeof *w);
            if (w) *was = w;
            if (!p || !w) {
                st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory listing rules");
                break;
            }
        }
        (*was)[*n] = info.status;
        (*ids)[(*n)++] = info.id;
    }
    xf_rulesdb_rule_info_free(&info);
    xf_rulesdb_iter_free(it);
    return st;
}

/* ------------------------------------------------------------ verdicts */

xf_status vf_record(xv_sched *c, const xv_outcome *oc, const uint8_t *msg, xf_error *err)
{
    xf_verify_tally *t = c->t;
    xv_msg m;
    memset(&m, 0, sizeof m);
    char detail[1024];
    const uint8_t *cex = NULL;
    xf_rulesdb_verdict v;
    memset(&v, 0, sizeof v);
    v.status = XF_RULE_UNKNOWN;
    v.time_ms = oc->time_ms;
    xf_verify_why why = XF_WHY_NONE; /* an unknown verdict's reason */
    xf_rule_status was = c->was[oc->index];
    int full = oc->len >= sizeof m;
    if (full) {
        memcpy(&m, msg, sizeof m);
        full = oc->len == sizeof m + m.cex_len;
        cex = msg + sizeof m;
    }
    if (oc->killed) {
        t->killed++;
        snprintf(detail, sizeof detail, "worker killed after the hard deadline (%.0f s)",
                 oc->limit_s);
    } else if (!full) {
        if (WIFSIGNALED(oc->wstatus))
            snprintf(detail, sizeof detail, "worker crashed (signal %d)", WTERMSIG(oc->wstatus));
        else
            snprintf(detail, sizeof detail, "worker exited (%d) without a verdict",
                     WIFEXITED(oc->wstatus) ? WEXITSTATUS(oc->wstatus) : -1);
    } else if (m.failed) {
        snprintf(detail, sizeof detail, "error: %s", m.errmsg);
    } else {
        int proved = m.proof == XF_PROOF_PROVED, refuted = m.bounded == XF_BOUNDED_REFUTED;
        /* Not proved by the axioms, valid at the own shapes that stand for
         * every shape the rule applies to (docs/verify.md): a proof too. */
        int by_shapes = !proved && m.bounded == XF_BOUNDED_VALID && m.bounded_proves;
        why = m.bounded == XF_BOUNDED_UNKNOWN ? m.bounded_why : m.proof_why;
        char pre[96] = "";
        if (by_shapes)
            snprintf(pre, sizeof pre, "proved by the exact check at the own shapes; ");
        else if (!refuted && !proved)
            snprintf(pre, sizeof pre, "unknown: axioms %s, bounded %s; ",
                     xf_verify_why_name(m.proof_why),
                     m.bounded == XF_BOUNDED_VALID ? "valid" : xf_verify_why_name(m.bounded_why));
        snprintf(detail, sizeof detail,
                 "%saxioms: %s (%s); bounded: %s (%s); work %llu units",
                 pre, xf_proof_result_name(m.proof), m.proof_detail[0] ? m.proof_detail : "-",
                 xf_bounded_result_name(m.bounded), m.bounded_detail,
                 (unsigned long long)m.rlimit_used);
        if (m.bounded == XF_BOUNDED_REFUTED) {
            v.status = XF_RULE_REFUTED;
            v.counterexample = m.cex_len ? cex : NULL;
            v.counterexample_len = m.cex_len;
            if (m.proof == XF_PROOF_PROVED && m.bounded_shape == 0) {
                t->disagree++;
                if (c->o->on_disagreement) c->o->on_disagreement(c->o->user, oc->id, m.core);
            } else if (m.proof == XF_PROOF_PROVED) {
                t->shape_specific++; /* the detail stored with the verdict says where */
            }
        } else if (m.proof == XF_PROOF_PROVED) {
            v.status = XF_RULE_PROVED;
            v.axioms = m.core;
        } else if (by_shapes) {
            v.status = XF_RULE_PROVED;
        }
        if (v.status == XF_RULE_PROVED && m.has_domain) v.domain = m.domain;
    }
    v.detail = detail;
    /* Not a verdict: a rule that does not load, or an error on one that has
     * a verdict already. Reported; what is stored stays. */
    int broken = full && m.failed && m.broken;
    int error = oc->killed || !full || m.failed;
    xf_status st = XF_OK;
    t->done++;
    t->cpu_s += oc->cpu_ms / 1e3;
    if (full) t->patterns_reused += m.patterns_reused;
    if (broken || (error && (was == XF_RULE_PROVED || was == XF_RULE_REFUTED))) {
        if (broken) t->broken++;
        else t->kept++;
        if (c->o->on_kept)
            c->o->on_kept(c->o->user, oc->id, broken, was, broken ? m.errmsg : detail);
    } else {
        if (v.status == XF_RULE_PROVED) t->proved++, t->by_shapes += !v.axioms;
        else if (v.status == XF_RULE_REFUTED) t->refuted++;
        else {
            t->unknown++;
            t->unknown_why[why]++;
        }
        st = vf_pending_add(&c->q, oc->id, &v, err);
    }
    t->elapsed_s = xf_clock_now() - c->t0;
    if (c->o->on_progress) c->o->on_progress(c->o->user, t);
    return st;
}

xf_status vf_flush_due(xv_sched *c, xf_error *err)
{
    return vf_pending_due(&c->q, xf_clock_now()) ? vf_pending_flush(&c->q, c->db, err) : XF_OK;
}

static xf_status on_done(void *user, const xv_outcome *oc, const uint8_t *msg, xf_error *err)
{
    xv_sched *c = user;
    xf_status st = vf_record(c, oc, msg, err);
    return st == XF_OK ? vf_flush_due(c, err) : st;
}

static xf_status on_tick(void *user, xf_error *err)
{
    return vf_flush_due(user, err);
}

/* Decides the selection here, with forked workers. */
static xf_status run_local(xv_sched *c, const char *path, const int64_t *ids, xf_error *err)
{
    xf_verifier *v = NULL;
    xf_status st = xf_verifier_new(&c->o->vo, &v, err);
    if (st == XF_OK) st = xf_verifier_prepare(v, err);
    if (st == XF_OK)
        st = vf_run_forks(path, v, c->o->vo.timeout_ms, c->o->jobs, ids, c->t->total, on_done,
                          on_tick, c, err);
    xf_verifier_free(v);
    return st;
}

xf_status xf_verify_db(xf_rulesdb *db, const char *path, const xf_verify_db_options *o,
                       xf_verify_tally *t, xf_error *err)
{
    memset(t, 0, sizeof *t);
    if (o->jobs < 1 || o->jobs > XF_VERIFY_MAX_JOBS)
        return XF_FAIL(err, XF_ERR_INVALID, "%d worker processes (1 to %d)", o->jobs,
                       XF_VERIFY_MAX_JOBS);
    xv_sched c = {db, o, NULL, t, xf_clock_now(), {NULL, 0, 0, 0}};
    int64_t *ids = NULL;
    xf_rule_status *was = NULL;
    int64_t run_id = 0;
    char options[256];
    snprintf(options, sizeof options,
             "%s %d --timeout %ums --rlimit %u --proof-rlimit %u --cross-rlimit %u "
             "--max-shapes %d --cross-shapes %d%s%s",
             o->mpi ? "mpi, -j per rank" : "-j", o->jobs, o->vo.timeout_ms, o->vo.rlimit,
             o->vo.proof_rlimit, o->vo.cross_rlimit, o->vo.bounded_max_shapes,
             o->vo.cross_shapes, o->vo.probe_first ? "" : " --axioms-first",
             o->recheck ? " --recheck" : "");
    xf_rulesdb_run_desc d = {"xferverify", o->version, options, NULL, NULL, o->vo.seed};
    xf_status st = select_rules(db, o, &ids, &was, &t->total, err);
    c.was = was;
    if (st == XF_OK) st = xf_rulesdb_run_start(db, &d, &run_id, err);
    if (st == XF_OK && !o->mpi) st = run_local(&c, path, ids, err);
#ifdef XF_HAVE_MPI
    else if (st == XF_OK) st = vf_mpi_dispatch(&c, path, ids, err);
#else
    else if (st == XF_OK)
        st = XF_FAIL(err, XF_ERR_UNSUPPORTED,
                     "this build of rlflow has no MPI (install libopenmpi-dev and rebuild)");
#endif
    if (st == XF_OK) st = vf_pending_flush(&c.q, db, err);
    else vf_pending_flush(&c.q, db, NULL); /* keep what was decided */
    if (st == XF_OK) st = xf_rulesdb_run_stage(db, run_id, "verify", xf_clock_now() - c.t0, t->done, err);
    if (run_id)
        xf_rulesdb_run_set_state(db, run_id, st == XF_OK ? XF_RUN_DONE : XF_RUN_INTERRUPTED,
                                 NULL);
    t->elapsed_s = xf_clock_now() - c.t0;
    xf_free(ids);
    xf_free(was);
    vf_pending_free(&c.q);
    return st;
}
