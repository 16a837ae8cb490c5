/*
 * arbiter.c — xf_agent_arbitrate: the model a search hands out, chosen by
 * timing its candidates where the model will run (the target runtime,
 * target/target.h), not by the cost model.
 *
 * Why: the cost model sums one-thread kernel times of unfused operators,
 * while ONNX Runtime fuses bias adds, GELU, layer norms and MatMul+Add
 * itself; a rewrite the cost model likes can break a fusion and make the
 * model slower where it runs. The arbiter therefore finishes the search's
 * cheapest distinct graphs as they would be written, drops the ones the
 * interpreter says compute something else and the duplicates (a model
 * that only swaps the operands of an add, mul, min or max against one
 * listed is the same model to the target: timing it again would only give
 * the winner another draw of the noise, and the smallest of many draws
 * reads low), times the rest with the input in
 * alternation, and writes the fastest only when it beats the input beyond
 * the noise (xf_target_verdict: its whole 95% interval below 1 and below
 * the interval of the input against a second session of itself), and again
 * in a second run of it against the input alone (run again four times as
 * long when it cannot tell). When none is faster in the
 * run of all (at two threads on two cores a few-percent gain is inside the
 * 21-round interval), the fastest of those the run could not tell from
 * the input gets a closer look: a run of
 * it against the input alone with four times the rounds, whose interval is
 * about half as wide, and its confirming run is as long. The chosen model's
 * outputs in the target must also equal the input's there; else the input
 * is written. Never a model measured slower.
 *
 * At more than one thread (pairwise) each candidate is timed in a run of
 * its own against the input, with its own self check, instead of all in
 * one run: with a dozen models a round is long, and at two threads on two
 * cores the rounds of a run of all disagree.
 *
 * Each candidate is also offered in its unbatched layout
 * (xf_agent_unbatch: batch-1 activations without their leading unit dim),
 * a variant that only some runtimes run faster: the target decides. So are
 * the candidates of several searches of the same model (e.g. prepared with
 * its scalings moved and kept in place, xf_prepare_alternative): each
 * search brings up to max_models of its own.
 */
#include <stdio.h>
#include <string.h>

#include "agent/search/search_internal.h"

xf_arbiter_options xf_arbiter_options_default(void)
{
    xf_arbiter_options o;
    memset(&o, 0, sizeof o);
    o.max_models = 6;
    o.seed = 1;
    o.rtol = 1e-3;
    o.atol = 1e-4;
    o.target_rtol = 1e-4;
    o.unbatch = 1;
    o.close_rounds = 84;
    o.pairwise = -1;
    return o;
}

void xf_arbiter_result_free(xf_arbiter_result *r)
{
    if (!r) return;
    xf_free(r->e);
    memset(r, 0, sizeof *r);
}

void xf_arbiter_entry_name(const xf_arbiter_entry *e, char *buf, size_t n)
{
    const char *layout = e->unbatched ? " 2-D" : "";
    if (e->candidate < 0) snprintf(buf, n, "input");
    else if (e->search > 0) snprintf(buf, n, "cand %d:%d%s", e->search, e->candidate, layout);
    else snprintf(buf, n, "cand %d%s", e->candidate, layout);
}

/* The finished models being weighed: models[0] is the input (not owned). */
typedef struct pool {
    int n;
    xf_graph *fin;         /* fin[i] for i >= 1; fin[0] unused */
    const xf_graph **models;
    uint64_t *hash;        /* XF_HASH_UNORDERED hash of each: operands of add, mul, min
                              and max swapped is the same model to the target */
} pool;

static void pool_free(pool *p, int keep)
{
    for (int i = 1; i < p->n; i++)
        if (i != keep) xf_graph_free(&p->fin[i]);
    xf_free(p->fin);
    xf_free(p->models);
    xf_free(p->hash);
}

