/*
 * arbiter.c — xf_agent_arbitrate: the model a search hands out, chosen by
 * timing its candidates where the model will run (the target runtime,
 * target/target.h), not by the cost model.
 *
 * Why: the cost model sums one-thread kernel times of unfused operators,
 * while ONNX Runtime fuses bias adds, GELU, layer norms and MatMul+Add
 * itself; a rewrite the cost model likes can break a fusion and make the
 * model slower where it runs.
 *
 * How, in bounded memory and time (a BERT-base's candidates, all loaded at
 * once with a copy of the weights each, were killed at 24 GB):
 *  - the input's weights are shared with every session (target/share.c):
 *    candidates borrow them (finishing keeps borrowed constants borrowed),
 *    so a session costs the candidate's new constants and activations;
 *  - candidates are finished one at a time as a slot frees, per search
 *    the start graph and the cheapest first, then their unbatched layouts
 *    (xf_agent_unbatch, a variant of each candidate), then the rest
 *    cheapest first, each followed by its variant; a repeat (with a cost
 *    model: the same nodes and cost as written as a model offered before,
 *    the same rewrites elsewhere) waits until the searches have no
 *    distinct model left; a repeat, and any model after the budget's plan
 *    (budget_models, below), joins only while the confirmation in full
 *    still fits after it (on a slower machine BERT-base's repeats took the
 *    time its winner's confirmation needed); a duplicate (up to
 *    swapped operands of add, mul, min, max:
 *    the same model to the target, and timing it again would only give the
 *    winner another draw of the noise) is dropped, and so is a model whose
 *    outputs in the target differ from the input's (checked on the warm-up
 *    run, no extra run);
 *  - a race (xf_target_race) keeps the input and a second session of it
 *    (the self check) loaded while `racing` candidates (one when pairwise)
 *    take turns with them; a candidate leaves as soon as its interval
 *    decides against the self check's over the same rounds (faster or
 *    slower beyond the noise, after min_rounds) or after timing.rounds, and
 *    the next one takes its slot: sessions alive are racing + 2 whatever
 *    the number of candidates, and rounds follow the model's latency (a
 *    round is about round_ms of runs of each model, at least one run);
 *  - when two or more are found faster, the fastest `finalists` of them
 *    (by race ratio) run a final: timed together against the input (its
 *    file with input_file) and its self check for close_rounds rounds,
 *    over the same rounds, so that their ratios compare; one whose
 *    interval lies wholly above another's leaves early (successive
 *    elimination); of those left and faster beyond the noise, the
 *    cheapest by the cost model among the fastest and those the final
 *    cannot tell from it is written (xf_arbiter_pick) after the
 *    interpreter check. Why: the race's fastest of many near-equal
 *    candidates is the minimum of many noisy draws, a different model from
 *    run to run; the final is their confirming run;
 *  - else the fastest candidate found faster must pass the interpreter check
 *    and be faster again in a second run of it against the input alone
 *    (run again with close_rounds when it cannot tell: a burst of load can
 *    fake one verdict, rarely two); when none is faster, the fastest of
 *    those the race could not tell from the input gets a closer look (a
 *    run against the input alone with close_rounds, an interval about half
 *    as wide) and, if faster there, the same confirmation; with
 *    o->input_file (a model of at most XF_ARBITER_FILE_MAX_BYTES of
 *    weights) those runs are against the user's file itself, which is what
 *    is written when the input is kept: an export can run at another speed;
 *  - budget_s bounds the whole: racing stops taking candidates when what
 *    is left would not cover the confirmation, and a closer look or a
 *    confirming run is shortened to what fits (or skipped). With
 *    budget_max_s above it, the budget is planned once, from a round of
 *    the input and its self check before any candidate joins: what
 *    budget_models models and a confirmation take at the input's latency
 *    (xf_arbiter_budget), at least budget_s and at most budget_max_s. Why:
 *    at a BERT-base's 0.3 s a run a race round is a second, and 90 s
 *    raced three models and left the one found faster no time to be
 *    confirmed, while a small model's plan stays under budget_s; mem_limit
 *    bounds the sessions' estimated memory: fewer candidates at once, a
 *    candidate that would not fit alone is not timed, and when the input's
 *    two sessions do not fit the arbiter refuses and keeps the input.
 * Never a model measured slower.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "agent/search/search_internal.h"

#define DEFAULT_RACING 1
#define DEFAULT_MIN_ROUNDS 7
#define DEFAULT_FINALISTS 3
#define DEFAULT_FINAL_ROUNDS 84 /* a final's rounds when close_rounds is 0 */
#define DEFAULT_BUDGET_MODELS 4 /* the start graph and the cheapest, both layouts */
/* Seconds a session takes to load, warm up and be freed, for planning
 * until one has been measured (a BERT-base's: 0.2-0.5 s and its warm-up). */
#define LOAD_S 1.0

