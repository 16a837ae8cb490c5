/*
 * chain.c — turns a meet of the search into one chain of rewrites from the
 * candidate's source to its target. The source's half is replayed as it
 * was found (each move re-applied to the graph the previous one made, so
 * every location refers to the graph a replay will see). The target's half
 * was found from the target: graphs T0 = target, T1, ..., Tk = the meeting
 * graph. From the meeting graph, each step back to T(j-1) is the rewrite
 * (any rule, either direction, any location) whose result has T(j-1)'s
 * hash; for a rule used in both directions that is usually the reverse of
 * the move found, at the nodes it made. A step with no way back (a rule
 * whose reverse has no operator to match, x => f(x)) stops the turning
 * around: the moves T0 -> ... -> Tj left are stored as steps from the
 * target, found in the graphs the search made from the target, which a
 * replay makes again the same way.
 */
#include <string.h>

#include "derive_internal.h"

/* One rewrite of g (ix its index) to a graph whose hash is want, found
 * among every match of every action: into *next, with its step. */
static xf_status step_back(xf_deriver *d, const xf_graph *g, const xf_graph_index *ix,
                           uint64_t want, xf_graph *next, xf_rulesdb_step *s, int *found,
                           xf_error *err)
{
    *found = 0;
    xf_status st = xf_match_all(d->rs, g, ix, 0, &d->chain, err);
    for (int k = 0; st == XF_OK && k < d->chain.n && !*found; k++) {
        uint64_t h;
        int applied;
        xf_graph_init(next);
        st = derive_apply(d, g, ix, &d->chain.m[k], next, &h, &applied, err);
        if (st != XF_OK || !applied) continue;
        if (h == want) {
            derive_step_of(d->rs, d->chain.m[k].rule, &d->chain.m[k], s);
            *found = 1;
        } else {
            xf_graph_free(next);
        }
    }
    return st;
}

xf_status derive_chain(xf_deriver *d, const xf_graph *src, const derive_move *a, int na,
                       const uint64_t *b_hash, const derive_move *b, int nb,
                       xf_derivation *out, int *ok, xf_error *err)
{
    *ok = 0;
    if (na + nb - 1 > XF_DERIVE_MAX_STEPS || na + nb - 1 < 1) return XF_OK;
    xf_rulesdb_step steps[XF_DERIVE_MAX_STEPS];
    int n = 0, good = 1, back = 1, stop = 0; /* stop: T(stop) is where turning around ended */
    xf_graph g;
    xf_graph_init(&g);
    xf_status st = xf_graph_clone(src, &g, err);
    if (st == XF_OK) derive_normalize(&g);
    for (int i = 0; st == XF_OK && good && back && i < na + nb - 1; i++) {
        xf_graph_index *ix = NULL;
        xf_graph next;
        xf_graph_init(&next);
        st = xf_graph_index_build(&g, &ix, err);
        if (st == XF_OK && i < na) {
            uint64_t h;
            int applied;
            st = derive_apply(d, &g, ix, &a[i].m, &next, &h, &applied, err);
            good = st == XF_OK && applied;
            if (good) derive_step_of(d->rs, a[i].action, &a[i].m, &steps[n++]);
        } else if (st == XF_OK) {
            /* back from T(j) to T(j-1), j = nb - 1 - (i - na) */
            int j = nb - 1 - (i - na);
            st = step_back(d, &g, ix, b_hash[j - 1], &next, &steps[n], &back, err);
            if (back) n++;
            else stop = j;
        }
        xf_graph_index_free(ix);
        if (st == XF_OK && good && back) {
            xf_graph_free(&g);
            g = next;
        } else {
            xf_graph_free(&next);
        }
    }
    uint64_t last = 0;
    if (st == XF_OK && good) st = xf_graph_hash_checked(&g, XF_HASH_CONTENT, &last, err);
    xf_graph_free(&g);
    if (st != XF_OK || !good || last != b_hash[stop]) return st;
    for (int k = 0; k < stop; k++) {
        derive_step_of(d->rs, b[k].action, &b[k].m, &steps[n]);
        steps[n++].from_target = 1;
    }
    memcpy(out->steps, steps, sizeof steps[0] * (size_t)n);
    out->n_steps = n;
    out->from_target = stop;
    out->found = 1;
    *ok = 1;
    return XF_OK;
}