/* res->e has room for every candidate and the input. */
static xf_status add_entry(xf_arbiter_result *res, int search, int cand, xf_arbiter_verdict v,
                           const xf_graph *g, xf_cost_model *cm, xf_error *err)
{
    xf_arbiter_entry *e = &res->e[res->n++];
    memset(e, 0, sizeof *e);
    e->search = search;
    e->candidate = cand;
    e->verdict = v;
    e->n_nodes = g->n_nodes;
    return cm ? xf_agent_model_cost(cm, g, &e->cost_ms, err) : XF_OK;
}

/* The order candidates are looked at: the start graph first (the model
 * only prepared, no rewrite: how rlflow writes it, layer norms fused, may
 * already run differently in the target), then the cheapest of each
 * distinct cost, then the rest cheapest first. Candidates of equal cost are
 * mostly the same rewrites in another order or place; distinct costs reach
 * further for the few models the target can time. */
static void candidate_order(const xf_search_result *sr, int *order)
{
    int k = 0;
    for (int c = 0; c < sr->n_candidates; c++)
        if (sr->candidates[c].n_applied == 0) order[k++] = c;
    for (int c = 0; c < sr->n_candidates; c++) {
        if (sr->candidates[c].n_applied == 0) continue;
        if (c > 0 && sr->candidates[c].ms == sr->candidates[c - 1].ms) continue;
        order[k++] = c;
    }
    for (int c = 0; c < sr->n_candidates; c++) {
        if (sr->candidates[c].n_applied == 0) continue;
        if (c > 0 && sr->candidates[c].ms == sr->candidates[c - 1].ms) order[k++] = c;
    }
    if (sr->n_candidates == 0) order[k++] = 0;
}

/* Puts finished model *fin (owned) into the pool when it is new and passes
 * the interpreter check, freeing it otherwise; one entry either way.
 * *timed: it went into the pool. */
static xf_status offer(xf_cost_model *cm, const xf_graph *model, const xf_arbiter_options *o,
                       int search, int cand, int unbatched, xf_graph *fin, pool *p,
                       xf_arbiter_result *res, int *entry_of, int *timed, xf_error *err)
{
    *timed = 0;
    uint64_t h = 0;
    xf_status st = xf_graph_hash_checked(fin, XF_HASH_UNORDERED, &h, err);
    int dup = 0;
    for (int i = 0; i < p->n && !st; i++) dup |= p->hash[i] == h;
    xf_check_result chk = {0};
    xf_status cst = XF_OK;
    if (!st && !dup) {
        xf_error cerr = {0};
        cst = xf_interp_check(model, fin, o->seed, o->rtol, o->atol, &chk, &cerr);
        if (cst == XF_ERR_NOMEM) {
            if (err) *err = cerr;
            st = cst;
        }
    }
    xf_arbiter_verdict v = dup ? XF_ARBITER_DUPLICATE
                           : (cst || chk.bad_output >= 0) ? XF_ARBITER_WRONG
                                                         : XF_ARBITER_TIMED;
    if (!st) st = add_entry(res, search, cand, v, fin, cm, err);
    if (!st) res->e[res->n - 1].unbatched = unbatched;
    if (st || v != XF_ARBITER_TIMED) {
        xf_graph_free(fin);
        return st;
    }
    p->fin[p->n] = *fin;
    p->models[p->n] = &p->fin[p->n];
    p->hash[p->n] = h;
    entry_of[p->n] = res->n - 1;
    p->n++;
    *timed = 1;
    return XF_OK;
}

/* The unbatched layout of pooled model `at` (xf_agent_unbatch), finished
 * and offered as a variant of candidate cand when it differs. A variant
 * that cannot be made (anything but memory) is an entry of its own, not
 * the end of the run: the candidate itself is still timed. */