xf_arbiter_options xf_arbiter_options_default(void)
{
    xf_arbiter_options o;
    memset(&o, 0, sizeof o);
    o.max_models = 6;
    o.seed = 1;
    o.rtol = XF_TOL_MODEL.rtol;
    o.atol = XF_TOL_MODEL.atol;
    o.target_rtol = 1e-4;
    o.unbatch = 1;
    o.close_rounds = 84;
    o.pairwise = -1;
    o.racing = DEFAULT_RACING;
    o.min_rounds = DEFAULT_MIN_ROUNDS;
    o.finalists = DEFAULT_FINALISTS;
    o.budget_models = DEFAULT_BUDGET_MODELS;
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

/* A finished model. A candidate's unbatched variant borrows the
 * candidate's folded constants: the model lives as long as either uses it. */
typedef struct finished {
    xf_graph g;
    int refs;
} finished;

/* A model weighed, with its entry (search, candidate and layout say how
 * to finish it again). Its graph is held only while it is needed: once its
 * session is loaded it is released (the candidate's folded constants are a
 * quarter of a BERT-base's weights) and finished again when a winner is
 * checked, confirmed or written. */
typedef struct held {
    int entry;
    int slot;         /* race slot while racing */
    double rel;       /* its outputs in the target against the input's */
    double need;      /* its session's estimated bytes */
    finished *f;      /* the model (NULL: released) */
    finished *parent; /* the candidate a variant borrows from (NULL: none) */
} held;

typedef struct arb {
    xf_target *t;
    xf_cost_model *cm;
    const xf_graph *model;
    const xf_search_result *const *srs;
    int n_searches;
    xf_arbiter_options o;
    xf_arbiter_result *res;
    int cap;               /* room in res->e */
    uint64_t *hash;        /* every model offered (XF_HASH_UNORDERED) */
    int n_hash;
    /* the stream of candidates */
    int search, k, *order, n_order;
    int *timed;            /* per search: candidates raced, and repeats waiting */
    int *families;         /* entries of the first model offered of each family (same
                              nodes and cost as written) */
    int n_families;
    int *repeats;          /* entries of the repeats, in the order offered (like) */
    int n_repeats, next_repeat;
    held queue[2];         /* finished, waiting for a slot */
    int n_queue;
    int n_raced;
    /* the race */
    xf_target_race *race;
    held *racing;
    int n_racing, slots;
    double act_bytes;      /* estimated activations of one session */
    double used_bytes;     /* estimated bytes of the sessions alive */
    double input_ms;
    double share_ms;       /* a model's share of a race round as measured, a running
                              mean (0: none yet); plans runs after the race */
    double load_s;         /* the longest a candidate took to join (load, warm up) */
    double budget_s;       /* o.budget_s, or as planned (xf_arbiter_budget) */
    /* kept after the race */
    held *faster;          /* decided faster, by ratio */
    int n_faster;
    held undecided;        /* the fastest the race could not tell from the input */
    int has_undecided;
    double t0;
} arb;

static double elapsed(const arb *a)
{
    return xf_clock_now() - a->t0;
}

/* Seconds left of the budget (a large number without one). */
static double left(const arb *a)
{
    return a->budget_s > 0 ? a->budget_s - elapsed(a) : 1e30;
}

/* A run of the input against n models (and the self check) over
 * `rounds`, a model's share of a round share_ms: its expected seconds. */
static double run_seconds_at(double share_ms, double load_s, int n, int rounds)
{
    return (n + 2) * ((load_s > LOAD_S ? load_s : LOAD_S) + rounds * share_ms / 1000.0);
}

/* A model's share of a round the plans after the race count on. */
static double share_ms_of(const arb *a)
{
    double share_ms = a->input_ms > a->o.timing.round_ms ? a->input_ms
                      : a->o.timing.round_ms > 0         ? a->o.timing.round_ms
                                                         : 25.0;
    /* as measured in the race: under load a round takes several times its plan */
    return a->share_ms > share_ms ? a->share_ms : share_ms;
}

static double run_seconds(const arb *a, int n, int rounds)
{
    return run_seconds_at(share_ms_of(a), a->load_s, n, rounds);
}

double xf_arbiter_budget(const xf_arbiter_options *o, double share_ms, double load_s,
                         double spent_s)
{
    if (!(o->budget_s > 0) || !(o->budget_max_s > o->budget_s)) return o->budget_s;
    int rounds = o->timing.rounds > 0 ? o->timing.rounds : 21;
    int models = o->budget_models > 0 ? o->budget_models : DEFAULT_BUDGET_MODELS;
    double round_ms = o->timing.round_ms > 0 ? o->timing.round_ms : 25.0;
    double share_s = (share_ms > round_ms ? share_ms : round_ms) / 1000.0;
    double load = load_s > LOAD_S ? load_s : LOAD_S;
    /* the race: each model joins, then runs its rounds beside the input
     * and the self check */
    double race_s = models * (load + 3.0 * rounds * share_s);
    /* then the winner against the input alone: three sessions loaded, the
     * default length, and close_rounds when that cannot tell */
    double confirm_s = 3.0 * (load + rounds * share_s);
    if (o->close_rounds > 0) confirm_s += 3.0 * (load + o->close_rounds * share_s);
    double s = spent_s + race_s + confirm_s;
    return s < o->budget_s ? o->budget_s : s > o->budget_max_s ? o->budget_max_s : s;
}

static void unref(finished *f)
{
    if (f && --f->refs == 0) {
        xf_graph_free(&f->g);
        xf_free(f);
    }
}

/* Lets go of h's graphs (they are finished again when needed). */
static void release(held *h)
{
    unref(h->f);
    unref(h->parent);
    h->f = h->parent = NULL;
}

static void held_free(held *h)
{
    release(h);
    memset(h, 0, sizeof *h);
}

static finished *new_finished(xf_graph *g, xf_error *err)
{
    finished *f = xf_calloc(1, sizeof *f);
    if (!f) {
        xf_graph_free(g);
        XF_FAIL(err, XF_ERR_NOMEM, "arbiter: out of memory");
        return NULL;
    }
    f->g = *g;
    f->refs = 1;
    return f;
}

/* Copies the constants of g that are parent's own buffers (a variant's
 * chosen model must not borrow from a candidate the arbiter frees). */
static xf_status own_from(xf_graph *g, const xf_graph *parent, xf_error *err)
{
    for (int v = 0; v < g->n_values; v++) {
        xf_value *c = &g->values[v];
        if (c->kind != XF_VALUE_CONST || !c->borrowed) continue;
        int from_parent = 0;
        for (int u = 0; u < parent->n_values && !from_parent; u++)
            from_parent = parent->values[u].kind == XF_VALUE_CONST &&
                          !parent->values[u].borrowed && parent->values[u].data == c->data;
        if (!from_parent) continue;
        size_t bytes = (size_t)xf_shape_numel(&c->shape) * xf_dtype_size(c->dtype);
        void *copy = xf_malloc(bytes ? bytes : 1);
        if (!copy) return XF_FAIL(err, XF_ERR_NOMEM, "arbiter: out of memory");
        if (bytes) memcpy(copy, c->data, bytes);
        c->data = copy;
        c->borrowed = 0;
    }
    return XF_OK;
}

/* res->e has room for every candidate and the input. */
static xf_status add_entry(arb *a, int search, int cand, xf_arbiter_verdict v, const xf_graph *g,
                           xf_error *err)
{
    xf_arbiter_result *res = a->res;
    if (res->n == a->cap) return XF_FAIL(err, XF_ERR_INTERNAL, "arbiter: too many entries");
    xf_arbiter_entry *e = &res->e[res->n++];
    memset(e, 0, sizeof *e);
    e->search = search;
    e->candidate = cand;
    e->verdict = v;
    e->n_nodes = g->n_nodes;
    return a->cm ? xf_agent_model_cost(a->cm, g, &e->cost_ms, err) : XF_OK;
}

/* The order candidates are looked at: the start graph first (the model
 * only prepared, no rewrite: how rlflow writes it, layer norms fused, may
 * already run differently in the target), then the cheapest of each
 * distinct cost, then the rest cheapest first. Candidates of equal cost are
 * mostly the same rewrites in another order or place; distinct costs reach
 * further for the few models the target can time. (The start graph's
 * unbatched variant races after the cheapest: with_the_start.) */
static int candidate_order(const xf_search_result *sr, int *order)
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
    return k;
}

/* Whether entries x and y are one family: the same nodes and cost as
 * written (the same rewrites in other places or orders; the modelzoo
 * BERT-base's cand 0 to 3 were one 372-node model by the cost model, and
 * the target ran them within each other's noise). */
static int one_family(const xf_arbiter_entry *x, const xf_arbiter_entry *y)
{
    double tol = 1e-6 * (fabs(x->cost_ms) > fabs(y->cost_ms) ? fabs(x->cost_ms) : fabs(y->cost_ms));
    return x->n_nodes == y->n_nodes && fabs(x->cost_ms - y->cost_ms) <= tol;
}

/* The entry of the first model offered of e's family (0: e is the first,
 * or there is no cost model: then every model is its own). */
static int family_of(const arb *a, const xf_arbiter_entry *e)
{
    if (!a->cm) return 0;
    for (int i = 0; i < a->n_families; i++)
        if (one_family(&a->res->e[a->families[i]], e)) return a->families[i];
    return 0;
}

