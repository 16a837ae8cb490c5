/*
 * cost.c — the cost of a working graph, and the memo of operator costs that
 * lets the environment re-cost a graph on every step (see costmemo.h).
 *
 * A working graph's cost is the sum of its operators' costs, except that
 * weight-only nodes (computed from constants alone, e.g. a concat of two
 * weights a rule created) cost nothing: xf_agent_finish folds them into
 * initializers before export, so they never run.
 *
 * After a rewrite, nodes the rewrite did not touch keep their cost
 * (xf_costmemo_graph_from); only the new ones go through the memo.
 */
#include "agent/costmemo.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define MEMO_ARITY 8      /* inputs stored per entry; wider operators bypass the memo */
#define MEMO_INITIAL 1024 /* slots; the table doubles at half load */

typedef struct memo_entry {
    uint64_t hash; /* 0: empty slot */
    xf_op op;
    int n_inputs;
    xf_dtype dtype[MEMO_ARITY];
    xf_shape shape[MEMO_ARITY];
    xf_params params;
    xf_op_cost cost;
} memo_entry;

struct xf_costmemo {
    xf_cost_model *cm;
    memo_entry *slot;
    size_t cap, used;
};

/* 1 when node's outputs are weight-only (it costs nothing: folded at export). */
static int node_weight_only(const xf_graph *g, const xf_graph_index *ix, int node)
{
    const xf_node *nd = &g->nodes[node];
    return nd->n_outputs > 0 && xf_graph_index_weight_only(ix, nd->outputs[0]);
}

static void add_cost(xf_op_cost *total, const xf_op_cost *c)
{
    total->ms += c->ms;
    total->flops += c->flops;
    total->bytes += c->bytes;
    total->kernels += c->kernels;
}

xf_status xf_agent_graph_cost(xf_cost_model *cm, const xf_graph *g, const xf_graph_index *ix,
                              xf_op_cost *total, xf_error *err)
{
    memset(total, 0, sizeof *total);
    int64_t before = xf_cost_measurements(cm);
    for (int i = 0; i < g->n_nodes; i++) {
        if (node_weight_only(g, ix, i)) continue;
        xf_op_cost c;
        xf_status st = xf_cost_node(cm, g, i, &c, err);
        if (st) return st;
        add_cost(total, &c);
    }
    total->from_cache = xf_cost_measurements(cm) == before;
    return XF_OK;
}

/* ------------------------------------------------------------------ memo */

xf_status xf_costmemo_create(xf_cost_model *cm, xf_costmemo **out, xf_error *err)
{
    *out = NULL;
    xf_costmemo *m = xf_calloc(1, sizeof *m);
    if (m) m->slot = xf_calloc(MEMO_INITIAL, sizeof *m->slot);
    if (!m || !m->slot) {
        xf_free(m);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory creating the cost memo");
    }
    m->cm = cm;
    m->cap = MEMO_INITIAL;
    *out = m;
    return XF_OK;
}

void xf_costmemo_free(xf_costmemo *m)
{
    if (!m) return;
    xf_free(m->slot);
    xf_free(m);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9E3779B97F4A7C15ULL + (h << 6) + (h >> 2);
    h *= 0xBF58476D1CE4E5B9ULL;
    return h ^ (h >> 31);
}

/* Hashes n bytes eight at a time in four independent lanes (the struct
 * hashed has no padding); the lanes keep the multiplies pipelined, which
 * makes this several times faster than one chain over a 500-byte struct. */
static uint64_t mix_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    uint64_t lane[4] = {h, h ^ 0x9E3779B97F4A7C15ULL, h ^ 0xC2B2AE3D27D4EB4FULL,
                        h ^ 0x165667B19E3779F9ULL};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int k = 0; k < 4; k++) {
            uint64_t w;
            memcpy(&w, b + i + 8 * (size_t)k, 8);
            lane[k] = (lane[k] ^ w) * 0xBF58476D1CE4E5B9ULL;
            lane[k] ^= lane[k] >> 29;
        }
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        lane[0] = mix(lane[0], w);
    }
    uint64_t tail = 0;
    memcpy(&tail, b + i, n - i);
    h = mix(lane[0], tail ^ (uint64_t)n);
    for (int k = 1; k < 4; k++) h = mix(h, lane[k]);
    return h;
}

/* Hash of a configuration. The split sizes past n_split are zero on
 * canonical parameters, so they are left out of the hash (not of the
 * equality test): most operators then hash half the struct. */
static uint64_t config_hash(xf_op op, const xf_params *p, int n, const xf_dtype *dt,
                            const xf_shape *sh)
{
    uint64_t h = mix(0x243F6A8885A308D3ULL, (uint64_t)op * 131u + (uint64_t)n);
    for (int i = 0; i < n; i++) {
        h = mix(h, (uint64_t)dt[i]);
        if (dt[i] == XF_DTYPE_INVALID) continue;
        h = mix(h, (uint64_t)sh[i].rank);
        for (int d = 0; d < sh[i].rank; d++) h = mix(h, (uint64_t)sh[i].dims[d]);
    }
    int ns = p->n_split < 0 ? 0 : p->n_split > XF_MAX_SPLIT ? XF_MAX_SPLIT : p->n_split;
    h = mix_bytes(h, p, offsetof(xf_params, split) + (size_t)ns * sizeof p->split[0]);
    return h ? h : 1;
}