static xf_status offer_unbatched(xf_cost_model *cm, const xf_graph *model,
                                 const xf_arbiter_options *o, int search, int cand, int at,
                                 pool *p, xf_arbiter_result *res, int *entry_of, xf_error *err)
{
    xf_graph ub, fin;
    int n_dropped = 0, timed = 0;
    xf_error verr = {0};
    xf_status st = xf_agent_unbatch(p->models[at], &ub, &n_dropped, &verr);
    if (!st) {
        if (n_dropped > 0) st = xf_agent_finish(&ub, &fin, NULL, &verr);
        xf_graph_free(&ub);
    }
    if (st == XF_ERR_NOMEM) {
        if (err) *err = verr;
        xf_error_prefix(err, "candidate %d unbatched", cand);
        return st;
    }
    if (st) {
        st = add_entry(res, search, cand, XF_ARBITER_NOT_BUILT, p->models[at], NULL, err);
        if (!st) res->e[res->n - 1].unbatched = 1;
        return st;
    }
    if (n_dropped == 0) return XF_OK;
    return offer(cm, model, o, search, cand, 1, &fin, p, res, entry_of, &timed, err);
}

/* Finishes, dedupes and checks search `search`'s candidates into the pool
 * (at most o->max_models new ones); one entry per candidate looked at, and
 * per unbatched variant (o->unbatch). */
static xf_status gather_search(xf_cost_model *cm, const xf_graph *model, const xf_search_result *sr,
                               int search, const xf_arbiter_options *o, pool *p,
                               xf_arbiter_result *res, int *entry_of, xf_error *err)
{
    /* A learning agent keeps no candidates: its best graph is the one. */
    int n_cand = sr->n_candidates > 0 ? sr->n_candidates : 1;
    int *order = xf_malloc((size_t)n_cand * sizeof *order);
    if (!order) return XF_FAIL(err, XF_ERR_NOMEM, "arbiter: out of memory");
    candidate_order(sr, order);
    xf_status st = XF_OK;
    for (int k = 0, n_timed = 0; k < n_cand && !st && n_timed < o->max_models; k++) {
        int c = order[k];
        xf_graph fin;
        xf_finish_stats fs;
        st = xf_agent_finish(sr->n_candidates > 0 ? &sr->candidates[c].g : &sr->best, &fin, &fs,
                             err);
        if (st) {
            xf_error_prefix(err, "finishing candidate %d of search %d", c, search);
            break;
        }
        int timed = 0;
        st = offer(cm, model, o, search, c, 0, &fin, p, res, entry_of, &timed, err);
        n_timed += timed;
        if (!st && timed && o->unbatch)
            st = offer_unbatched(cm, model, o, search, c, p->n - 1, p, res, entry_of, err);
    }
    xf_free(order);
    return st;
}

/* The input, then every search's candidates, into the pool. */
static xf_status gather(xf_cost_model *cm, const xf_graph *model,
                        const xf_search_result *const *srs, int n_searches,
                        const xf_arbiter_options *o, pool *p, xf_arbiter_result *res,
                        int *entry_of, xf_error *err)
{
    xf_status st = xf_graph_hash_checked(model, XF_HASH_UNORDERED, &p->hash[0], err);
    p->models[0] = model;
    p->n = 1;
    entry_of[0] = 0;
    if (!st) st = add_entry(res, 0, -1, XF_ARBITER_INPUT, model, cm, err);
    for (int s = 0; s < n_searches && !st; s++)
        st = gather_search(cm, model, srs[s], s, o, p, res, entry_of, err);
    return st;
}

/* The target's timing options under o, with the self check; rounds 0:
 * o's (the target's default). */
static xf_target_timing_options timing_of(const xf_arbiter_options *o, int rounds)
{
    xf_target_timing_options to = o->timing;
    to.seed = o->seed;
    to.self_check = 1;
    if (rounds > 0) to.rounds = rounds;
    return to;
}

/* A run of the input against model g alone (with the input's self check);
 * rounds 0: the target's default. out[0] the input's timing, out[1] g's;
 * *self the self check (may be NULL); *verdict: xf_target_verdict's (< 0:
 * g faster beyond the noise, 0: cannot tell, > 0: slower). */
static xf_status pair_run(xf_target *t, const xf_arbiter_options *o, const xf_graph *model,
                          const xf_graph *g, int rounds, xf_target_timing out[2],
                          xf_target_timing *self, int *verdict, xf_error *err)
{
    const xf_graph *pair[2] = {model, g};
    xf_target_timing s;
    xf_target_timing_options to = timing_of(o, rounds);
    xf_status st = xf_target_compare(t, pair, 2, &to, out, &s, err);
    *verdict = st ? 1 : xf_target_verdict(&out[1], &s);
    if (!st && self) *self = s;
    return st;
}