/* Queues finished model *fin (owned; a variant borrowing from `parent`)
 * when it is new, freeing it otherwise; one entry either way. A repeat
 * of a family offered before (family_of) is freed too and waits in
 * a->repeats: it races after every distinct model (finished again then).
 * *queued: it was queued. */
static xf_status offer(arb *a, int search, int cand, int unbatched, xf_graph *fin,
                       finished *parent, int *queued, xf_error *err)
{
    *queued = 0;
    uint64_t h = 0;
    xf_status st = xf_graph_hash_checked(fin, XF_HASH_UNORDERED, &h, err);
    int dup = 0;
    for (int i = 0; i < a->n_hash && !st; i++) dup |= a->hash[i] == h;
    if (!st) st = add_entry(a, search, cand, dup ? XF_ARBITER_DUPLICATE : XF_ARBITER_TIMED, fin,
                            err);
    if (!st) a->res->e[a->res->n - 1].unbatched = unbatched;
    if (st || dup) {
        xf_graph_free(fin);
        return st;
    }
    a->hash[a->n_hash++] = h;
    xf_arbiter_entry *e = &a->res->e[a->res->n - 1];
    e->like = family_of(a, e);
    if (e->like > 0) {
        xf_graph_free(fin);
        a->repeats[a->n_repeats++] = a->res->n - 1;
        if (!unbatched) a->timed[search]++;
        return XF_OK;
    }
    a->families[a->n_families++] = a->res->n - 1;
    finished *f = new_finished(fin, err);
    if (!f) return XF_ERR_NOMEM;
    held *q = &a->queue[a->n_queue++];
    memset(q, 0, sizeof *q);
    q->entry = a->res->n - 1;
    q->f = f;
    q->parent = parent;
    if (parent) parent->refs++;
    *queued = 1;
    return XF_OK;
}

/* The unbatched layout of queued model q, finished and offered as a
 * variant of candidate cand when it differs. A variant that cannot be made
 * (anything but memory) is an entry of its own, not the end of the run:
 * the candidate itself is still timed. */
static xf_status offer_unbatched(arb *a, int search, int cand, finished *parent, xf_error *err)
{
    const xf_graph *q = &parent->g;
    xf_graph ub, fin;
    int n_dropped = 0, queued = 0;
    xf_error verr = {0};
    xf_status st = xf_agent_unbatch(q, &ub, &n_dropped, &verr);
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
        st = add_entry(a, search, cand, XF_ARBITER_NOT_BUILT, q, err);
        if (!st) a->res->e[a->res->n - 1].unbatched = 1;
        return st;
    }
    if (n_dropped == 0) return XF_OK;
    return offer(a, search, cand, 1, &fin, parent, &queued, err);
}

/* The working graph candidate c of search s is. */
static const xf_graph *working(const arb *a, int s, int c)
{
    const xf_search_result *sr = a->srs[s];
    return sr->n_candidates > 0 ? &sr->candidates[c].g : &sr->best;
}

/* Whether the queue, holding a search's start graph alone, takes the
 * search's next candidate (its cheapest) too: then the cheapest races
 * before the start graph's unbatched variant, queued when the start graph
 * joins. Why: at a BERT-base's size a race takes a budget's third for
 * three models, and the start graph's variant took the place of the
 * search's answer (2026-11-30). */
static int with_the_start(const arb *a)
{
    if (!a->order || a->k != 1 || a->k >= a->n_order || a->n_queue != 1 ||
        a->timed[a->search] + 1 >= a->o.max_models)
        return 0;
    const xf_search_result *sr = a->srs[a->search];
    const xf_arbiter_entry *q = &a->res->e[a->queue[0].entry];
    return sr->n_candidates > 0 && sr->candidates[a->order[0]].n_applied == 0 &&
           !q->unbatched && q->search == a->search && q->candidate == a->order[0];
}

/* Fills the queue with the next new candidate (with the start graph, the
 * cheapest too), and once the searches have no more, with the next
 * repeat; leaves it empty when there is none. A second candidate queued
 * and a repeat are released until they join (finished again then). */
static xf_status next_candidates(arb *a, xf_error *err)
{
    while ((a->n_queue == 0 || with_the_start(a)) && a->search < a->n_searches) {
        const xf_search_result *sr = a->srs[a->search];
        if (!a->order) {
            int n_cand = sr->n_candidates > 0 ? sr->n_candidates : 1;
            a->order = xf_malloc((size_t)n_cand * sizeof *a->order);
            if (!a->order) return XF_FAIL(err, XF_ERR_NOMEM, "arbiter: out of memory");
            a->n_order = candidate_order(sr, a->order);
            a->k = 0;
        }
        if (a->k >= a->n_order || a->timed[a->search] >= a->o.max_models) {
            xf_free(a->order);
            a->order = NULL;
            a->search++;
            continue;
        }
        int c = a->order[a->k++];
        xf_graph fin;
        xf_status st = xf_agent_finish(working(a, a->search, c), &fin, NULL, err);
        if (st) {
            xf_error_prefix(err, "finishing candidate %d of search %d", c, a->search);
            return st;
        }
        int queued = 0;
        st = offer(a, a->search, c, 0, &fin, NULL, &queued, err);
        if (st) return st;
        if (queued && a->n_queue > 1) release(&a->queue[a->n_queue - 1]);
    }
    while (a->n_queue == 0 && a->search >= a->n_searches && a->next_repeat < a->n_repeats) {
        int entry = a->repeats[a->next_repeat++];
        if (a->res->e[entry].verdict != XF_ARBITER_TIMED) continue; /* dropped with its own */
        held *q = &a->queue[a->n_queue++];
        memset(q, 0, sizeof *q);
        q->entry = entry;
    }
    return XF_OK;
}

/* Repeats not raced yet. */
static int repeats_left(const arb *a)
{
    int n = 0;
    for (int i = a->next_repeat; i < a->n_repeats; i++)
        n += a->res->e[a->repeats[i]].verdict == XF_ARBITER_TIMED;
    return n;
}

/* Finishes h's model again (and its parent for a variant) when it was
 * released. */
static xf_status materialize(arb *a, held *h, xf_error *err)
{
    if (h->f) return XF_OK;
    const xf_arbiter_entry *e = &a->res->e[h->entry];
    xf_graph fin, ub;
    xf_status st = xf_agent_finish(working(a, e->search, e->candidate), &fin, NULL, err);
    finished *p = st ? NULL : new_finished(&fin, err);
    if (!p) return st ? st : XF_ERR_NOMEM;
    if (!e->unbatched) {
        h->f = p;
        return XF_OK;
    }
    int n_dropped = 0;
    st = xf_agent_unbatch(&p->g, &ub, &n_dropped, err);
    if (!st) {
        st = xf_agent_finish(&ub, &fin, NULL, err);
        xf_graph_free(&ub);
    }
    h->f = st ? NULL : new_finished(&fin, err);
    if (!h->f) {
        unref(p);
        return st ? st : XF_ERR_NOMEM;
    }
    h->parent = p;
    return XF_OK;
}

