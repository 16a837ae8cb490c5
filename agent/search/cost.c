/*
 * cost.c — the cost of a working graph, and the memo of operator costs that
 * lets the environment re-cost a graph on every step (xf_costmemo in search.h).
 *
 * A working graph's cost is the sum of its operators' costs, except that
 * weight-only nodes (computed from constants alone, e.g. a concat of two
 * weights a rule created) cost nothing: xf_agent_finish folds them into
 * initializers before export, so they never run.
 *
 * After a rewrite, nodes the rewrite did not touch keep their cost
 * (xf_costmemo_graph_from); only the new ones go through the memo.
 */
#include "agent/search/search.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define MEMO_ARITY 8      /* inputs stored per entry; wider operators bypass the memo */
#define MEMO_INITIAL 512  /* entries reserved at creation */

typedef struct memo_entry {
    xf_op op;
    int n_inputs;
    xf_dtype dtype[MEMO_ARITY];
    xf_shape shape[MEMO_ARITY];
    xf_params params;
    xf_op_cost cost;
} memo_entry;

struct xf_costmemo {
    xf_cost_model *cm;
    memo_entry *ent; /* in insertion order */
    size_t n, cap;
    xf_htab index;   /* config_hash -> entry */
    xf_fused_cost *fused; /* graph totals from here when set (not owned) */
    double view_ms, bytes_per_ms; /* xf_costmemo_set_layout; 0: none */
};

void xf_costmemo_set_layout(xf_costmemo *m, double view_ms, double gbps)
{
    m->view_ms = view_ms > 0 ? view_ms : 0;
    m->bytes_per_ms = gbps > 0 ? gbps * 1e6 : 0;
}

int xf_costmemo_wrapped_matmul(const xf_costmemo *m, xf_op op, int n_inputs,
                               const xf_shape *in_shapes)
{
    return m->bytes_per_ms > 0 && op == XF_OP_MATMUL && n_inputs == 2 &&
           in_shapes[0].rank >= 3 && in_shapes[1].rank == 2;
}

/* ONNX Runtime's layout cost of one configuration (xf_costmemo_set_layout). */
static double layout_cost(const xf_costmemo *m, xf_op op, int n_inputs, const xf_shape *in_shapes)
{
    if (xf_op_reshapes(op)) return m->view_ms;
    if (xf_costmemo_wrapped_matmul(m, op, n_inputs, in_shapes)) {
        const xf_shape *a = &in_shapes[0];
        double in = 4.0 * (double)xf_shape_numel(a);
        double out = in / (double)a->dims[a->rank - 1] * (double)in_shapes[1].dims[1];
        return (in + out) / m->bytes_per_ms;
    }
    return 0;
}

void xf_costmemo_use_fused(xf_costmemo *m, xf_fused_cost *fc)
{
    m->fused = fc;
}

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
    if (m) m->ent = xf_malloc(MEMO_INITIAL * sizeof *m->ent);
    if (!m || !m->ent || xf_htab_reserve(&m->index, MEMO_INITIAL, NULL) != XF_OK) {
        xf_costmemo_free(m);
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
    xf_htab_free(&m->index);
    xf_free(m->ent);
    xf_free(m);
}

/* Hash of a configuration. The split sizes past n_split are zero on
 * canonical parameters, so they are left out of the hash (not of the
 * equality test): most operators then hash half the struct. */