/* The closer look or confirming run of g into *into. */
static xf_status pair_into(xf_target *t, const xf_arbiter_options *o, const xf_graph *model,
                           const xf_graph *g, int rounds, xf_target_timing *into, int *verdict,
                           xf_error *err)
{
    xf_target_timing two[2];
    xf_status st = pair_run(t, o, model, g, rounds, two, NULL, verdict, err);
    if (!st) *into = two[1];
    return st;
}

/* Times every model: all in one run with one self check, or (pairwise)
 * each candidate in a run of its own against the input; tm[i] and each
 * entry's self check filled, res->self the run of all's or the widest. */
static xf_status time_models(xf_target *t, const xf_arbiter_options *o, int pairwise,
                             const pool *p, xf_target_timing *tm, xf_arbiter_result *res,
                             const int *entry_of, xf_error *err)
{
    xf_status st = XF_OK;
    xf_target_timing_options to = timing_of(o, 0);
    if (!pairwise || p->n == 1) { /* a run of all (or of the input alone) */
        st = xf_target_compare(t, p->models, p->n, &to, tm, &res->self, err);
        for (int i = 0; !st && i < p->n; i++)
            res->e[entry_of[i]].self = res->self, res->e[entry_of[i]].input_ms = tm[0].median_ms;
        return st;
    }
    for (int i = 1; !st && i < p->n; i++) {
        xf_target_timing two[2], self;
        int verdict;
        st = pair_run(t, o, p->models[0], p->models[i], 0, two, &self, &verdict, err);
        if (st) break;
        if (i == 1) tm[0] = two[0];
        tm[i] = two[1];
        res->e[entry_of[i]].self = self;
        res->e[entry_of[i]].input_ms = two[0].median_ms;
        if (i == 1 || self.noise > res->self.noise) res->self = self;
    }
    res->e[entry_of[0]].self = res->self;
    res->e[entry_of[0]].input_ms = tm[0].median_ms;
    return st;
}

/* The pooled model with the smallest ratio among those still timed
 * (XF_ARBITER_TIMED) whose verdict against their self check is faster
 * (want < 0) or cannot tell (want == 0); 0: none. */
static int fastest(const pool *p, const xf_target_timing *tm, const xf_arbiter_result *res,
                   const int *entry_of, int want)
{
    int c = 0;
    for (int i = 1; i < p->n; i++) {
        const xf_arbiter_entry *e = &res->e[entry_of[i]];
        int v = xf_target_verdict(&tm[i], &e->self);
        if (e->verdict == XF_ARBITER_TIMED && (want < 0 ? v < 0 : v == want) &&
            (c == 0 || tm[i].ratio < tm[c].ratio))
            c = i;
    }
    return c;
}