/* Candidates the searches still hold that were never looked at. */
static int untimed(const arb *a)
{
    int n = a->order ? a->n_order - a->k : 0;
    int room = a->order ? a->o.max_models - a->timed[a->search] : 0;
    if (n > room) n = room;
    for (int s = a->search + (a->order ? 1 : 0); s < a->n_searches; s++) {
        int c = a->srs[s]->n_candidates > 0 ? a->srs[s]->n_candidates : 1;
        n += c < a->o.max_models ? c : a->o.max_models;
    }
    return n + a->n_queue + repeats_left(a);
}

/* ------------------------------------------------------------- memory */

/* Bytes of g's node outputs (an upper bound of a session's activations)
 * and of its constants that are not the input's shared buffers. */
static double node_bytes(const xf_graph *g)
{
    double b = 0;
    for (int v = 0; v < g->n_values; v++)
        if (g->values[v].kind == XF_VALUE_NODE)
            b += (double)xf_shape_numel(&g->values[v].shape) * (double)xf_dtype_size(g->values[v].dtype);
    return b;
}

static double own_bytes(const arb *a, const xf_graph *g)
{
    /* constants the input does not hold (buffers compared by address) */
    double b = 0;
    for (int v = 0; v < g->n_values; v++) {
        const xf_value *val = &g->values[v];
        if (val->kind != XF_VALUE_CONST) continue;
        int shared = 0;
        for (int u = 0; u < a->model->n_values && !shared; u++)
            shared = a->model->values[u].kind == XF_VALUE_CONST && a->model->values[u].data == val->data;
        if (!shared)
            b += (double)xf_shape_numel(&val->shape) * (double)xf_dtype_size(val->dtype);
    }
    return b;
}

/* What one candidate's session is estimated to take: its activations and
 * its own constants twice (onnxruntime's copy and their prepacked form). */
static double session_bytes(const arb *a, const xf_graph *g)
{
    return a->act_bytes + 2 * own_bytes(a, g);
}

static size_t mem_limit(const arb *a)
{
    return a->o.mem_limit ? a->o.mem_limit : xf_mem_limit();
}

/* The input's two sessions (and the prepacked form of its weights, about
 * their size): refused when over the limit. */
static int plan_memory(arb *a)
{
    a->act_bytes = node_bytes(a->model);
    double weights = (double)xf_graph_param_bytes(a->model);
    a->used_bytes = weights + 2 * a->act_bytes;
    a->res->mem_estimate = a->used_bytes;
    if (a->used_bytes <= (double)mem_limit(a)) return 1;
    char u[32], w[32], act[32], l[32];
    snprintf(a->res->refused, sizeof a->res->refused,
             "the input's two sessions need about %s (its weights prepacked once, %s, and %s of "
             "activations each), over the memory limit of %s (--mem-limit); no candidate is "
             "timed",
             xf_bytes_str(a->used_bytes, u, sizeof u), xf_bytes_str(weights, w, sizeof w),
             xf_bytes_str(a->act_bytes, act, sizeof act),
             xf_bytes_str((double)mem_limit(a), l, sizeof l));
    return 0;
}

/* --------------------------------------------------------------- race */

/* Frees the data of the constants a graph owns (not those it borrows):
 * once a candidate is written for onnxruntime, its folded constants are
 * read back from the files, and holding them too would double them while
 * the session prepacks (xf_target_race_add_then). */
static void drop_own_data(xf_graph *g)
{
    for (int v = 0; v < g->n_values; v++) {
        xf_value *c = &g->values[v];
        if (c->kind == XF_VALUE_CONST && !c->borrowed && c->data) {
            xf_free(c->data);
            c->data = NULL;
        }
    }
}

static void written(void *ctx)
{
    held *h = ctx;
    if (h->f && h->f->refs == 1) drop_own_data(&h->f->g);
    if (h->parent && h->parent->refs == 1) drop_own_data(&h->parent->g);
}

/* Whether entry v is the unbatched variant of entry parent's candidate. */
static int variant_of(const xf_arbiter_entry *v, const xf_arbiter_entry *parent)
{
    return v->unbatched && v->search == parent->search && v->candidate == parent->candidate;
}

/* A dropped candidate's queued or waiting variant goes with it (the same
 * model in another layout): not timed, same verdict. */
static void drop_variant_of(arb *a, const xf_arbiter_entry *parent)
{
    for (int i = a->next_repeat; i < a->n_repeats; i++)
        if (variant_of(&a->res->e[a->repeats[i]], parent))
            a->res->e[a->repeats[i]].verdict = parent->verdict;
    for (int i = 0; i < a->n_queue; i++) {
        xf_arbiter_entry *v = &a->res->e[a->queue[i].entry];
        if (!variant_of(v, parent)) continue;
        v->verdict = parent->verdict;
        held_free(&a->queue[i]);
        a->queue[i] = a->queue[--a->n_queue];
        i--;
    }
}

/* What became of the queue's first model (join). */
enum { JOIN_WAITS = -1, JOIN_DROPPED = 0, JOIN_RACES = 1 };

/* Puts the queue's first model into the race (then a candidate's count
 * goes up and its unbatched variant is queued), or marks it: not timed
 * (its session would not fit the memory limit alone), or wrong (onnxruntime
 * refuses it, or its outputs in the target differ from the input's); or
 * leaves it queued until a slot frees (*outcome). */
static xf_status join(arb *a, int *outcome, xf_error *err)
{
    *outcome = JOIN_DROPPED;
    held h = a->queue[0];
    a->queue[0] = a->queue[1];
    a->n_queue--;
    xf_arbiter_entry *e = &a->res->e[h.entry];
    xf_status mst = materialize(a, &h, err);
    if (mst) {
        held_free(&h);
        return mst;
    }
    double need = session_bytes(a, &h.f->g);
    if (a->used_bytes + need > (double)mem_limit(a)) {
        if (a->n_racing > 0) {
            a->queue[1] = a->queue[0];
            a->queue[0] = h;
            a->n_queue++;
            *outcome = JOIN_WAITS;
            return XF_OK;
        }
        e->verdict = XF_ARBITER_NOT_TIMED;
        held_free(&h);
        return XF_OK;
    }
    /* the variant is made now, its graph released: finished again when it joins */
    xf_status st = XF_OK;
    if (!e->unbatched && a->o.unbatch) {
        st = offer_unbatched(a, e->search, e->candidate, h.f, err);
        if (!st && a->n_queue > 0 && a->queue[a->n_queue - 1].parent == h.f)
            release(&a->queue[a->n_queue - 1]);
        if (st) {
            held_free(&h);
            return st;
        }
    }
    int slot = -1;
    xf_error jerr = {0};
    double t_join = xf_clock_now();
    st = xf_target_race_add_then(a->race, NULL, &h.f->g, written, &h, &slot, &jerr);
    if (xf_clock_now() - t_join > a->load_s) a->load_s = xf_clock_now() - t_join;
    int worst = 0;
    if (!st) st = xf_target_race_diff(a->race, slot, &h.rel, &worst, &jerr);
    if (st == XF_ERR_NOMEM) {
        if (err) *err = jerr;
        held_free(&h);
        return st;
    }
    if (st || !(h.rel <= a->o.target_rtol)) {
        if (st)
            snprintf(e->why, sizeof e->why, "the target could not run it: %s", jerr.msg);
        else {
            const char *name = a->model->values[a->model->outputs[worst]].name;
            snprintf(e->why, sizeof e->why,
                     "its outputs in the target differ from the input's: output %d (%s), "
                     "max |d| %.3g of its largest |value| (tolerance %.3g)",
                     worst, name ? name : "unnamed", h.rel, a->o.target_rtol);
        }
        xf_log(XF_LOG_INFO, "arbiter: a candidate is dropped: %s", e->why);
        /* timed as written: one that cannot be written so is not a model
         * the user could get */
        e->verdict = !st ? XF_ARBITER_TARGET_WRONG
                     : xf_target_kept_dims(a->t) && xf_target_export_failed(a->t)
                         ? XF_ARBITER_NOT_WRITABLE
                         : XF_ARBITER_WRONG;
        if (!st) xf_target_race_drop(a->race, slot);
        held_free(&h);
        drop_variant_of(a, e);
        return XF_OK;
    }
    h.slot = slot;
    h.need = need;
    a->used_bytes += need;
    if (a->used_bytes > a->res->mem_estimate) a->res->mem_estimate = a->used_bytes;
    *outcome = JOIN_RACES;
    if (!e->unbatched && e->like == 0) a->timed[e->search]++;
    e->raced = ++a->n_raced;
    release(&h); /* loaded: its session holds what it needs */
    xf_heap_trim(); /* what onnxruntime read to prepack, freed: not kept by the heap */
    a->racing[a->n_racing++] = h;
    return st;
}

