/*
 * worker.c — what one worker process of xf_verify_db does for one rule,
 * loaded by the forking process just before the fork (forks.c; a rule that
 * did not load is reported as such from here, so the scheduler sees it as
 * before): run the axiomatic proof and the bounded check (for a rule
 * the proof proved, the cross-check with its smaller budget; for one it did
 * not, the refute-only form: the exact check at the own shapes, floats at
 * the others) with the verifier the scheduler prepared
 * before forking (its copy is this
 * process's alone), and write the outcome (xv_msg plus the counterexample
 * blob, then the operator patterns it read off its kernels for later
 * workers: bounded_patterns.c) to
 * the pipe. With probe_first (the default) the float probe runs first at
 * every planned shape, and a rule it refutes at shapes other than its own
 * gets no proof attempt (its proof reads `not tried`). The domain recorded
 * is the rule's (ir/domain_infer.c), narrowed to where the dims a proof
 * read at their own size keep it (xf_proof.held; xf_bounded.held for a
 * proof by the own shapes). An error (out of memory in the bounded check included) is sent
 * as `failed` with both results back to unknown, so no verdict is read from
 * a run that did not finish; a rule that does not load (a corrupt blob, a
 * missing graph row) is also `broken`, so the scheduler keeps its verdict. A crash or hang here costs only this rule: the
 * scheduler sees the pipe close without a full message, or kills the process.
 */
#include "worker_internal.h"
#include "patterns_internal.h"
#include "verify_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XF_MATCH_MAX_NAMES 64

/* Adds "dim d of r's input i is `size`" to r's domain. */
static xf_status pin_dim(xf_rule *r, int i, int d, int64_t size, xf_error *err)
{
    xf_dom_atom a;
    memset(&a, 0, sizeof a);
    a.kind = XF_DOM_EQ;
    a.n = 1;
    a.dim[0].input = (int16_t)i;
    a.dim[0].axis = (int16_t)(d - r->src.values[r->src.inputs[i]].shape.rank);
    a.coef[0] = 1;
    a.c = -size;
    return xf_domain_add(&r->domain, &a, err);
}

/* r's domain: its inputs at their own shapes, every dim. */
static xf_status pin_own_shapes(xf_rule *r, xf_error *err)
{
    xf_domain_clear(&r->domain);
    xf_status st = XF_OK;
    for (int i = 0; i < r->src.n_inputs && st == XF_OK; i++) {
        const xf_shape *s = &r->src.values[r->src.inputs[i]].shape;
        for (int d = 0; d < s->rank && st == XF_OK; d++) st = pin_dim(r, i, d, s->dims[d], err);
    }
    return st == XF_OK ? xf_domain_normalize(&r->domain, err) : st;
}

/* r's domain where its proof by the own shapes b holds: every generator at
 * its own size (xf_domain_of_rule_pinned) and every input dim the proof
 * read at its own size there (b->held: a reshape's merged axis fixed
 * through its parts too, which the operators' domain cannot say). */
static xf_status pin_own_reads(xf_rule *r, const xf_bounded *b, xf_error *err)
{
    if (b->held_all) return pin_own_shapes(r, err);
    xf_status st = xf_domain_of_rule_pinned(r, &r->domain, err);
    for (int k = 0; k < b->n_held && st == XF_OK; k++)
        for (int i = 0; i < r->src.n_inputs && st == XF_OK; i++)
            if (b->held[k].side == 0 && r->src.inputs[i] == b->held[k].value)
                st = pin_dim(r, i, b->held[k].axis, b->held[k].size, err);
    return st == XF_OK ? xf_domain_normalize(&r->domain, err) : st;
}

/* The rule's domain as text, with its input names, into m->domain. */
static xf_status domain_text(const xf_rule *r, xv_msg *m, xf_error *err)
{
    const char *names[XF_MATCH_MAX_NAMES];
    int n = r->src.n_inputs < XF_MATCH_MAX_NAMES ? r->src.n_inputs : XF_MATCH_MAX_NAMES;
    for (int i = 0; i < n; i++) names[i] = r->src.values[r->src.inputs[i]].name;
    xf_status st = xf_domain_format(&r->domain, names, n, m->domain, sizeof m->domain, err);
    if (st == XF_OK) m->has_domain = 1;
    return st;
}

