/*
 * search_exhaustive.c — breadth-first search over every rule application:
 * the proof of what a rule set can reach from a small graph (issue 35's
 * look-ahead cases), against which the other searches and the agents are
 * measured.
 *
 * Level by level from the prepared model, every offered (rule, location)
 * of every graph is applied (no look-ahead: one rule at a time); a
 * successor is kept when its structural hash (xf_graph_hash_mode,
 * XF_HASH_IDENTITY) was never seen, it has at most size_cap times the
 * start's nodes and, with cost_bound > 0, it costs less than the bound.
 * Graphs wait in a first-in first-out queue, packed; the path to every
 * graph is on the trail, so the best graph's rules read back in order
 * (a shortest path to it). The search is complete when the queue empties
 * before the budget (graphs expanded), the time or max_depth stops it:
 * then no graph within the bounds is cheaper than the best.
 *
 * With cost_bound = alpha x the start's cost, the graphs kept are a
 * superset of what TASO's search with that alpha can ever queue (its
 * threshold is alpha x the best so far, never above alpha x the start):
 * a complete run whose best is above the unbounded optimum proves that
 * TASO's search misses the optimum whatever its budget.
 */
#include "agent/search/search_internal.h"

#include <math.h>
#include <string.h>

typedef struct fentry {
    int entry, depth;
    uint64_t hash;
    xf_graph_packed g;
} fentry;

typedef struct fifo {
    fentry *a;
    int64_t head, n, cap; /* entries [head, n) wait */
} fifo;

static xf_status fifo_push(fifo *q, int entry, int depth, uint64_t hash, xf_graph *g,
                           xf_error *err)
{
    if (q->n == q->cap) {
        if (q->head > 0) { /* reuse the expanded prefix before growing */
            memmove(q->a, q->a + q->head, (size_t)(q->n - q->head) * sizeof *q->a);
            q->n -= q->head;
            q->head = 0;
        }
        if (q->n == q->cap) {
            int64_t cap = q->cap ? 2 * q->cap : 256;
            fentry *na = xf_realloc(q->a, (size_t)cap * sizeof *na);
            if (!na) {
                xf_graph_free(g);
                return XF_FAIL(err, XF_ERR_NOMEM, "out of memory growing the exhaustive queue");
            }
            q->a = na;
            q->cap = cap;
        }
    }
    fentry f = {entry, depth, hash, {{0}, NULL, 0}};
    xf_status st = xf_graph_pack(g, &f.g, err);
    xf_graph_free(g);
    if (st) return st;
    q->a[q->n++] = f;
    return XF_OK;
}

static void fifo_free(fifo *q)
{
    for (int64_t i = q->head; i < q->n; i++) xf_graph_packed_free(&q->a[i].g);
    xf_free(q->a);
    memset(q, 0, sizeof *q);
}

/* Every successor of the environment's current graph (trail entry parent,
 * at depth `depth`) not seen before and within the bounds, queued. */
static xf_status expand(xf_search_ctx *c, fifo *q, int parent, int depth, double max_nodes,
                        int *stop, xf_error *err)
{
    xf_env *e = c->env;
    double bound = c->opt.cost_bound > 0 ? c->opt.cost_bound : INFINITY;
    for (int r = 0; r < xf_env_num_xfers(e); r++) {
        int n = search_locations(c, r);
        for (int l = 0; l < n; l++) {
            if (search_out_of_time(c)) {
                *stop = 1;
                return XF_OK;
            }
            double ms;
            xf_graph s;
            int added = 0, entry = -1;
            uint64_t h = 0;
            xf_status st = search_child(c, r, l, 0, bound, max_nodes, parent, &s, &ms, &entry,
                                        &h, &added, err);
            if (st) return st;
            if (!added) continue;
            st = fifo_push(q, entry, depth + 1, h, &s, err);
            if (st) return st;
        }
        search_tick(c);
    }
    return XF_OK;
}

xf_status search_exhaustive(xf_search_ctx *c, xf_error *err)
{
    xf_env *e = c->env;
    xf_search_result *res = c->res;
    double max_nodes = c->opt.size_cap * (double)xf_env_graph(e)->n_nodes;
    fifo q = {0};
    xf_graph g0;
    xf_status st = xf_graph_clone_shared(xf_env_graph(e), &g0, err);
    if (!st) st = fifo_push(&q, 0, 0, xf_env_hash(e), &g0, err);
    int stop = 0;
    res->depth = 0;
    while (!st && !stop && q.head < q.n && res->expanded < c->opt.budget &&
           !search_out_of_time(c)) {
        fentry top = q.a[q.head];
        if (c->opt.max_depth > 0 && top.depth >= c->opt.max_depth) break; /* FIFO: all deeper */
        q.head++;
        xf_graph g;
        xf_error lerr;
        st = xf_graph_unpack(&top.g, &g, err);
        xf_graph_packed_free(&top.g);
        if (st) break;
        st = search_env_adopt_graph(e, &g, &top.hash, &lerr);
        if (st && xf_action_skippable(st)) { /* a graph the cost model rejects: skip */
            xf_log(XF_LOG_WARN, "exhaustive search: skipping a graph: %s", lerr.msg);
            st = XF_OK;
            continue;
        }
        if (st) {
            if (err) *err = lerr;
            break;
        }
        res->expanded++;
        if (top.depth > res->depth) res->depth = top.depth;
        st = expand(c, &q, top.entry, top.depth, max_nodes, &stop, err);
    }
    res->complete = !st && !stop && q.head == q.n;
    fifo_free(&q);
    return st;
}