/* Takes racer i out of the race with its timing: kept when faster or the
 * fastest undecided so far, else freed. */
static xf_status retire(arb *a, int i, xf_error *err)
{
    held h = a->racing[i];
    a->racing[i] = a->racing[--a->n_racing];
    xf_arbiter_entry *e = &a->res->e[h.entry];
    xf_status st = xf_target_race_timing(a->race, h.slot, &e->t, &e->self, &e->input_ms, err);
    int rounds = xf_target_race_rounds(a->race, h.slot);
    xf_target_race_drop(a->race, h.slot);
    xf_heap_trim();
    a->used_bytes -= h.need;
    /* fewer rounds than min_rounds (the budget ran out) decide nothing */
    int v = st ? 1 : rounds < a->o.min_rounds ? 0 : xf_target_verdict(&e->t, &e->self);
    if (!st && v < 0 && e->t.runs > 0) {
        int k = a->n_faster++;
        while (k > 0 && a->res->e[a->faster[k - 1].entry].t.ratio > e->t.ratio) {
            a->faster[k] = a->faster[k - 1];
            k--;
        }
        a->faster[k] = h;
        return XF_OK;
    }
    if (!st && v == 0 && e->t.runs > 0 &&
        (!a->has_undecided || e->t.ratio < a->res->e[a->undecided.entry].t.ratio)) {
        if (a->has_undecided) held_free(&a->undecided);
        a->undecided = h;
        a->has_undecided = 1;
        return XF_OK;
    }
    held_free(&h);
    return st;
}

/* Whether racer i is decided (or has had its rounds). */
static xf_status decided(arb *a, int i, int *done, xf_error *err)
{
    int rounds = xf_target_race_rounds(a->race, a->racing[i].slot);
    int max_rounds = a->o.timing.rounds > 0 ? a->o.timing.rounds : 21;
    *done = rounds >= max_rounds;
    if (*done || rounds < a->o.min_rounds) return XF_OK;
    xf_target_timing t, self;
    xf_status st = xf_target_race_timing(a->race, a->racing[i].slot, &t, &self, NULL, err);
    if (!st) *done = xf_target_verdict(&t, &self) != 0;
    return st;
}

double xf_arbiter_reserve(const xf_arbiter_options *o, double share_ms, double load_s,
                          int n_faster, int full)
{
    int rounds = o->timing.rounds > 0 ? o->timing.rounds : 21;
    int finalists = o->finalists > 0 ? o->finalists : DEFAULT_FINALISTS;
    /* one confirming run, and one more for each candidate already found
     * faster (up to two): a winner that fails its confirmation leaves the
     * next one time for its own */
    int runs = 1 + (n_faster < 2 ? n_faster : 2);
    double s = runs * run_seconds_at(share_ms, load_s, 1, rounds);
    /* once one is faster, the next makes a final: room for one as long
     * as a race (it runs up to close_rounds in what is left) */
    int n_final = n_faster + 1 < finalists ? n_faster + 1 : finalists;
    double fs = n_faster > 0 && n_final > 1 ? run_seconds_at(share_ms, load_s, n_final, rounds) : 0;
    if (full && o->close_rounds > 0) {
        /* the confirmation in full: the longer run too, or a final as long */
        s += run_seconds_at(share_ms, load_s, 1, o->close_rounds);
        if (fs > 0) fs = run_seconds_at(share_ms, load_s, n_final, o->close_rounds);
    }
    return fs > s ? fs : s;
}

/* Seconds to keep for after the race before the next candidate joins:
 * confirming winners (full: in full). */
static double reserve(const arb *a, int full)
{
    return xf_arbiter_reserve(&a->o, share_ms_of(a), a->load_s, a->n_faster, full);
}

/* Whether the queue's first model joins only while the confirmation in
 * full still fits after it: a repeat, or any model beyond the budget's
 * plan (budget_models raced, then the confirmation in full). Why: the race
 * took what the plan kept for the confirmation, and on a slower machine
 * the winner's longer confirming run was cut (BERT-base, 2026-11-30). */
static int needs_full_reserve(const arb *a)
{
    int planned = a->o.budget_models > 0 ? a->o.budget_models : DEFAULT_BUDGET_MODELS;
    return a->res->e[a->queue[0].entry].like > 0 || a->n_raced >= planned;
}

/* The budget planned (xf_arbiter_budget) when budget_max_s allows it to
 * grow: from one round of the input and its self check, run now, before
 * any candidate joins (so that a budget too small for one candidate at
 * this size grows too), and the time the two took to load (open_s). */
static xf_status plan_budget(arb *a, double open_s, xf_error *err)
{
    if (!(a->o.budget_s > 0 && a->o.budget_max_s > a->o.budget_s)) return XF_OK;
    xf_status st = xf_target_race_round(a->race, err);
    xf_target_timing in;
    if (!st) st = xf_target_race_timing(a->race, 0, &in, NULL, NULL, err);
    if (st) return st;
    a->input_ms = in.median_ms;
    a->share_ms = xf_target_race_round_ms(a->race) / 2; /* the input's and its self check's */
    if (open_s / 2 > a->load_s) a->load_s = open_s / 2;
    a->budget_s = xf_arbiter_budget(&a->o, a->share_ms, a->load_s, elapsed(a));
    a->res->budget_s = a->budget_s;
    a->res->budget_share_ms = a->share_ms;
    return XF_OK;
}

