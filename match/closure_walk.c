/*
 * closure_walk.c — the closure's next view move (closure.c) found from what
 * the moves before it changed, instead of matching every move over the
 * whole graph at every step (issue 38: a look-ahead on BERT-base carries
 * one unflatten down through every later layer, some 200 steps over a
 * 400-node graph, and the search makes such walks for every view action it
 * prices).
 *
 * The closure takes, at each step, the first location (in xf_match_rule's
 * order) of the first move (in the plan's order) that has one. Here every
 * move's locations are looked for at each step, but only from two kinds of
 * first operator (root):
 *  - the roots within the move's reach of a node the last move changed
 *    (its target's nodes, the readers it redirected, the producers of its
 *    inputs, the matched nodes it left): a location holding a changed node
 *    has its root there, since the pattern's operators are found one from
 *    another as a producer, a reader, or (for moves that bind a rule input
 *    twice) another reader of a bound value;
 *  - the roots kept from the step before: where the move had a location,
 *    or a candidate that only the cycle check refused.
 * A location holding no changed node is made of copies of nodes with the
 * same inputs and the same readers, so it was a candidate the step before,
 * and every check but the cycle check (which reads the whole graph) gave it
 * the answer it gives now: it has a kept root. So the two kinds together
 * find every location the whole graph has, and the walk makes the moves
 * matching the whole graph would. A move is matched from every root once:
 * the first time the moves before it have no location, since the start or
 * an edit the walk does not follow (merged reshapes, a wrap); so a walk of
 * one step costs what one whole-graph look-up did, and each move after
 * that is matched at every step, near the changes.
 */
#include "match/match_internal.h"

#include <stdlib.h>
#include <string.h>

struct match_walk {
    match_scan *scan;
    int full;          /* no changed nodes to start from: after a restart */
    uint8_t *known;    /* per plan position: matched since the restart, so its
                          kept roots and the changed nodes find its locations */
    int cap;           /* entries of the per-node arrays */
    int *stamp, epoch; /* per node: the epoch it was last reached or marked in */
    int *dist;         /* per node: operators away from a changed one */
    int *queue;
    int *inv;    /* per node before a move: its index after it, -1 */
    int marked;  /* the epoch of match_walk_mark's marks */
    int *changed, n_changed;
    int n_known; /* plan positions 0..n_known-1 of `known` may be set */
    int *cand, *cstamp, cepoch; /* one move's roots, each once */
    int *kept, n_kept, cap_kept; /* (plan position, root) pairs, by position */
    int *next, n_next, cap_next; /* the same, being made */
    /* the changed nodes' neighbourhoods (without and with other readers of
     * an input) by root signature of the rule set: per signature the first
     * hit (-1); per hit its node, signature, next, distance and which
     * neighbourhood */
    int *hit_head;
    int *hit_node, *hit_group, *hit_next, *hit_dist, *hit_sib, n_hits, cap_hits;
};

xf_status match_walk_new(const xf_closure_plan *p, match_walk **out, xf_error *err)
{
    match_walk *w = xf_calloc(1, sizeof *w);
    int n_roots = p->rs->n_roots;
    if (w) {
        w->hit_head = xf_malloc(sizeof *w->hit_head * ((size_t)n_roots + 1));
        w->known = xf_calloc((size_t)p->n + 1, 1);
    }
    if (!w || !w->hit_head || !w->known || match_scan_new(&w->scan, err) != XF_OK) {
        match_walk_free(w);
        *out = NULL;
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory walking view moves");
    }
    for (int j = 0; j < n_roots; j++) w->hit_head[j] = -1;
    w->full = 1;
    *out = w;
    return XF_OK;
}

void match_walk_free(match_walk *w)
{
    if (!w) return;
    match_scan_free(w->scan);
    int **arrays[] = {&w->stamp, &w->dist, &w->queue, &w->inv, &w->changed, &w->cand,
                      &w->cstamp, &w->kept, &w->next, &w->hit_head, &w->hit_node,
                      &w->hit_group, &w->hit_next, &w->hit_dist, &w->hit_sib};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) xf_free(*arrays[i]);
    xf_free(w->known);
    xf_free(w);
}

void match_walk_restart(match_walk *w)
{
    w->full = 1;
    w->n_kept = 0;
    memset(w->known, 0, (size_t)w->n_known);
    w->n_known = 0;
}

const int *match_walk_changed(const match_walk *w, int *n)
{
    *n = w->full ? 0 : w->n_changed;
    return w->full ? NULL : w->changed;
}

int64_t match_walk_roots(const match_walk *w)
{
    return match_scan_roots(w->scan);
}

/* Room for n nodes in the per-node arrays (stamps of new entries 0, an
 * epoch no look-up uses). */
