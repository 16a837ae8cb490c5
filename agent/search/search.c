/*
 * search.c — the entry point of the search baselines and what they share:
 * the result struct, the trail of applied rules with parent links (so the
 * path to the best graph is known however the search got there), a set of
 * seen graph hashes, the wall clock and the progress callback.
 *
 * Every search starts from the environment's reset state and leaves the
 * environment holding the best graph it found, so best_ms is that graph's
 * cost as the environment computes it.
 */
#include "agent/search/search_internal.h"

#include <stdlib.h>
#include <string.h>

void xf_search_result_init(xf_search_result *r)
{
    memset(r, 0, sizeof *r);
    xf_graph_init(&r->best);
}

void xf_search_result_free(xf_search_result *r)
{
    if (!r) return;
    xf_graph_free(&r->best);
    xf_free(r->applied);
    search_candidates_free(r);
    xf_search_result_init(r);
}

/* ------------------------------------------------------------------ trail */

void search_trail_init(xf_search_trail *t)
{
    memset(t, 0, sizeof *t);
}

void search_trail_free(xf_search_trail *t)
{
    xf_free(t->parent);
    xf_free(t->rule);
    search_trail_init(t);
}

xf_status search_trail_add(xf_search_trail *t, int parent, int rule, int *idx, xf_error *err)
{
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 256;
        int *np = xf_realloc(t->parent, (size_t)cap * sizeof *np);
        if (np) t->parent = np;
        int *nr = np ? xf_realloc(t->rule, (size_t)cap * sizeof *nr) : NULL;
        if (nr) t->rule = nr;
        if (!np || !nr) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory recording the search");
        t->cap = cap;
    }
    t->parent[t->n] = parent;
    t->rule[t->n] = rule;
    *idx = t->n++;
    return XF_OK;
}

xf_status search_trail_path(const xf_search_trail *t, int entry, int **applied, int *n,
                               xf_error *err)
{
    int len = 0;
    for (int i = entry; i > 0; i = t->parent[i]) len++;
    *applied = NULL;
    *n = 0;
    if (len == 0) return XF_OK;
    int *a = xf_malloc((size_t)len * sizeof *a);
    if (!a) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory recording the search");
    *applied = a;
    *n = len;
    for (int i = entry; i > 0; i = t->parent[i]) a[--len] = t->rule[i];
    return XF_OK;
}

/* ----------------------------------------------------------- budget, best */

int search_out_of_time(const xf_search_ctx *c)
{
    return c->opt.max_seconds > 0 && xf_clock_now() - c->t0 >= c->opt.max_seconds;
}

void search_tick(xf_search_ctx *c)
{
    if (!c->opt.progress) return;
    double now = xf_clock_now();
    if (now - c->last_progress < 1.0) return;
    c->last_progress = now;
    c->opt.progress(c->opt.progress_user, (int)c->res->expanded, c->res->best_ms,
                    c->res->initial_ms);
}

xf_status search_keep_best(xf_search_ctx *c, const xf_graph *g, double ms, int entry,
                              xf_error *err)
{
    xf_graph copy;
    xf_status st = xf_graph_clone_shared(g, &copy, err);
    if (st) return st;
    xf_graph_free(&c->res->best);
    c->res->best = copy;
    c->res->best_ms = ms;
    c->res->best_step = c->res->expanded;
    c->best_entry = entry;
    return XF_OK;
}

xf_status search_seen_key(const xf_search_ctx *c, const xf_graph *g, uint64_t identity,
                          uint64_t *key, xf_error *err)
{
    *key = identity;
    if (!c->opt.merge_swapped) return XF_OK;
    return xf_graph_hash_checked(g, XF_HASH_IDENTITY_UNORDERED, key, err);
}

xf_status search_admit(xf_search_ctx *c, const xf_graph *s, double ms, double max_nodes, int parent,
                       int r, const xf_closure_log *moved, int *added, int *entry, uint64_t *hash,
                       xf_error *err)
{
    *added = 0;
    *entry = -1;
    *hash = 0;
    xf_status st = XF_OK;
    if ((double)s->n_nodes <= max_nodes) {
        uint64_t key = 0;
        st = xf_graph_hash_checked(s, XF_HASH_IDENTITY, hash, err);
        if (!st) st = search_seen_key(c, s, *hash, &key, err);
        if (!st) st = xf_htab_put(&c->seen, xf_htab_key(key), NULL, added, err);
    }
    if (st || !*added) return st;
    st = search_trail_add_moves(c, parent, r, moved, entry, err);
    if (!st && ms < c->res->best_ms - XF_SEARCH_EPS * c->res->initial_ms)
        st = search_keep_best(c, s, ms, *entry, err);
    if (!st) st = search_offer(c, s, ms, *entry, err);
    return st;
}