static xf_status race(arb *a, xf_error *err)
{
    xf_target_timing_options to = a->o.timing;
    to.seed = a->o.seed;
    /* a model keeping symbolic dims races against the user's file itself:
     * its candidates are timed as written (xf_target_keep_dims), and an
     * export of the input, written by rlflow, may run otherwise */
    const char *ref = a->res->against_file && xf_target_kept_dims(a->t) ? a->o.input_file : NULL;
    double t_open = xf_clock_now();
    xf_status st = xf_target_race_open(a->t, a->model, ref, 1, &to, &a->race, err);
    if (!st) st = plan_budget(a, xf_clock_now() - t_open, err);
    if (st) return st;
    int stop = 0;
    while (!st) {
        double round_s = xf_target_race_round_ms(a->race) / 1000.0;
        double load_s = a->load_s > LOAD_S ? a->load_s : LOAD_S;
        double for_more = load_s + a->o.min_rounds * round_s;
        while (!st && !stop && a->n_racing < a->slots) {
            if (left(a) - reserve(a, 0) <= for_more) {
                stop = 1;
                break;
            }
            if (a->n_queue == 0) st = next_candidates(a, err);
            if (st || a->n_queue == 0) break;
            if (needs_full_reserve(a) && left(a) - reserve(a, 1) <= for_more) {
                stop = 1;
                break;
            }
            int outcome = JOIN_DROPPED;
            st = join(a, &outcome, err);
            if (outcome == JOIN_WAITS) break;
        }
        if (st || a->n_racing == 0) break;
        double t_round = xf_clock_now();
        st = xf_target_race_round(a->race, err);
        if (!st) { /* a running mean: one round is a noisy figure */
            double ms = 1000 * (xf_clock_now() - t_round) / (a->n_racing + 2);
            a->share_ms = a->share_ms > 0 ? 0.8 * a->share_ms + 0.2 * ms : ms;
        }
        if (!st) {
            xf_target_timing in;
            st = xf_target_race_timing(a->race, 0, &in, NULL, NULL, err);
            a->input_ms = in.median_ms;
        }
        for (int i = 0; !st && i < a->n_racing; i++) {
            int done = 0;
            st = decided(a, i, &done, err);
            if (!st && (done || left(a) < reserve(a, 0))) {
                st = retire(a, i, err);
                i--;
            }
        }
        if (!st && left(a) < reserve(a, 0)) stop = 1;
    }
    if (!st && stop) {
        a->res->n_untimed = untimed(a);
        a->res->budget_hit = a->res->n_untimed > 0;
    }
    while (!st && a->n_racing > 0) st = retire(a, 0, err);
    /* queued or waiting when the budget ran out: never timed */
    for (int i = 0; i < a->n_queue; i++) {
        a->res->e[a->queue[i].entry].verdict = XF_ARBITER_NOT_TIMED;
        held_free(&a->queue[i]);
    }
    a->n_queue = 0;
    for (; a->next_repeat < a->n_repeats; a->next_repeat++) {
        xf_arbiter_entry *e = &a->res->e[a->repeats[a->next_repeat]];
        if (e->verdict == XF_ARBITER_TIMED) e->verdict = XF_ARBITER_NOT_TIMED;
    }
    if (!st) {
        xf_arbiter_entry *in = &a->res->e[0];
        st = xf_target_race_timing(a->race, 0, &in->t, NULL, NULL, err);
        /* the self check against the input over all rounds */
        if (!st) st = xf_target_race_timing(a->race, 1, &a->res->self, NULL, NULL, err);
        in->input_ms = in->t.median_ms;
        in->self = a->res->self;
        a->res->rounds = xf_target_race_rounds(a->race, 0);
    }
    xf_target_race_free(a->race);
    a->race = NULL;
    return st;
}

/* ------------------------------------------------------- after the race */

/* The rounds a run of n models against the input may take: `want`, or
 * fewer to fit the budget (at least min_rounds; 0: none fits). */
static int rounds_that_fit_n(arb *a, int n, int want)
{
    int r = want;
    while (r > a->o.min_rounds && run_seconds(a, n, r) > left(a)) r = r * 2 / 3;
    if (r < want) a->res->budget_hit = 1;
    return run_seconds(a, n, r) <= left(a) ? r : 0;
}

/* The same for one model against the input alone. */
static int rounds_that_fit(arb *a, int want)
{
    return rounds_that_fit_n(a, 1, want);
}

/* A run of the input (its file when against_file) against h's model alone
 * (with the input's self check; finished again if it was released); *into its timing, *verdict
 * xf_target_verdict's (< 0: faster). h's own constants are dropped once
 * onnxruntime has them and h is released after the run. */
static xf_status pair_into(arb *a, held *h, int rounds, xf_target_timing *into, int *verdict,
                           xf_error *err)
{
    *verdict = 1;
    xf_target_timing_options to = a->o.timing;
    to.seed = a->o.seed;
    xf_target_race *r = NULL;
    int slot = -1;
    xf_status st = materialize(a, h, err);
    const char *ref = a->res->against_file ? a->o.input_file : NULL;
    if (!st) st = xf_target_race_open(a->t, a->model, ref, 1, &to, &r, err);
    if (!st) st = xf_target_race_add_then(r, NULL, &h->f->g, written, h, &slot, err);
    for (int k = 0; !st && k < rounds; k++) st = xf_target_race_round(r, err);
    xf_target_timing self;
    if (!st) st = xf_target_race_timing(r, slot, into, &self, NULL, err);
    if (!st) *verdict = xf_target_verdict(into, &self);
    xf_target_race_free(r);
    release(h);
    xf_heap_trim();
    return st;
}

/* Whether h passes the interpreter check (else its entry is wrong). */
static xf_status interp_ok(arb *a, held *h, int *ok, xf_error *err)
{
    xf_check_result chk = {0};
    xf_error cerr = {0};
    xf_status st = materialize(a, h, err);
    if (st) return st;
    st = xf_interp_check(a->model, &h->f->g, a->o.seed, a->o.rtol, a->o.atol, &chk, &cerr);
    if (st == XF_ERR_NOMEM) {
        if (err) *err = cerr;
        return st;
    }
    *ok = !st && chk.bad_output < 0;
    if (*ok) return XF_OK;
    xf_arbiter_entry *e = &a->res->e[h->entry];
    e->verdict = XF_ARBITER_WRONG;
    if (st)
        snprintf(e->why, sizeof e->why, "the interpreter could not check it: %s", cerr.msg);
    else {
        const char *name = a->model->values[a->model->outputs[chk.bad_output]].name;
        snprintf(e->why, sizeof e->why,
                 "the interpreter: output %d (%s) differs from the input's, max |d| %.3g "
                 "(tolerance %.3g + %.3g*|ref|)",
                 chk.bad_output, name ? name : "unnamed", chk.bad_abs, a->o.atol, a->o.rtol);
    }
    xf_log(XF_LOG_INFO, "arbiter: a candidate is dropped: %s", e->why);
    return XF_OK;
}

/* Confirms h: interpreter check, then a run against the input alone
 * (default rounds, again with close_rounds when it cannot tell; `first`
 * rounds when given). *ok: h is faster again. */