xf_status xf_agent_arbitrate(xf_target *t, xf_cost_model *cm, const xf_graph *model,
                             const xf_search_result *const *srs, int n_searches,
                             const xf_arbiter_options *o, xf_graph *out, xf_arbiter_result *res,
                             xf_error *err)
{
    xf_arbiter_options opt = o ? *o : xf_arbiter_options_default();
    double t0 = xf_clock_now();
    memset(res, 0, sizeof *res);
    xf_graph_init(out);
    if (opt.max_models < 1)
        return XF_FAIL(err, XF_ERR_INVALID, "arbiter: max_models (%d) must be >= 1",
                       opt.max_models);
    if (n_searches < 1)
        return XF_FAIL(err, XF_ERR_INVALID, "arbiter: no search to choose from (%d)", n_searches);
    /* each candidate and its unbatched variant, and the input */
    int cap = 1, models_cap = 2 * opt.max_models * n_searches + 1;
    for (int s = 0; s < n_searches; s++)
        cap += 2 * (srs[s]->n_candidates > 0 ? srs[s]->n_candidates : 1);
    pool p = {0};
    int *entry_of = xf_calloc((size_t)models_cap, sizeof *entry_of);
    xf_target_timing *tm = xf_calloc((size_t)models_cap, sizeof *tm);
    res->e = xf_calloc((size_t)cap, sizeof *res->e);
    p.fin = xf_calloc((size_t)models_cap, sizeof *p.fin);
    p.models = xf_calloc((size_t)models_cap, sizeof *p.models);
    p.hash = xf_calloc((size_t)models_cap, sizeof *p.hash);
    xf_status st = XF_OK;
    if (!entry_of || !tm || !res->e || !p.fin || !p.models || !p.hash)
        st = XF_FAIL(err, XF_ERR_NOMEM, "arbiter: out of memory");
    if (!st) st = gather(cm, model, srs, n_searches, &opt, &p, res, entry_of, err);
    int pairwise = opt.pairwise < 0 ? xf_target_threads(t) > 1 : opt.pairwise;
    res->pairwise = pairwise;
    if (!st) {
        st = time_models(t, &opt, pairwise, &p, tm, res, entry_of, err);
        if (st) xf_error_prefix(err, "timing the candidates in the target");
    }
    for (int i = 0; i < p.n && !st; i++) res->e[entry_of[i]].t = tm[i];
    int best = st ? 0 : fastest(&p, tm, res, entry_of, -1);
    /* None faster beyond the noise of the run of all: a closer look at the
     * fastest of those it could not tell from the input, if its outputs in
     * the target are the input's. */
    int confirm_rounds = 0;
    if (!st && best == 0 && opt.close_rounds > 0) {
        int c = fastest(&p, tm, res, entry_of, 0);
        double rel = 0;
        if (c > 0) st = xf_target_outputs_diff(t, model, p.models[c], opt.seed, &rel, err);
        int verdict = 1;
        if (!st && c > 0 && rel <= opt.target_rtol) {
            st = pair_into(t, &opt, model, p.models[c], opt.close_rounds,
                           &res->e[entry_of[c]].closer, &verdict, err);
            if (st) xf_error_prefix(err, "the closer look at the fastest undecided candidate");
        }
        if (verdict < 0) best = c, confirm_rounds = opt.close_rounds;
    }
    /* The winner must compute the same in the target, and be faster again
     * in a second alternating run of it against the input alone: a burst of
     * load from another process can fake one verdict, rarely two. A short
     * confirming run that cannot tell (at two threads on two cores a gain of
     * 5-8% can sit inside a 21-round interval) is run again with
     * close_rounds, and that longer run decides. */
    while (!st && best > 0) {
        xf_arbiter_entry *w = &res->e[entry_of[best]];
        st = xf_target_outputs_diff(t, model, p.models[best], opt.seed, &res->max_rel, err);
        int close = !st && res->max_rel <= opt.target_rtol;
        if (close) {
            int verdict = 1;
            st = pair_into(t, &opt, model, p.models[best], confirm_rounds, &w->confirm,
                           &verdict, err);
            if (!st && verdict == 0 && confirm_rounds == 0 && opt.close_rounds > 0)
                st = pair_into(t, &opt, model, p.models[best], opt.close_rounds, &w->confirm,
                               &verdict, err);
            if (st) xf_error_prefix(err, "confirming the fastest candidate");
            if (verdict < 0) break;
        }
        if (st) break;
        w->verdict = close ? XF_ARBITER_UNCONFIRMED : XF_ARBITER_TARGET_WRONG;
        res->max_rel = 0;
        best = fastest(&p, tm, res, entry_of, -1);
    }
    if (!st) {
        res->chosen = entry_of[best];
        if (best > 0) {
            res->e[entry_of[best]].verdict = XF_ARBITER_CHOSEN;
            *out = p.fin[best];
        } else {
            st = xf_graph_clone(model, out, err);
        }
    }
    pool_free(&p, st ? -1 : best);
    xf_free(entry_of);
    xf_free(tm);
    res->seconds = xf_clock_now() - t0;
    if (st) {
        xf_graph_free(out);
        xf_arbiter_result_free(res);
        xf_error_prefix(err, "arbiter");
    }
    return st;
}