xf_status search_child(xf_search_ctx *c, int r, int l, int look, double bound, double max_nodes,
                       int parent, xf_graph *s, double *ms, int *entry, uint64_t *hash,
                       int *added, xf_error *err)
{
    xf_env *e = c->env;
    *added = 0;
    double bytes;
    xf_error aerr;
    xf_closure_log log, *moved = NULL;
    xf_status st;
    if (look && xf_lookahead_applies(&c->la, r)) { /* valued after the view moves it enables */
        st = xf_lookahead_price(&c->la, e, r, l, s, ms, &log, &aerr);
        moved = &log;
        if (!st && !(*ms < bound)) {
            xf_graph_free(s);
            return XF_OK;
        }
    } else {
        st = xf_env_peek(e, r, l, ms, &bytes, &aerr);
        if (!st && !(*ms < bound)) return XF_OK;
        if (!st)
            st = xf_match_apply(xf_env_ruleset(e), xf_env_graph(e), xf_env_index(e),
                                xf_env_location(e, r, l), s, &aerr);
    }
    if (st) { /* this action does not work here: skipped, unless the machine is in trouble */
        if (xf_action_skippable(st)) return XF_OK;
        if (err) *err = aerr;
        return st;
    }
    st = search_admit(c, s, *ms, max_nodes, parent, r, moved, added, entry, hash, err);
    if (st || !*added) xf_graph_free(s);
    return st;
}

int search_locations(const xf_search_ctx *c, int r)
{
    int n = xf_env_num_locations(c->env, r);
    return n < c->opt.max_locations ? n : c->opt.max_locations;
}

/* ------------------------------------------------------------------- run */

xf_status xf_search_run(xf_env *e, xf_search_kind kind, const xf_search_options *opt,
                        xf_search_result *res, xf_error *err)
{
    xf_search_result_free(res);
    xf_search_options o = opt ? *opt : xf_search_options_default();
    if (kind < 0 || kind >= XF_SEARCH_KIND_COUNT)
        return XF_FAIL(err, XF_ERR_INVALID, "unknown search kind %d", (int)kind);
    if (o.budget < 1 || o.max_locations < 1 || o.max_seconds < 0)
        return XF_FAIL(err, XF_ERR_INVALID,
                       "%s search: budget (%d) and max_locations (%d) must be >= 1, "
                       "max_seconds (%g) >= 0",
                       xf_search_kind_name(kind), o.budget, o.max_locations, o.max_seconds);
    if (kind == XF_SEARCH_TASO && (o.alpha <= 0 || o.size_cap <= 0))
        return XF_FAIL(err, XF_ERR_INVALID, "taso search: alpha (%g) and size_cap (%g) must be > 0",
                       o.alpha, o.size_cap);
    if (kind == XF_SEARCH_EXHAUSTIVE && (o.size_cap <= 0 || o.max_depth < 0 || o.cost_bound < 0))
        return XF_FAIL(err, XF_ERR_INVALID,
                       "exhaustive search: size_cap (%g) must be > 0, max_depth (%d) and "
                       "cost_bound (%g) >= 0",
                       o.size_cap, o.max_depth, o.cost_bound);

    if (kind == XF_SEARCH_EXHAUSTIVE) o.lookahead = 0; /* every single rule application */
    xf_search_ctx c;
    memset(&c, 0, sizeof c);
    c.env = e;
    c.opt = o;
    c.res = res;
    c.t0 = c.last_progress = xf_clock_now();
    search_trail_init(&c.trail);
    xf_htab_init(&c.seen);

    int root, added;
    xf_status st = XF_OK; /* c.la empty (memset) without the look-ahead */
    if (o.lookahead) st = xf_lookahead_init(&c.la, xf_env_ruleset(e), err);
    if (!st) st = xf_env_reset(e, err);
    if (!st) st = search_trail_add(&c.trail, -1, -1, &root, err);
    uint64_t key = 0;
    if (!st) st = search_seen_key(&c, xf_env_graph(e), xf_env_hash(e), &key, err);
    if (!st) st = xf_htab_put(&c.seen, xf_htab_key(key), NULL, &added, err);
    if (!st) {
        res->initial_ms = xf_env_cost(e);
        st = search_keep_best(&c, xf_env_graph(e), res->initial_ms, root, err);
    }
    if (!st) st = search_offer(&c, xf_env_graph(e), res->initial_ms, root, err);
    if (!st) {
        switch (kind) {
        case XF_SEARCH_RANDOM: st = search_random(&c, err); break;
        case XF_SEARCH_GREEDY: st = search_greedy(&c, err); break;
        case XF_SEARCH_EXHAUSTIVE: st = search_exhaustive(&c, err); break;
        default: st = search_taso(&c, err); break;
        }
    }
    if (!st) st = search_trail_path(&c.trail, c.best_entry, &res->applied, &res->n_applied, err);
    if (!st) st = search_candidates_finish(&c, err);
    if (!st) st = xf_env_set_graph(e, &res->best, err);
    if (!st) res->best_ms = xf_env_cost(e);
    res->seen = (int64_t)c.seen.n;
    res->seconds = xf_clock_now() - c.t0;
    search_trail_free(&c.trail);
    xf_htab_free(&c.seen);
    xf_free(c.cand_entry);
    xf_free(c.cand_hash);
    xf_lookahead_free(&c.la);
    if (st) {
        xf_error_prefix(err, "%s search", xf_search_kind_name(kind));
        xf_search_result_free(res);
    }
    return st;
}