static int same_config(const memo_entry *e, xf_op op, const xf_params *p, int n,
                       const xf_dtype *dt, const xf_shape *sh)
{
    if (e->op != op || e->n_inputs != n) return 0;
    for (int i = 0; i < n; i++) {
        if (e->dtype[i] != dt[i]) return 0;
        if (dt[i] == XF_DTYPE_INVALID) continue;
        if (!xf_shape_equal(&e->shape[i], &sh[i])) return 0;
    }
    return memcmp(&e->params, p, sizeof *p) == 0;
}

static memo_entry *probe(memo_entry *slot, size_t cap, uint64_t h, xf_op op, const xf_params *p,
                         int n, const xf_dtype *dt, const xf_shape *sh)
{
    size_t i = (size_t)h & (cap - 1);
    while (slot[i].hash) {
        if (slot[i].hash == h && same_config(&slot[i], op, p, n, dt, sh)) return &slot[i];
        i = (i + 1) & (cap - 1);
    }
    return &slot[i];
}

static xf_status grow(xf_costmemo *m, xf_error *err)
{
    size_t cap = m->cap * 2;
    memo_entry *slot = xf_calloc(cap, sizeof *slot);
    if (!slot) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory growing the cost memo");
    for (size_t i = 0; i < m->cap; i++) {
        const memo_entry *e = &m->slot[i];
        if (!e->hash) continue;
        *probe(slot, cap, e->hash, e->op, &e->params, e->n_inputs, e->dtype, e->shape) = *e;
    }
    xf_free(m->slot);
    m->slot = slot;
    m->cap = cap;
    return XF_OK;
}

xf_status xf_costmemo_op(xf_costmemo *m, xf_op op, const xf_params *params, int n_inputs,
                         const xf_dtype *in_dtypes, const xf_shape *in_shapes, xf_op_cost *out,
                         xf_error *err)
{
    if (n_inputs < 0 || n_inputs > MEMO_ARITY || !params) {
        return xf_cost_op(m->cm, op, params, n_inputs, in_dtypes, in_shapes, out, err);
    }
    uint64_t h = config_hash(op, params, n_inputs, in_dtypes, in_shapes);
    memo_entry *e = probe(m->slot, m->cap, h, op, params, n_inputs, in_dtypes, in_shapes);
    if (e->hash) {
        *out = e->cost;
        return XF_OK;
    }
    xf_status st = xf_cost_op(m->cm, op, params, n_inputs, in_dtypes, in_shapes, out, err);
    if (st) return st;
    if (2 * (m->used + 1) > m->cap) {
        st = grow(m, err);
        if (st) return st;
        e = probe(m->slot, m->cap, h, op, params, n_inputs, in_dtypes, in_shapes);
    }
    memset(e, 0, sizeof *e);
    e->hash = h;
    e->op = op;
    e->n_inputs = n_inputs;
    for (int i = 0; i < n_inputs; i++) {
        e->dtype[i] = in_dtypes[i];
        if (in_dtypes[i] != XF_DTYPE_INVALID) e->shape[i] = in_shapes[i];
    }
    e->params = *params;
    e->cost = *out;
    e->cost.from_cache = 1;
    m->used++;
    return XF_OK;
}

static xf_status memo_node(xf_costmemo *m, const xf_graph *g, int node, xf_op_cost *out,
                           xf_error *err)
{
    const xf_node *nd = &g->nodes[node];
    if (nd->op == XF_OP_OPAQUE || nd->n_inputs > MEMO_ARITY) {
        return xf_cost_node(m->cm, g, node, out, err);
    }
    xf_dtype dt[MEMO_ARITY] = {XF_DTYPE_INVALID};
    xf_shape sh[MEMO_ARITY] = {{0}};
    for (int i = 0; i < nd->n_inputs; i++) {
        int v = nd->inputs[i];
        if (v < 0) continue; /* omitted optional input: dtype INVALID */
        dt[i] = g->values[v].dtype;
        sh[i] = g->values[v].shape;
    }
    xf_status st = xf_costmemo_op(m, nd->op, &nd->params, nd->n_inputs, dt, sh, out, err);
    if (st) {
        char d[256];
        xf_error_prefix(err, "%s: ", xf_node_describe(g, node, d, sizeof d));
    }
    return st;
}

xf_status xf_costmemo_graph(xf_costmemo *m, const xf_graph *g, const xf_graph_index *ix,
                            xf_op_cost *per_node, xf_op_cost *total, xf_error *err)
{
    return xf_costmemo_graph_from(m, g, ix, NULL, NULL, NULL, NULL, per_node, total, err);
}

xf_status xf_costmemo_graph_from(xf_costmemo *m, const xf_graph *g, const xf_graph_index *ix,
                                 const xf_graph *pg, const xf_graph_index *pix,
                                 const xf_op_cost *prev_cost, const int *from,
                                 xf_op_cost *per_node, xf_op_cost *total, xf_error *err)
{
    memset(total, 0, sizeof *total);
    int64_t before = xf_cost_measurements(m->cm);
    for (int i = 0; i < g->n_nodes; i++) {
        xf_op_cost c;
        memset(&c, 0, sizeof c);
        if (!node_weight_only(g, ix, i)) {
            if (from && from[i] >= 0 && !node_weight_only(pg, pix, from[i])) {
                c = prev_cost[from[i]];
            } else {
                xf_status st = memo_node(m, g, i, &c, err);
                if (st) return st;
            }
            add_cost(total, &c);
        }
        if (per_node) per_node[i] = c;
    }
    total->from_cache = xf_cost_measurements(m->cm) == before;
    return XF_OK;
}