static xf_status confirm(arb *a, held *h, int first, int *ok, xf_error *err)
{
    *ok = 0;
    int good = 0;
    xf_status st = interp_ok(a, h, &good, err);
    if (st || !good) return st;
    xf_arbiter_entry *w = &a->res->e[h->entry];
    int rounds = rounds_that_fit(a, first > 0 ? first : a->o.timing.rounds > 0 ? a->o.timing.rounds
                                                                               : 21);
    int verdict = 0;
    if (rounds > 0) st = pair_into(a, h, rounds, &w->confirm, &verdict, err);
    if (!st && rounds > 0 && verdict == 0 && first == 0 && a->o.close_rounds > 0) {
        int longer = rounds_that_fit(a, a->o.close_rounds);
        if (longer > rounds) st = pair_into(a, h, longer, &w->confirm, &verdict, err);
    }
    if (st) {
        xf_error_prefix(err, "confirming the fastest candidate");
        return st;
    }
    *ok = verdict < 0;
    if (!*ok) w->verdict = XF_ARBITER_UNCONFIRMED;
    return XF_OK;
}

/* --------------------------------------------------------------- final */

int xf_arbiter_pick(const xf_target_timing *t, const xf_target_timing *self, const double *cost,
                    const int *eligible, int n)
{
    int best = -1;
    for (int i = 0; i < n; i++) {
        if ((eligible && !eligible[i]) || t[i].runs <= 0) continue;
        if (xf_target_verdict(&t[i], self ? &self[i] : NULL) >= 0) continue;
        if (best < 0 || t[i].ratio < t[best].ratio) best = i;
    }
    int pick = best;
    for (int i = 0; best >= 0 && i < n; i++) {
        if ((eligible && !eligible[i]) || t[i].runs <= 0 || i == best) continue;
        if (xf_target_verdict(&t[i], self ? &self[i] : NULL) >= 0) continue;
        if (t[i].lo > t[best].hi) continue; /* told apart from the fastest: slower */
        if (cost[i] < cost[pick] || (cost[i] == cost[pick] && t[i].ratio < t[pick].ratio))
            pick = i;
    }
    return pick;
}

/* Finalist i of the final in race r leaves it: its timing so far is kept. */
static xf_status leave_final(arb *a, xf_target_race *r, int *slot, xf_target_timing *self,
                             int i, int final, xf_error *err)
{
    xf_arbiter_entry *e = &a->res->e[a->faster[i].entry];
    xf_status st = xf_target_race_timing(r, slot[i], &e->confirm, &self[i], NULL, err);
    e->final = final;
    xf_target_race_drop(r, slot[i]);
    slot[i] = -1;
    xf_heap_trim();
    return st;
}

/* The final (xf_arbiter_options.finalists): the first n of a->faster (the
 * fastest in the race) timed together against the input (its file when
 * against_file) for close_rounds rounds or what fits; a finalist whose
 * interval lies wholly above another's leaves as soon as it does (after
 * min_rounds); of those left, xf_arbiter_pick's choice that passes the
 * interpreter check is *chosen (index into a->faster; -2: none faster in
 * the final). Every finalist's final timing is its entry's confirm. */
static xf_status final_run(arb *a, int n, int rounds, int *chosen, xf_error *err)
{
    *chosen = -2;
    xf_target_timing_options to = a->o.timing;
    to.seed = a->o.seed;
    int slot[XF_ARBITER_FINALISTS_MAX], eligible[XF_ARBITER_FINALISTS_MAX];
    xf_target_timing t[XF_ARBITER_FINALISTS_MAX], self[XF_ARBITER_FINALISTS_MAX];
    double cost[XF_ARBITER_FINALISTS_MAX];
    xf_target_race *r = NULL;
    const char *ref = a->res->against_file ? a->o.input_file : NULL;
    xf_status st = xf_target_race_open(a->t, a->model, ref, 1, &to, &r, err);
    for (int i = 0; i < n; i++) slot[i] = -1;
    for (int i = 0; !st && i < n; i++) {
        held *h = &a->faster[i];
        st = materialize(a, h, err);
        if (!st) st = xf_target_race_add_then(r, NULL, &h->f->g, written, h, &slot[i], err);
        release(h);
        xf_heap_trim();
    }
    int alive = n, k = 0;
    for (; !st && k < rounds && alive > 1; k++) {
        st = xf_target_race_round(r, err);
        if (st || k + 1 < a->o.min_rounds) continue;
        /* a finalist slower than another beyond the noise leaves */
        int best = -1;
        for (int i = 0; !st && i < n; i++) {
            if (slot[i] < 0) continue;
            st = xf_target_race_timing(r, slot[i], &t[i], NULL, NULL, err);
            if (!st && (best < 0 || t[i].ratio < t[best].ratio)) best = i;
        }
        for (int i = 0; !st && i < n; i++) {
            if (slot[i] < 0 || i == best || !(t[i].lo > t[best].hi)) continue;
            st = leave_final(a, r, slot, self, i, 2, err);
            alive--;
        }
    }
    /* the last one left runs its rounds: it is confirmed (or not) over them */
    for (; !st && k < rounds; k++) st = xf_target_race_round(r, err);
    for (int i = 0; !st && i < n; i++)
        if (slot[i] >= 0) st = leave_final(a, r, slot, self, i, 1, err);
    xf_target_race_free(r);
    if (st) return st;
    a->res->finalists = n;
    a->res->final_rounds = k;
    for (int i = 0; i < n; i++) {
        const xf_arbiter_entry *e = &a->res->e[a->faster[i].entry];
        t[i] = e->confirm;
        cost[i] = e->cost_ms;
        eligible[i] = e->final == 1;
    }
    for (;;) {
        int p = xf_arbiter_pick(t, self, cost, eligible, n);
        if (p < 0) break;
        int ok = 0;
        st = interp_ok(a, &a->faster[p], &ok, err);
        if (st) return st;
        if (ok) {
            *chosen = p;
            break;
        }
        eligible[p] = 0;
        release(&a->faster[p]);
    }
    for (int i = 0; i < n; i++) {
        xf_arbiter_entry *e = &a->res->e[a->faster[i].entry];
        if (i == *chosen || e->verdict == XF_ARBITER_WRONG) continue;
        e->verdict = xf_target_verdict(&t[i], &self[i]) < 0 ? XF_ARBITER_RUNNER_UP
                                                            : XF_ARBITER_UNCONFIRMED;
    }
    return XF_OK;
}

/* The winner: with two or more candidates faster, the final's choice
 * among the leading ones; else (or when none is faster in the final) the
 * fastest faster candidate that confirms, else the closer look at the
 * fastest undecided. *chosen: index into a->faster, or -1 (the undecided
 * one), or -2 (none). */