static uint64_t config_hash(xf_op op, const xf_params *p, int n, const xf_dtype *dt,
                            const xf_shape *sh)
{
    uint64_t h = xf_hash_u64(0x243F6A8885A308D3ULL, (uint64_t)op * 131u + (uint64_t)n);
    for (int i = 0; i < n; i++) {
        h = xf_hash_u64(h, (uint64_t)dt[i]);
        if (dt[i] == XF_DTYPE_INVALID) continue;
        h = xf_hash_u64(h, (uint64_t)sh[i].rank);
        for (int d = 0; d < sh[i].rank; d++) h = xf_hash_u64(h, (uint64_t)sh[i].dims[d]);
    }
    int ns = p->n_split < 0 ? 0 : p->n_split > XF_MAX_SPLIT ? XF_MAX_SPLIT : p->n_split;
    h = xf_hash_bytes(h, p, offsetof(xf_params, split) + (size_t)ns * sizeof p->split[0]);
    return xf_htab_key(h);
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

static const memo_entry *find(const xf_costmemo *m, uint64_t h, xf_op op, const xf_params *p,
                              int n, const xf_dtype *dt, const xf_shape *sh)
{
    size_t pos = XF_HTAB_START;
    for (const uint64_t *e; (e = xf_htab_next(&m->index, h, &pos));)
        if (same_config(&m->ent[*e], op, p, n, dt, sh)) return &m->ent[*e];
    return NULL;
}

/* With the ORT layout costs on, the input shapes of the kernel ONNX Runtime
 * 1.30 (CPU) runs for (op, in_shapes), written to `kernel`: the shapes
 * themselves but for
 *  - a matmul of a 3-D or larger input by a 2-D weight: its input flattened
 *    to [rows, K], the one GEMM ORT runs for it (a Gemm between Reshapes, or
 *    a MatMul whose helper flattens a left operand when the right one is
 *    2-D);
 *  - an element-wise operator (XF_OPC_ELEMENTWISE and not a view: a view's
 *    parameters may name input axes): the leading unit dims of its
 *    highest-rank operands dropped (a lower-rank operand broadcasts from
 *    the right either way), as ORT's loops see the same elements.
 * So [1, S, H] and [S, H] are priced by one kernel time: the oneDNN times of
 * the two forms differ where ORT's do not (modelzoo GPT at batch 1, one
 * thread: the LM head's [1,32,128]x[128,1000] timed 0.087 ms and its 2-D
 * form 0.131 ms, a [1,32,512] tanh 0.053 ms and [32,512] 0.067 ms, and the
 * 15-rule 3-D graph cost as little as the 57-rule 2-D one that ORT runs
 * 2.5% faster; docs/log/target.md, 2026-11-30 i38d). What differs between
 * the forms in ORT, the Reshapes it wraps a 3-D Gemm in, is layout_cost's. */
static void ort_kernel_shapes(const xf_costmemo *m, xf_op op, int n, const xf_dtype *dt,
                              const xf_shape *in, xf_shape *kernel)
{
    for (int i = 0; i < n; i++) kernel[i] = in[i];
    if (m->view_ms <= 0) return;
    if (op == XF_OP_MATMUL && n == 2 && in[0].rank >= 3 && in[1].rank == 2) {
        int64_t k = in[0].dims[in[0].rank - 1];
        for (int d = 0; d < in[0].rank; d++)
            if (in[0].dims[d] <= 0) return;
        kernel[0] = xf_shape_make(2, (const int64_t[]){xf_shape_numel(&in[0]) / k, k});
        return;
    }
    if (!xf_op_is(op, XF_OPC_ELEMENTWISE) || xf_op_is(op, XF_OPC_VIEW)) return;
    int rank = 0;
    for (int i = 0; i < n; i++)
        if (dt[i] != XF_DTYPE_INVALID && in[i].rank > rank) rank = in[i].rank;
    for (; rank > 1; rank--) {
        for (int i = 0; i < n; i++)
            if (dt[i] != XF_DTYPE_INVALID && kernel[i].rank == rank && kernel[i].dims[0] != 1)
                return;
        for (int i = 0; i < n; i++) {
            if (dt[i] == XF_DTYPE_INVALID || kernel[i].rank != rank) continue;
            kernel[i] = xf_shape_make(rank - 1, kernel[i].dims + 1);
        }
    }
}

xf_status xf_costmemo_op(xf_costmemo *m, xf_op op, const xf_params *params, int n_inputs,
                         const xf_dtype *in_dtypes, const xf_shape *in_shapes, xf_op_cost *out,
                         xf_error *err)
{
    if (n_inputs < 0 || n_inputs > MEMO_ARITY || !params) {
        xf_status st = xf_cost_op(m->cm, op, params, n_inputs, in_dtypes, in_shapes, out, err);
        if (!st) out->ms += layout_cost(m, op, n_inputs, in_shapes);
        return st;
    }
    xf_shape kernel[MEMO_ARITY];
    ort_kernel_shapes(m, op, n_inputs, in_dtypes, in_shapes, kernel);
    uint64_t h = config_hash(op, params, n_inputs, in_dtypes, kernel);
    const memo_entry *hit = find(m, h, op, params, n_inputs, in_dtypes, kernel);
    if (hit) {
        *out = hit->cost;
        out->ms += layout_cost(m, op, n_inputs, in_shapes);
        return XF_OK;
    }
    xf_status st = xf_cost_op(m->cm, op, params, n_inputs, in_dtypes, kernel, out, err);
    if (st) return st;
    if (m->n == m->cap) {
        memo_entry *ent = xf_realloc(m->ent, 2 * m->cap * sizeof *ent);
        if (!ent) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory growing the cost memo");
        m->ent = ent;
        m->cap *= 2;
    }
    st = xf_htab_add(&m->index, h, m->n, err);
    if (st) return st;
    memo_entry *e = &m->ent[m->n++];
    memset(e, 0, sizeof *e);
    e->op = op;
    e->n_inputs = n_inputs;
    for (int i = 0; i < n_inputs; i++) {
        e->dtype[i] = in_dtypes[i];
        if (in_dtypes[i] != XF_DTYPE_INVALID) e->shape[i] = kernel[i];
    }
    e->params = *params;
    e->cost = *out;
    e->cost.from_cache = 1;
    out->ms += layout_cost(m, op, n_inputs, in_shapes);
    return XF_OK;
}

int xf_ort_folds_transpose(const xf_params *p, int r)
{
    if (r < 3 || p->n_axes != r) return 0;
    int batch = 1, batch_t = 1;
    for (int i = 0; i < r; i++) {
        int64_t want = i < r - 2 ? i + 1 : i == r - 2 ? 0 : r - 1;
        int64_t want_t = i < r - 2 ? i + 1 : i == r - 2 ? r - 1 : 0;
        int64_t a = p->axes[i] < 0 ? p->axes[i] + r : p->axes[i];
        batch &= a == want;
        batch_t &= a == want_t;
    }
    return batch || batch_t;
}

int xf_costmemo_may_fold(const xf_costmemo *m, xf_op op, const xf_params *p, int rank)
{
    return m->view_ms > 0 && op == XF_OP_TRANSPOSE && xf_ort_folds_transpose(p, rank);
}

/* 1 when node is such a transpose and every reader is a MatMul of rank >= 3
 * operands: with the ORT layout costs on it costs nothing. Measured on
 * modelzoo GPT (ONNX Runtime 1.30, docs/log/target.md, 2026-11-29 late):
 * its Q/K/V transposes to heads in this form leave no Transpose in the
 * optimised graph, where 0,2,1,3 of [1,S,h,d] leaves one per part. */
static int ort_folded_transpose(const xf_graph *g, const xf_graph_index *ix, int node)
{
    const xf_node *nd = &g->nodes[node];
    if (nd->op != XF_OP_TRANSPOSE || nd->n_inputs < 1 || nd->inputs[0] < 0 || !ix) return 0;
    if (!xf_ort_folds_transpose(&nd->params, g->values[nd->inputs[0]].shape.rank)) return 0;
    int n = 0;
    const int *users = xf_graph_index_users(ix, nd->outputs[0], &n);
    if (n == 0) return 0;
    for (int u = 0; u < n; u++) {
        const xf_node *m = &g->nodes[users[u]];
        if (m->op != XF_OP_MATMUL || m->n_inputs != 2) return 0;
        for (int k = 0; k < 2; k++)
            if (m->inputs[k] < 0 || g->values[m->inputs[k]].shape.rank < 3) return 0;
    }
    return 1;
}

/* 1 when node is a view whose input another view (not weight-only) makes:
 * ONNX Runtime merges the run into one Reshape, so with the ORT layout
 * costs on only the first of a run costs a node. */
static int merged_view(const xf_graph *g, const xf_graph_index *ix, int node)
{
    const xf_node *nd = &g->nodes[node];
    if (!xf_op_reshapes(nd->op) || nd->n_inputs < 1 || nd->inputs[0] < 0 || !ix) return 0;
    const xf_value *in = &g->values[nd->inputs[0]];
    if (in->kind != XF_VALUE_NODE || in->producer < 0) return 0;
    return xf_op_reshapes(g->nodes[in->producer].op) && !node_weight_only(g, ix, in->producer);
}

/* 1 when value v is read by node `reader` alone and is no graph output. */
static int feeds_only(const xf_graph *g, const xf_graph_index *ix, int v, int reader)
{
    int n = 0;
    const int *users = xf_graph_index_users(ix, v, &n);
    return n == 1 && users[0] == reader && !xf_graph_is_output(g, v);
}

/* 1 when ONNX Runtime 1.30's MatMulAddFusion turns matmul node `mm` and the
 * add reading it into a Gemm (onnxruntime/core/optimizer/matmul_add_fusion.cc):
 * a 2-D weight, the matmul's output read by that add alone and no graph
 * output, and the add's other operand a bias Gemm broadcasts: [N] for an
 * input of rank 3 or more (ORT wraps that Gemm in Reshapes); [N], [1,N],
 * [M,1] or [M,N] for a 2-D input. A residual add of a 3-D matmul (its other
 * operand an activation [.., S, N]) is no bias: that matmul stays a MatMul.
 * Not modelled: ORT also skips a 3-D input with a symbolic dim (the graph
 * here has its dims bound) and the attention fusion's Q/K/V pattern. */
static int ort_gemm_add(const xf_graph *g, const xf_graph_index *ix, int mm)
{
    const xf_node *nd = &g->nodes[mm];
    if (nd->op != XF_OP_MATMUL || nd->n_inputs != 2 || nd->inputs[0] < 0 || nd->inputs[1] < 0 ||
        !ix || xf_graph_is_output(g, nd->outputs[0]))
        return 0;
    const xf_shape *a = &g->values[nd->inputs[0]].shape, *b = &g->values[nd->inputs[1]].shape;
    int n = 0;
    const int *users = xf_graph_index_users(ix, nd->outputs[0], &n);
    if (b->rank != 2 || a->rank < 2 || n != 1) return 0;
    const xf_node *add = &g->nodes[users[0]];
    if (add->op != XF_OP_ADD || add->n_inputs != 2) return 0;
    int other = add->inputs[0] == nd->outputs[0] ? add->inputs[1] : add->inputs[0];
    if (other < 0) return 0;
    const xf_shape *c = &g->values[other].shape;
    int64_t m = a->dims[0], cols = b->dims[1];
    if (c->rank == 1) return c->dims[0] == cols;
    if (a->rank != 2 || c->rank != 2) return 0;
    return (c->dims[0] == 1 && c->dims[1] == cols) ||
           (c->dims[0] == m && (c->dims[1] == 1 || c->dims[1] == cols));
}

/* The layout cost of node when it is a matmul of a 3-D or larger input by
 * a 2-D weight (xf_costmemo_wrapped_matmul) whose output is a graph output,
 * 0 otherwise: ONNX Runtime wraps such a matmul in Reshapes only to fuse a
 * bias add into a Gemm (ort_gemm_add), never where the matmul makes a graph
 * output, and runs it as it stands otherwise. Modelzoo GPT's LM head (ORT's
 * profile, 2 threads): 3-D, 53 us at batch 1 and 163 us at batch 4;
 * flattened, its MatMul 47 and 162 us and the Reshape back to the 3-D
 * output 7 and 18 us. Only a graph output's matmul, the case measured:
 * taken back inside the graph as well, every rewrite next to a linear layer
 * was priced on the whole graph after it, and BERT-base's search took twice
 * as long (docs/log/target.md). */
static double unwrapped_matmul_cost(const xf_costmemo *m, const xf_graph *g,
                                    const xf_graph_index *ix, int node)
{
    const xf_node *nd = &g->nodes[node];
    if (nd->op != XF_OP_MATMUL || nd->n_inputs != 2 || nd->inputs[0] < 0 || nd->inputs[1] < 0 ||
        !ix)
        return 0;
    xf_shape sh[2] = {g->values[nd->inputs[0]].shape, g->values[nd->inputs[1]].shape};
    if (!xf_costmemo_wrapped_matmul(m, nd->op, 2, sh) || !xf_graph_is_output(g, nd->outputs[0]))
        return 0;
    return layout_cost(m, nd->op, 2, sh);
}

/* When node scales by a one-element float constant (scalar_mul; a mul by
 * such a constant either side; a div by one), the index of the operand it
 * scales, -1 otherwise. */
static int scaled_operand(const xf_graph *g, int node)
{
    const xf_node *nd = &g->nodes[node];
    if (nd->n_inputs != 2 || nd->inputs[0] < 0 || nd->inputs[1] < 0) return -1;
    if (nd->op != XF_OP_SCALAR_MUL && nd->op != XF_OP_MUL && nd->op != XF_OP_DIV) return -1;
    for (int side = 1; side >= 0; side--) {
        if (side == 0 && nd->op != XF_OP_MUL) break;
        const xf_value *c = &g->values[nd->inputs[side]];
        const xf_value *x = &g->values[nd->inputs[1 - side]];
        if (c->kind == XF_VALUE_CONST && c->dtype == XF_F32 && xf_shape_numel(&c->shape) == 1 &&
            c->shape.rank <= x->shape.rank && x->shape.rank > 0 && x->dtype == XF_F32)
            return nd->inputs[1 - side];
    }
    return -1;
}

/* 1 when matmul node mm stays a (Fused)MatMul in ONNX Runtime, so that
 * MatMulScaleFusion may take a scale into its alpha: a float matmul that
 * MatMulAddFusion (which runs first, at level 1) does not make a Gemm. */
static int ort_scalable_matmul(const xf_graph *g, const xf_graph_index *ix, int mm)
{
    const xf_node *nd = &g->nodes[mm];
    return nd->op == XF_OP_MATMUL && nd->n_inputs == 2 && nd->inputs[0] >= 0 &&
           g->values[nd->inputs[0]].dtype == XF_F32 && !ort_gemm_add(g, ix, mm);
}

/* 1 when node is a scaling (scaled_operand) that ONNX Runtime 1.30's
 * MatMulScaleFusion folds into a FusedMatMul's alpha (onnxruntime/core/
 * optimizer/matmul_scale_fusion.cc), so that it runs no kernel: its output
 * read by such matmuls alone and no graph output (a leading scale), or its
 * input made by such a matmul that it alone reads, no graph output (a
 * trailing scale). Modelzoo GPT at batch 4, 2 threads (ORT's profile,
 * docs/log/target.md): the attention's 1/sqrt(d) after the scores' MatMul
 * costs nothing; moved across the heads' Reshape and Transpose onto q (the
 * scalar rules) it ran as a Mul over [4,32,128], 13 us. */
static int ort_fused_scale(const xf_graph *g, const xf_graph_index *ix, int node)
{
    int x = ix ? scaled_operand(g, node) : -1;
    if (x < 0) return 0;
    const xf_node *nd = &g->nodes[node];
    int n = 0;
    const int *users = xf_graph_index_users(ix, nd->outputs[0], &n);
    int leading = n > 0 && !xf_graph_is_output(g, nd->outputs[0]);
    for (int u = 0; leading && u < n; u++) leading = ort_scalable_matmul(g, ix, users[u]);
    if (leading) return 1;
    const xf_value *in = &g->values[x];
    if (in->kind != XF_VALUE_NODE || in->producer < 0) return 0;
    return ort_scalable_matmul(g, ix, in->producer) && feeds_only(g, ix, x, node);
}

/* The copy of a view's output when it is a graph output, 0 otherwise:
 * ONNX Runtime's Reshape aliases its input only inside the graph and
 * copies into an output the caller owns (XF_ORT_OUTPUT_COPY_GBPS). */
static double output_view_cost(const xf_costmemo *m, const xf_graph *g, int node)
{
    const xf_node *nd = &g->nodes[node];
    if (m->view_ms <= 0 || !xf_op_reshapes(nd->op) || nd->n_outputs < 1) return 0;
    const xf_value *v = &g->values[nd->outputs[0]];
    if (!xf_graph_is_output(g, nd->outputs[0])) return 0;
    return (double)xf_dtype_size(v->dtype) * (double)xf_shape_numel(&v->shape) /
           (XF_ORT_OUTPUT_COPY_GBPS * 1e6);
}

/* Is value v a float32 constant of one element within 1e-4 relative of want? */
static int one_const_near(const xf_graph *g, int v, float want)
{
    if (v < 0) return 0;
    const xf_value *c = &g->values[v];
    if (c->kind != XF_VALUE_CONST || c->dtype != XF_F32 || !c->data ||
        xf_shape_numel(&c->shape) != 1)
        return 0;
    float f = *(const float *)c->data;
    return f - want <= 1e-4f * want && want - f <= 1e-4f * want;
}

/* The node making value v when it is op (a mul matching scalar_mul too)
 * with two inputs, one of them a one-element constant near k (k 0: any
 * operands); its other operand in *other. -1 otherwise. */
static int producer_with(const xf_graph *g, int v, xf_op op, float k, int *other)
{
    if (v < 0 || g->values[v].kind != XF_VALUE_NODE || g->values[v].producer < 0) return -1;
    int n = g->values[v].producer;
    const xf_node *nd = &g->nodes[n];
    int same = nd->op == op || (op == XF_OP_MUL && nd->op == XF_OP_SCALAR_MUL);
    if (!same || nd->n_inputs != 2 || nd->inputs[0] < 0 || nd->inputs[1] < 0) return -1;
    for (int side = 0; side < 2; side++)
        if (k == 0 || one_const_near(g, nd->inputs[1 - side], k)) {
            *other = nd->inputs[side];
            return n;
        }
    return -1;
}

/* The only reader of value v when it is op; -1 otherwise. */
static int sole_reader(const xf_graph *g, const xf_graph_index *ix, int v, xf_op op)
{
    int n = 0;
    const int *users = xf_graph_index_users(ix, v, &n);
    if (n != 1) return -1;
    const xf_node *nd = &g->nodes[users[0]];
    int same = nd->op == op || (op == XF_OP_MUL && nd->op == XF_OP_SCALAR_MUL);
    return same && nd->n_inputs == 2 ? users[0] : -1;
}

/* Marks in fused[] the nodes of the tanh GELU around tanh node t, x * 0.5 *
 * (1 + tanh(0.7978845 * (x + 0.044715 * x^3))), but for t itself, when the
 * chain is whole: ONNX Runtime 1.30 (CPU) fuses it into one FastGelu kernel
 * at any rank. Its ×0.5 moved into the next weight (a proved scalar rule)
 * leaves the rest unfused: modelzoo GPT at batch 1, 2 threads, ORT's
 * profile: FastGelu 20 us for both layers, the chain without its ×0.5
 * 80 us (Pow 18, Tanh 14, Mul 28, Add 20) of a 499 us run. */
static int mark_fast_gelu(const xf_graph *g, const xf_graph_index *ix, int t, uint8_t *fused)
{
    const xf_node *tn = &g->nodes[t];
    if (tn->n_inputs != 1 || tn->inputs[0] < 0) return 0;
    int sum, x, p, three, cube, x2;
    int m2 = producer_with(g, tn->inputs[0], XF_OP_MUL, 0.7978845f, &sum);
    int a = m2 < 0 ? -1 : producer_with(g, sum, XF_OP_ADD, 0, &x);
    if (a < 0) return 0;
    /* x + 0.044715 * x^3, either operand order */
    int m1 = -1;
    for (int side = 0; side < 2 && m1 < 0; side++) {
        x = g->nodes[a].inputs[side];
        m1 = producer_with(g, g->nodes[a].inputs[1 - side], XF_OP_MUL, 0.044715f, &cube);
    }
    p = m1 < 0 ? -1 : producer_with(g, cube, XF_OP_POW, 0, &three);
    if (p < 0 || g->nodes[p].inputs[0] != x || !one_const_near(g, g->nodes[p].inputs[1], 3.0f))
        return 0;
    int u = sole_reader(g, ix, tn->outputs[0], XF_OP_ADD);
    if (u < 0 || !(one_const_near(g, g->nodes[u].inputs[0], 1.0f) ||
                   one_const_near(g, g->nodes[u].inputs[1], 1.0f)))
        return 0;
    int y = sole_reader(g, ix, g->nodes[u].outputs[0], XF_OP_MUL);
    if (y < 0) return 0;
    int h = -1, other = g->nodes[y].inputs[0] == g->nodes[u].outputs[0] ? g->nodes[y].inputs[1]
                                                                          : g->nodes[y].inputs[0];
    if (other == x) { /* (x * a) * 0.5 */
        h = sole_reader(g, ix, g->nodes[y].outputs[0], XF_OP_MUL);
        if (h < 0 || !(one_const_near(g, g->nodes[h].inputs[0], 0.5f) ||
                       one_const_near(g, g->nodes[h].inputs[1], 0.5f)))
            return 0;
    } else if ((h = producer_with(g, other, XF_OP_MUL, 0.5f, &x2)) < 0 || x2 != x) {
        return 0;
    }
    /* ORT fuses only a chain whose inner values nothing else reads */
    const int inner[5] = {p, m1, a, m2, other == x ? y : h};
    const int reader[5] = {m1, a, m2, t, other == x ? h : y};
    for (int i = 0; i < 5; i++)
        if (!feeds_only(g, ix, g->nodes[inner[i]].outputs[0], reader[i])) return 0;
    if (!feeds_only(g, ix, tn->outputs[0], u) ||
        !feeds_only(g, ix, g->nodes[u].outputs[0], y))
        return 0;
    const int chain[7] = {p, m1, a, m2, u, y, h};
    for (int i = 0; i < 7; i++) fused[chain[i]] = 1;
    return 1;
}

/* Within this many edges of a tanh whose GELU chain is not whole, a
 * rewrite may make the chain (mark_fast_gelu: 4 nodes above the tanh, 3
 * below). */
#define GELU_REACH 4

/* zone[] bits: IN_ZONE, the node is in the zone; SEEN, the breadth-first
 * walk from a tanh whose chain is not whole has queued it; CHAIN, the node
 * is in a whole chain (its readers join the zone, not theirs). */
enum { IN_ZONE = 1, SEEN = 2, CHAIN = 4 };

int xf_costmemo_gelu_zone(const xf_costmemo *m, const xf_graph *g, const xf_graph_index *ix,
                          uint8_t *zone, int *queue)
{
    memset(zone, 0, (size_t)g->n_nodes);
    if (m->view_ms <= 0 || !ix) return 0;
    int head = 0, tail = 0;
    /* a whole chain: a rewrite breaks it only by matching one of its nodes
     * or a reader of one (an inner value's only reader is a chain node) */
    for (int i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].op != XF_OP_TANH) continue;
        zone[i] |= IN_ZONE;
        if (!mark_fast_gelu(g, ix, i, zone)) zone[i] |= SEEN, queue[tail++] = i;
    }
    for (int i = 0; i < g->n_nodes; i++)
        if ((zone[i] & IN_ZONE) && g->nodes[i].op != XF_OP_TANH) zone[i] |= CHAIN;
    for (int i = 0; i < g->n_nodes; i++) {
        if (!(zone[i] & CHAIN)) continue;
        const xf_node *nd = &g->nodes[i];
        for (int k = 0; k < nd->n_outputs; k++) {
            int n = 0;
            const int *users = xf_graph_index_users(ix, nd->outputs[k], &n);
            for (int j = 0; j < n; j++) zone[users[j]] |= IN_ZONE;
        }
    }
    /* a chain not whole: any node within GELU_REACH edges may make it;
     * breadth-first, undirected, depth riding in the queue's order */
    for (int depth = 0; depth < GELU_REACH && head < tail; depth++) {
        int end = tail;
        for (; head < end; head++) {
            const xf_node *nd = &g->nodes[queue[head]];
            for (int k = 0; k < nd->n_inputs; k++) {
                int v = nd->inputs[k];
                if (v < 0 || g->values[v].kind != XF_VALUE_NODE) continue;
                int pn = g->values[v].producer;
                if (pn >= 0 && !(zone[pn] & SEEN)) zone[pn] |= SEEN, queue[tail++] = pn;
            }
            for (int k = 0; k < nd->n_outputs; k++) {
                int n = 0;
                const int *users = xf_graph_index_users(ix, nd->outputs[k], &n);
                for (int j = 0; j < n; j++)
                    if (!(zone[users[j]] & SEEN)) zone[users[j]] |= SEEN, queue[tail++] = users[j];
            }
        }
    }
    int marked = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        zone[i] = zone[i] ? 1 : 0;
        marked += zone[i];
    }
    return marked;
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
        xf_error_prefix(err, "%s", xf_node_describe(g, node, d, sizeof d));
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
    /* with the ORT layout costs, a whole tanh GELU costs its tanh alone */
    uint8_t *fused = NULL;
    for (int i = 0; m->view_ms > 0 && ix && i < g->n_nodes; i++) {
        if (g->nodes[i].op != XF_OP_TANH) continue;
        if (!fused && !(fused = xf_calloc((size_t)g->n_nodes, 1)))
            return XF_FAIL(err, XF_ERR_NOMEM, "out of memory costing a graph");
        mark_fast_gelu(g, ix, i, fused);
    }
    for (int i = 0; i < g->n_nodes; i++) {
        xf_op_cost c;
        memset(&c, 0, sizeof c);
        if (!node_weight_only(g, ix, i)) {
            /* with the ORT layout costs a transpose's, a matmul's and a
             * scale's cost depend on their readers and a view's on its
             * producer, which a rewrite may change: decided on every graph */
            xf_op op = g->nodes[i].op;
            int context = m->view_ms > 0 && (op == XF_OP_TRANSPOSE || xf_op_reshapes(op) ||
                                             op == XF_OP_MATMUL || scaled_operand(g, i) >= 0);
            if (context && (ort_folded_transpose(g, ix, i) || ort_fused_scale(g, ix, i))) {
                /* folded into a FusedMatMul: costs nothing */
            } else if (!context && from && from[i] >= 0 && !node_weight_only(pg, pix, from[i])) {
                c = prev_cost[from[i]];
            } else {
                xf_status st = memo_node(m, g, i, &c, err);
                if (st) {
                    xf_free(fused);
                    return st;
                }
                if (context && merged_view(g, ix, i)) c.ms = c.ms > m->view_ms ? c.ms - m->view_ms : 0;
                if (context) c.ms += output_view_cost(m, g, i) - unwrapped_matmul_cost(m, g, ix, i);
            }
            if (!fused || !fused[i]) add_cost(total, &c);
        }
        if (per_node) per_node[i] = c;
    }
    xf_free(fused);
    total->from_cache = xf_cost_measurements(m->cm) == before;
    if (m->fused) return xf_fused_cost_graph(m->fused, g, ix, &total->ms, err);
    return XF_OK;
}