static xf_status room_for_nodes(match_walk *w, int n, xf_error *err)
{
    if (n < w->cap) return XF_OK;
    int cap = n + n / 2 + 64;
    int **arrays[] = {&w->stamp, &w->cstamp, &w->dist, &w->queue, &w->inv, &w->changed, &w->cand};
    for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
        int *a = xf_realloc(*arrays[i], sizeof *a * (size_t)cap);
        if (!a) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory walking view moves");
        *arrays[i] = a;
    }
    memset(w->stamp + w->cap, 0, sizeof *w->stamp * (size_t)(cap - w->cap));
    memset(w->cstamp + w->cap, 0, sizeof *w->cstamp * (size_t)(cap - w->cap));
    w->cap = cap;
    return XF_OK;
}

/* Room for one more pair in *a (n pairs, *cap of room). */
static xf_status room_for_pair(int **a, int n, int *cap, xf_error *err)
{
    if (n < *cap) return XF_OK;
    int c = *cap ? 2 * *cap : 64;
    int *b = xf_realloc(*a, sizeof *b * 2 * (size_t)c);
    if (!b) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory walking view moves");
    *a = b;
    *cap = c;
    return XF_OK;
}

/* Enters node x (of the neighbourhood `sib`) under each root signature of
 * the rule set it has. */
static xf_status add_hits(match_walk *w, const xf_ruleset *rs, const xf_graph *g,
                          const xf_graph_index *ix, int x, int sib, xf_error *err)
{
    uint64_t sig[XF_MATCH_NODE_SIGS];
    int k = match_node_sigs(g, ix, x, sig);
    for (int s = 0; s < k; s++) {
        int lo = 0, hi = rs->n_roots - 1, j = -1;
        while (lo <= hi && j < 0) {
            int mid = lo + (hi - lo) / 2;
            if (rs->root_sig[mid] == sig[s]) j = mid;
            else if (rs->root_sig[mid] < sig[s]) lo = mid + 1;
            else hi = mid - 1;
        }
        if (j < 0) continue;
        if (w->n_hits == w->cap_hits) {
            int cap = w->cap_hits ? 2 * w->cap_hits : 64;
            int **arrays[] = {&w->hit_node, &w->hit_group, &w->hit_next, &w->hit_dist,
                              &w->hit_sib};
            for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) {
                int *a = xf_realloc(*arrays[i], sizeof *a * (size_t)cap);
                if (!a) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory walking view moves");
                *arrays[i] = a;
            }
            w->cap_hits = cap;
        }
        w->hit_node[w->n_hits] = x;
        w->hit_group[w->n_hits] = j;
        w->hit_dist[w->n_hits] = w->dist[x];
        w->hit_sib[w->n_hits] = sib;
        w->hit_next[w->n_hits] = w->hit_head[j];
        w->hit_head[j] = w->n_hits++;
    }
    return XF_OK;
}

/* Reaches y from x (one operator further), once. */
static int reach(match_walk *w, int x, int y, int tail)
{
    if (w->stamp[y] == w->epoch) return tail;
    w->stamp[y] = w->epoch;
    w->dist[y] = w->dist[x] + 1;
    w->queue[tail] = y;
    return tail + 1;
}

/* The nodes within p->max_reach[sib] operators of a changed one, through
 * producers and readers (sib: also other readers of an input, for the
 * moves that bind one twice), with their distances, entered by root
 * signature. */
static xf_status neighbourhood(match_walk *w, const xf_closure_plan *p, const xf_graph *g,
                               const xf_graph_index *ix, int sib, xf_error *err)
{
    int tail = 0;
    if (p->max_reach[sib] < 0) return XF_OK; /* no move of the kind */
    w->epoch++;
    for (int i = 0; i < w->n_changed; i++) {
        int c = w->changed[i];
        if (w->stamp[c] == w->epoch) continue;
        w->stamp[c] = w->epoch;
        w->dist[c] = 0;
        w->queue[tail++] = c;
    }
    for (int head = 0; head < tail; head++) {
        int x = w->queue[head], k;
        xf_status st = add_hits(w, p->rs, g, ix, x, sib, err);
        if (st) return st;
        if (w->dist[x] >= p->max_reach[sib]) continue;
        const xf_node *n = &g->nodes[x];
        for (int s = 0; s < n->n_inputs; s++) {
            int v = n->inputs[s];
            if (v < 0) continue;
            if (g->values[v].kind == XF_VALUE_NODE) tail = reach(w, x, g->values[v].producer, tail);
            const int *u = sib ? xf_graph_index_users(ix, v, &k) : NULL;
            for (int j = 0; u && j < k; j++) tail = reach(w, x, u[j], tail);
        }
        for (int o = 0; o < n->n_outputs; o++) {
            const int *u = xf_graph_index_users(ix, n->outputs[o], &k);
            for (int j = 0; j < k; j++) tail = reach(w, x, u[j], tail);
        }
    }
    return XF_OK;
}