static xf_status choose(arb *a, int *chosen, xf_error *err)
{
    *chosen = -2;
    int n = a->n_faster < a->o.finalists ? a->n_faster : a->o.finalists;
    /* the finalists' sessions must fit beside the input's */
    double used = a->used_bytes;
    for (int i = 0; i < n; i++) {
        used += a->faster[i].need;
        if (used > (double)mem_limit(a)) n = i;
    }
    int rounds = n > 1 ? rounds_that_fit_n(a, n, a->o.close_rounds > 0 ? a->o.close_rounds
                                                                      : DEFAULT_FINAL_ROUNDS)
                       : 0;
    int first = 0;
    if (rounds > 0) {
        xf_status st = final_run(a, n, rounds, chosen, err);
        if (st) {
            xf_error_prefix(err, "the final of the %d fastest candidates", n);
            return st;
        }
        if (*chosen >= 0) return XF_OK;
        first = n;
    }
    for (int i = first; i < a->n_faster; i++) {
        int ok = 0;
        xf_status st = confirm(a, &a->faster[i], 0, &ok, err);
        if (st) return st;
        if (ok) {
            *chosen = i;
            return XF_OK;
        }
        release(&a->faster[i]);
    }
    if (a->n_faster > 0 || !a->has_undecided || a->o.close_rounds <= 0) return XF_OK;
    held *u = &a->undecided;
    xf_arbiter_entry *e = &a->res->e[u->entry];
    rounds = rounds_that_fit(a, a->o.close_rounds);
    int verdict = 0;
    xf_status st = rounds > 0 ? pair_into(a, u, rounds, &e->closer, &verdict, err) : XF_OK;
    if (st) {
        xf_error_prefix(err, "the closer look at the fastest undecided candidate");
        return st;
    }
    if (verdict >= 0) return XF_OK;
    int ok = 0;
    st = confirm(a, u, rounds, &ok, err);
    if (!st && ok) *chosen = -1;
    return st;
}

static void arb_free(arb *a)
{
    for (int i = 0; i < a->n_queue; i++) held_free(&a->queue[i]);
    for (int i = 0; i < a->n_racing; i++) held_free(&a->racing[i]);
    for (int i = 0; i < a->n_faster; i++) held_free(&a->faster[i]);
    if (a->has_undecided) held_free(&a->undecided);
    xf_target_race_free(a->race);
    xf_free(a->racing);
    xf_free(a->faster);
    xf_free(a->hash);
    xf_free(a->order);
    xf_free(a->timed);
    xf_free(a->families);
    xf_free(a->repeats);
}

xf_status xf_agent_arbitrate(xf_target *t, xf_cost_model *cm, const xf_graph *model,
                             const xf_search_result *const *srs, int n_searches,
                             const xf_arbiter_options *o, xf_graph *out, xf_arbiter_result *res,
                             xf_error *err)
{
    arb a;
    memset(&a, 0, sizeof a);
    a.t0 = xf_clock_now();
    a.t = t;
    a.cm = cm;
    a.model = model;
    a.srs = srs;
    a.n_searches = n_searches;
    a.o = o ? *o : xf_arbiter_options_default();
    a.res = res;
    memset(res, 0, sizeof *res);
    xf_graph_init(out);
    if (a.o.max_models < 1)
        return XF_FAIL(err, XF_ERR_INVALID, "arbiter: max_models (%d) must be >= 1",
                       a.o.max_models);
    if (n_searches < 1)
        return XF_FAIL(err, XF_ERR_INVALID, "arbiter: no search to choose from (%d)", n_searches);
    if (a.o.finalists < 0 || a.o.finalists > XF_ARBITER_FINALISTS_MAX)
        return XF_FAIL(err, XF_ERR_INVALID, "arbiter: finalists (%d) must be 1 to %d",
                       a.o.finalists, XF_ARBITER_FINALISTS_MAX);
    if (a.o.finalists == 0) a.o.finalists = DEFAULT_FINALISTS;
    if (a.o.min_rounds < 1) a.o.min_rounds = DEFAULT_MIN_ROUNDS;
    int pairwise = a.o.pairwise < 0 ? xf_target_threads(t) > 1 : a.o.pairwise;
    a.slots = pairwise ? 1 : a.o.racing > 0 ? a.o.racing : DEFAULT_RACING;
    res->pairwise = a.slots == 1;
    res->racing = a.slots;
    res->budget_s = res->budget_given_s = a.budget_s = a.o.budget_s;
    /* entries: each candidate and its unbatched variant, and the input */
    a.cap = 1;
    for (int s = 0; s < n_searches; s++)
        a.cap += 2 * (srs[s]->n_candidates > 0 ? srs[s]->n_candidates : 1);
    res->e = xf_calloc((size_t)a.cap, sizeof *res->e);
    a.hash = xf_calloc((size_t)a.cap, sizeof *a.hash);
    a.racing = xf_calloc((size_t)a.slots + 1, sizeof *a.racing);
    a.faster = xf_calloc((size_t)a.cap, sizeof *a.faster);
    a.timed = xf_calloc((size_t)n_searches, sizeof *a.timed);
    a.families = xf_calloc((size_t)a.cap, sizeof *a.families);
    a.repeats = xf_calloc((size_t)a.cap, sizeof *a.repeats);
    xf_status st = XF_OK;
    if (!res->e || !a.hash || !a.racing || !a.faster || !a.timed || !a.families || !a.repeats)
        st = XF_FAIL(err, XF_ERR_NOMEM, "arbiter: out of memory");
    if (!st) st = xf_graph_hash_checked(model, XF_HASH_UNORDERED, &a.hash[0], err);
    if (!st) {
        a.n_hash = 1;
        st = add_entry(&a, 0, -1, XF_ARBITER_INPUT, model, err);
    }
    int timing = !st && plan_memory(&a);
    res->against_file = a.o.input_file && a.o.input_file[0] &&
                        xf_graph_param_bytes(model) <= XF_ARBITER_FILE_MAX_BYTES;
    if (timing) {
        xf_error serr = {0};
        xf_status sst = xf_target_share_weights(t, model, &serr);
        if (sst == XF_ERR_NOMEM) {
            if (err) *err = serr;
            st = sst;
        } else if (sst) {
            snprintf(res->refused, sizeof res->refused, "%s", serr.msg);
            timing = 0;
        }
        res->shared_bytes = xf_target_shared_bytes(t);
    }
    if (!st && timing) {
        st = race(&a, err);
        if (st) xf_error_prefix(err, "timing the candidates in the target");
    }
    int chosen = -2;
    if (!st && timing) st = choose(&a, &chosen, err);
    if (!st && chosen > -2) {
        held *w = chosen >= 0 ? &a.faster[chosen] : &a.undecided;
        res->chosen = w->entry;
        res->e[w->entry].verdict = XF_ARBITER_CHOSEN;
        res->max_rel = w->rel;
        st = materialize(&a, w, err);
        if (!st && w->parent) st = own_from(&w->f->g, &w->parent->g, err);
        if (!st) {
            *out = w->f->g; /* taken over: a variant still borrowing it is not used again */
            xf_graph_init(&w->f->g);
        }
    } else if (!st) {
        res->chosen = 0;
        st = xf_graph_clone_shared(model, out, err);
    }
    arb_free(&a);
    xf_target_unshare(t);
    res->seconds = xf_clock_now() - a.t0;
    if (st) {
        xf_graph_free(out);
        xf_arbiter_result_free(res);
        xf_error_prefix(err, "arbiter");
    }
    return st;
}
