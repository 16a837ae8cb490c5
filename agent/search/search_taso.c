/*
 * search_taso.c — TASO's cost-bounded backtracking search (Jia et al., SOSP
 * 2019, Algorithm 2) on the environment.
 *
 * A priority queue of graphs ordered by cost (ties: first pushed first)
 * starts with the prepared model. Expanding a graph loads it into the
 * environment and looks at every offered (rule, location): the successor's
 * cost comes from xf_env_peek (no graph built); a successor is built and
 * queued only when its cost is below alpha times the best cost so far, it has
 * at most size_cap times the prepared model's nodes, and its hash was never
 * seen. The best graph is updated as soon as a cheaper successor appears.
 * The budget counts expansions; max_seconds caps the wall time.
 *
 * Queued graphs share their constants with the model, so a queue entry costs
 * only the graph structure, packed (xf_graph_pack: about a tenth of it);
 * it keeps the hash computed for the seen-set, so
 * loading it into the environment does not hash it again. Since at most `budget - expanded` more graphs
 * will ever be popped, the queue keeps only that many (dropping its worst),
 * which bounds memory without changing what the search does.
 */
#include "agent/search/search_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct qentry {
    double cost;
    int64_t seq;
    int entry;     /* trail entry */
    uint64_t hash; /* xf_graph_hash_mode(&g, XF_HASH_IDENTITY), handed to the environment */
    xf_graph_packed g; /* packed while queued (xf_graph_pack): a thousand graphs of a
                          BERT-base took 0.5 GB as they were */
} qentry;

typedef struct queue {
    qentry *a;
    int n, cap;
} queue;

static int before(const qentry *x, const qentry *y)
{
    return x->cost < y->cost || (x->cost == y->cost && x->seq < y->seq);
}

static void swap_entries(qentry *a, int i, int j)
{
    qentry t = a[i];
    a[i] = a[j];
    a[j] = t;
}

static void sift_up(queue *q, int i)
{
    while (i > 0 && before(&q->a[i], &q->a[(i - 1) / 2])) {
        swap_entries(q->a, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void sift_down(queue *q, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < q->n && before(&q->a[l], &q->a[m])) m = l;
        if (r < q->n && before(&q->a[r], &q->a[m])) m = r;
        if (m == i) return;
        swap_entries(q->a, i, m);
        i = m;
    }
}

/* The index of the worst entry (a leaf of the binary heap). */
static int worst_entry(const queue *q)
{
    int worst = q->n / 2;
    for (int i = worst + 1; i < q->n; i++)
        if (before(&q->a[worst], &q->a[i])) worst = i;
    return worst;
}

/* Removes entry i, freeing its graph. The last entry moved into its place
 * needs at most a sift up when i is a leaf. */
static void drop_entry(queue *q, int i)
{
    xf_graph_packed_free(&q->a[i].g);
    q->a[i] = q->a[--q->n];
    if (i < q->n) sift_up(q, i);
}

/* Queues *g, keeping at most `keep` entries: when the queue is full a
 * graph no better than its worst entry is dropped before it is packed.
 * Takes *g over (left empty) on success and on failure. */
static xf_status push(queue *q, double cost, int64_t seq, int entry, uint64_t hash, xf_graph *g,
                      int keep, xf_error *err)
{
    qentry e = {cost, seq, entry, hash, {{0}, NULL, 0}};
    if (keep <= 0 || (q->n >= keep && !before(&e, &q->a[worst_entry(q)]))) {
        xf_graph_free(g);
        return XF_OK;
    }
    while (q->n >= keep) drop_entry(q, worst_entry(q));
    if (q->n == q->cap) {
        int cap = q->cap ? 2 * q->cap : 64;
        qentry *na = xf_realloc(q->a, (size_t)cap * sizeof *na);
        if (!na) {
            xf_graph_free(g);
            return XF_FAIL(err, XF_ERR_NOMEM, "out of memory growing the search queue");
        }
        q->a = na;
        q->cap = cap;
    }
    xf_status st = xf_graph_pack(g, &e.g, err);
    if (st != XF_OK) {
        xf_graph_free(g);
        return st;
    }
    q->a[q->n] = e;
    sift_up(q, q->n++);
    return XF_OK;
}

static qentry pop(queue *q)
{
    qentry top = q->a[0];
    q->a[0] = q->a[--q->n];
    sift_down(q, 0);
    return top;
}

static void queue_free(queue *q)
{
    for (int i = 0; i < q->n; i++) xf_graph_packed_free(&q->a[i].g);
    xf_free(q->a);
    memset(q, 0, sizeof *q);
}

/* Expands the environment's current graph (trail entry `parent`). Sets
 * *stop when the time ran out during the expansion. */
static xf_status expand(xf_search_ctx *c, queue *q, int64_t *seq, int parent, double max_nodes,
                        int *stop, xf_error *err)
{
    xf_env *e = c->env;
    xf_search_result *res = c->res;
    double eps = XF_SEARCH_EPS * res->initial_ms;
    int remaining = c->opt.budget - (int)res->expanded;
    for (int r = 0; r < xf_env_num_xfers(e); r++) {
        int n = search_locations(c, r);
        for (int l = 0; l < n; l++) {
            if (search_out_of_time(c)) {
                *stop = 1;
                return XF_OK;
            }
            search_tick(c);
            double ms;
            xf_graph s;
            int added = 0, entry = -1;
            uint64_t h = 0;
            xf_status st = search_child(c, r, l, 1, c->opt.alpha * res->best_ms - eps, max_nodes,
                                        parent, &s, &ms, &entry, &h, &added, err);
            if (st) return st;
            if (!added) continue;
            st = push(q, ms, (*seq)++, entry, h, &s, remaining, err);
            if (st) return st;
        }
    }
    return XF_OK;
}

xf_status search_taso(xf_search_ctx *c, xf_error *err)
{
    xf_env *e = c->env;
    xf_search_result *res = c->res;
    double eps = XF_SEARCH_EPS * res->initial_ms;
    double max_nodes = c->opt.size_cap * (double)xf_env_graph(e)->n_nodes;
    queue q = {0};
    int64_t seq = 0;
    xf_graph g0;
    xf_status st = xf_graph_clone_shared(xf_env_graph(e), &g0, err);
    if (!st) st = push(&q, res->initial_ms, seq++, 0, xf_env_hash(e), &g0, c->opt.budget, err);
    int stop = 0;
    while (!st && !stop && q.n > 0 && res->expanded < c->opt.budget &&
           !search_out_of_time(c)) {
        qentry top = pop(&q);
        xf_error lerr;
        xf_graph g;
        st = xf_graph_unpack(&top.g, &g, err);
        if (st) {
            xf_graph_packed_free(&top.g);
            break;
        }
        st = search_env_adopt_graph(e, &g, &top.hash, &lerr);
        if (st && xf_action_skippable(st)) { /* a graph the cost model rejects: skip */
            xf_log(XF_LOG_WARN, "taso search: skipping a queued graph: %s", lerr.msg);
            st = XF_OK;
            continue;
        }
        if (st) {
            if (err) *err = lerr;
            break;
        }
        res->expanded++;
        double real = xf_env_cost(e);
        if (real < res->best_ms - eps)
            st = search_keep_best(c, xf_env_graph(e), real, top.entry, err);
        if (!st) st = expand(c, &q, &seq, top.entry, max_nodes, &stop, err);
        search_tick(c);
    }
    queue_free(&q);
    return st;
}