static xf_status decide(vf_loaded *job, xf_verifier *v, xv_msg *m, uint8_t **cex,
                        size_t *cex_len, xf_error *err)
{
    xf_rule *r = &job->rule; /* this process's copy: its domain is rewritten below */
    xf_bounded b;
    xf_bounded_init(&b);
    xf_proof p;
    memset(&p, 0, sizeof p);
    xf_status st = job->st;
    if (st != XF_OK) {
        m->broken = job->broken;
        if (err) *err = job->err;
    }
    /* where it is claimed to hold: what its operators demand (ir/domain.c);
     * the bounded check runs there, and a proof is recorded with it */
    if (st == XF_OK) st = xf_domain_of_rule(r, &r->domain, err);
    /* probe_first: floats that differ at shapes other than the own refute
     * the rule whatever the axioms say (they could only prove it at its own
     * shapes), so the proof attempt is skipped; a difference at the own
     * shapes goes on to the axioms, where a proof would be a wrong axiom */
    int probed = 0, agreed = 0; /* agreed: floats agree at every planned shape */
    double probe_ms = 0; /* a probe that refuted nothing: its time joins the check's */
    if (st == XF_OK && vf_verifier_options(v)->probe_first) {
        st = xf_verify_bounded_probe(v, r, &b, err);
        probed = st == XF_OK && b.result == XF_BOUNDED_REFUTED && b.shape_index > 0;
        agreed = st == XF_OK && b.result == XF_BOUNDED_VALID;
        if (st == XF_OK && !probed) {
            probe_ms = b.time_ms;
            xf_bounded_free(&b);
        }
    }
    if (probed) {
        p.result = XF_PROOF_UNKNOWN;
        m->proof = XF_PROOF_UNKNOWN;
        m->proof_why = XF_WHY_NONE;
        snprintf(m->proof_detail, sizeof m->proof_detail,
                 "not tried: the float probe refuted it at other shapes first");
    } else if (st == XF_OK) {
        st = xf_verify_prove(v, r, &p, err);
    }
    if (st == XF_OK && !probed) {
        m->proof = p.result;
        m->proof_ms = p.time_ms;
        m->proof_why = p.why;
        m->rlimit_used = p.rlimit_used;
        snprintf(m->core, sizeof m->core, "%s", p.core_names);
        snprintf(m->proof_detail, sizeof m->proof_detail, "%s", p.detail);
        /* unproved: only a refutation can change the verdict (bounded.c);
         * a probe that agreed everywhere is not run again */
        int proved = p.result == XF_PROOF_PROVED;
        if (agreed) st = xf_verify_bounded_after_probe(v, r, proved, &b, err);
        else st = proved ? xf_verify_bounded_cross(v, r, &b, err)
                         : xf_verify_bounded_refute(v, r, &b, err);
    }
    if (st == XF_OK) {
        m->bounded = b.result;
        m->bounded_proves = b.proves;
        m->bounded_ms = b.time_ms + probe_ms;
        m->bounded_shape = b.shape_index;
        m->bounded_why = b.why;
        m->rlimit_used += b.rlimit_used;
        snprintf(m->bounded_detail, sizeof m->bounded_detail, "%s", b.detail);
        if (b.result == XF_BOUNDED_REFUTED)
            st = xf_verify_cex_encode(b.inputs, b.n_inputs, cex, cex_len, err);
    }
    /* a proof by the own shapes holds with the generators at their own
     * size (bounded_ties.c, strict) and every input dim it read at its own
     * size there (b.held: a reshape's merged axis fixed through its parts
     * too): its domain says so; a rule checked at its own shapes alone
     * (--max-shapes 1) holds there, as far as anyone knows */
    int by_shapes = p.result != XF_PROOF_PROVED && b.result == XF_BOUNDED_VALID && b.proves;
    int own_only = b.n_shapes <= 1 &&
                   (vf_verifier_options(v)->bounded_max_shapes <= 1 || b.n_admissible > 1);
    if (st == XF_OK && by_shapes) st = pin_own_reads(r, &b, err);
    else if (st == XF_OK && (own_only || p.held_all)) st = pin_own_shapes(r, err);
    /* a proof that read dims at their own size holds where they keep it
     * (prove_encode.c); the check above ran on the whole domain, so the
     * verdict is what it was without this */
    else if (st == XF_OK && p.result == XF_PROOF_PROVED && p.n_held)
        st = xf_domain_of_rule_held(r, p.held, p.n_held, &r->domain, err);
    if (st == XF_OK) st = domain_text(r, m, err);
    xf_bounded_free(&b);
    xf_rule_free(r);
    return st;
}

int vf_worker(vf_loaded *job, xf_verifier *v, int fd)
{
    v->exiting = 1; /* this process ends with the rule: its Z3 contexts go with it */
    vf_patterns_forked(v->patterns); /* what it reads now goes back to the parent */
    xv_msg m;
    memset(&m, 0, sizeof m);
    m.proof = XF_PROOF_UNKNOWN;
    m.bounded = XF_BOUNDED_UNKNOWN;
    uint8_t *cex = NULL;
    size_t cex_len = 0;
    xf_error err;
    xf_error_clear(&err);
    if (decide(job, v, &m, &cex, &cex_len, &err) != XF_OK) {
        m.failed = 1;
        m.proof = XF_PROOF_UNKNOWN;
        m.bounded = XF_BOUNDED_UNKNOWN;
        snprintf(m.errmsg, sizeof m.errmsg, "%s", err.msg);
        xf_free(cex);
        cex = NULL;
        cex_len = 0;
    }
    m.cex_len = (uint32_t)cex_len;
    /* the verdict first: a worker that dies while sending its patterns has
     * still sent it */
    size_t patterns_len = 0;
    const uint8_t *patterns = vf_patterns_own(v->patterns, &patterns_len, &m.patterns_reused);
    m.patterns_len = (uint32_t)patterns_len;
    int rc = xf_fd_write_all(fd, &m, sizeof m) || (cex_len && xf_fd_write_all(fd, cex, cex_len)) ||
                     (patterns_len && xf_fd_write_all(fd, patterns, patterns_len))
                 ? 1
                 : 0;
    xf_free(cex);
    return rc;
}