static void add_root(match_walk *w, int node, int *n)
{
    if (w->cstamp[node] == w->cepoch) return;
    w->cstamp[node] = w->cepoch;
    w->cand[(*n)++] = node;
}

/* Keeps plan position q's roots match_scan_kept lists, for the next step. */
static xf_status keep_roots(match_walk *w, int q, xf_error *err)
{
    int n;
    const int *kept = match_scan_kept(w->scan, &n);
    for (int i = 0; i < n; i++) {
        xf_status st = room_for_pair(&w->next, w->n_next, &w->cap_next, err);
        if (st) return st;
        w->next[2 * w->n_next] = q;
        w->next[2 * w->n_next + 1] = kept[i];
        w->n_next++;
    }
    return XF_OK;
}

xf_status match_walk_next(match_walk *w, const xf_closure_plan *p, const xf_graph *g,
                            const xf_graph_index *ix, xf_match *m, xf_error *err)
{
    const xf_ruleset *rs = p->rs;
    m->rule = -1;
    xf_status st = room_for_nodes(w, g->n_nodes, err);
    if (!st) st = match_scan_prepare(w->scan, g, ix, err);
    for (int sib = 0; sib < 2 && !st && !w->full; sib++) st = neighbourhood(w, p, g, ix, sib, err);
    w->n_next = 0;
    /* a move matched since the restart is matched at every step, from its
     * kept roots and the hits within its reach; one not matched yet is
     * matched from every root when the moves before it have no location,
     * and not before: the first look-up stops at the first location, as a
     * walk of one step would */
    for (int q = 0, at = 0; q < p->n && !st; q++) {
        int r = p->first[q], n = 0, whole = !w->known[q];
        if (whole && m->rule >= 0) continue;
        if (!whole) {
            w->cepoch++;
            for (; at < w->n_kept && w->kept[2 * at] == q; at++) add_root(w, w->kept[2 * at + 1], &n);
            for (int h = w->hit_head[rs->root_of[r]]; h >= 0; h = w->hit_next[h])
                if (w->hit_sib[h] == p->siblings[q] && w->hit_dist[h] <= p->reach[q])
                    add_root(w, w->hit_node[h], &n);
            if (n == 0) continue;
        }
        xf_match first;
        int found = 0;
        st = match_scan_rule(w->scan, rs, r, whole ? NULL : w->cand, n, &first, &found);
        if (!st && found > 0 && m->rule < 0) *m = first;
        if (!st) st = keep_roots(w, q, err);
        w->known[q] = 1;
        if (q >= w->n_known) w->n_known = q + 1;
    }
    for (int h = 0; h < w->n_hits; h++) w->hit_head[w->hit_group[h]] = -1;
    w->n_hits = 0;
    int *t = w->kept, c = w->cap_kept;
    w->kept = w->next;
    w->cap_kept = w->cap_next;
    w->n_kept = st ? 0 : w->n_next;
    w->next = t;
    w->cap_next = c;
    w->full = st != XF_OK;
    return st;
}

void match_walk_mark(match_walk *w, const xf_graph *g, const xf_graph_index *ix,
                       const xf_match *m)
{
    int e = w->marked = ++w->epoch, k;
    for (int i = 0; i < m->n_outputs; i++) {
        const int *u = xf_graph_index_users(ix, m->outputs[i], &k);
        for (int j = 0; j < k; j++) w->stamp[u[j]] = e;
    }
    for (int i = 0; i < m->n_nodes; i++) w->stamp[m->nodes[i]] = e;
    for (int i = 0; i < m->n_inputs; i++) {
        int v = m->inputs[i];
        if (v >= 0 && g->values[v].kind == XF_VALUE_NODE) w->stamp[g->values[v].producer] = e;
    }
}

xf_status match_walk_moved(match_walk *w, const xf_graph *g, int n_old, const int *from,
                             xf_error *err)
{
    xf_status st = room_for_nodes(w, g->n_nodes > n_old ? g->n_nodes : n_old, err);
    if (st) {
        match_walk_restart(w);
        return st;
    }
    for (int y = 0; y < n_old; y++) w->inv[y] = -1;
    w->n_changed = 0;
    for (int x = 0; x < g->n_nodes; x++) {
        if (from[x] >= 0) w->inv[from[x]] = x;
        if (from[x] < 0 || w->stamp[from[x]] == w->marked) w->changed[w->n_changed++] = x;
    }
    int n = 0; /* the kept roots, renumbered; those the move removed go */
    for (int i = 0; i < w->n_kept; i++) {
        int x = w->inv[w->kept[2 * i + 1]];
        if (x < 0) continue;
        w->kept[2 * n] = w->kept[2 * i];
        w->kept[2 * n + 1] = x;
        n++;
    }
    w->n_kept = n;
    return XF_OK;
}
