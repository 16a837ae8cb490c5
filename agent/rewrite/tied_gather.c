/*
 * tied_gather.c — one copy of a tied embedding (xf_gather_tied, rewrite.h).
 * GPT-2 reads its token embedding E [V,H] twice: rows by a Gather, and its
 * transpose as the LM head; the importer folds Transpose(E) into a constant
 * of its own, so a model holds the vocabulary twice (50257 x 768: 147 MB
 * each), and onnxruntime gets both. Where a large constant is read only as
 * a Gather's table along axis 0 and a constant of the graph holds exactly
 * its transpose, the Gathers read the transpose along axis 1 and a
 * Transpose of the few rows gathered restores their layout; the constant
 * is dropped. The function is the same; only one copy is held. Out of
 * memory part way leaves a graph that still computes it (a Gather not
 * moved keeps its table).
 */
#include "agent/rewrite/rewrite.h"

#include <string.h>

/* Smallest table worth the rewrite (elements): a vocabulary, not a bias. */
enum { TIED_MIN_ELEMS = 1 << 20 };

/* Whether constant b is constant a transposed (both rank 2, same dtype). */
static int is_transpose_of(const xf_value *a, const xf_value *b)
{
    if (b->kind != XF_VALUE_CONST || !b->data || b->dtype != a->dtype || b->shape.rank != 2 ||
        b->shape.dims[0] != a->shape.dims[1] || b->shape.dims[1] != a->shape.dims[0])
        return 0;
    size_t es = xf_dtype_size(a->dtype);
    int64_t r = a->shape.dims[0], c = a->shape.dims[1];
    const unsigned char *pa = a->data, *pb = b->data;
    for (int64_t i = 0; i < r; i++)
        for (int64_t j = 0; j < c; j++)
            if (memcmp(pa + ((size_t)(i * c + j)) * es, pb + ((size_t)(j * r + i)) * es, es))
                return 0;
    return 1;
}

/* Whether every reader of value a is a Gather along axis 0 taking it as
 * its table, none of them giving a graph output (at least one reader). */
static int read_as_tables_only(const xf_graph *g, int a, const int *uses)
{
    int tables = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *n = &g->nodes[i];
        for (int k = 0; k < n->n_inputs; k++) {
            if (n->inputs[k] != a) continue;
            if (n->op != XF_OP_GATHER || k != 0 || xf_norm_axis(n->params.axis, 2) != 0)
                return 0;
            for (int o = 0; o < g->n_outputs; o++)
                if (g->outputs[o] == n->outputs[0]) return 0;
            tables++;
        }
    }
    return tables > 0 && tables == uses[a];
}

/* Gather node `node` reads b (a transposed) along axis 1; a Transpose
 * after it gives its old layout to every other reader of its output. On
 * failure (no memory) the node is as it was. */
static xf_status gather_from(xf_graph *g, int node, int a, int b, xf_error *err)
{
    int out = g->nodes[node].outputs[0];
    xf_shape old = g->values[out].shape;
    g->nodes[node].inputs[0] = b;
    g->nodes[node].params.axis = 1;
    xf_shape *s = &g->values[out].shape;
    s->dims[0] = old.dims[old.rank - 1]; /* [H, I...] */
    for (int i = 0; i + 1 < old.rank; i++) s->dims[i + 1] = old.dims[i];
    xf_params p = xf_params_default();
    p.n_axes = old.rank;
    for (int i = 0; i + 1 < old.rank; i++) p.axes[i] = i + 1;
    p.axes[old.rank - 1] = 0;
    int t = xf_graph_op(g, XF_OP_TRANSPOSE, &p, &out, 1, err);
    if (t < 0) { /* as it was */
        g->nodes[node].inputs[0] = a;
        g->nodes[node].params.axis = 0;
        g->values[out].shape = old;
        return err ? err->code : XF_ERR_NOMEM;
    }
    int tn = g->values[t].producer;
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; i != tn && k < g->nodes[i].n_inputs; k++)
            if (g->nodes[i].inputs[k] == out) g->nodes[i].inputs[k] = t;
    return XF_OK;
}

xf_status xf_gather_tied(xf_graph *g, int *n_dropped, xf_error *err)
{
    *n_dropped = 0;
    int *uses = xf_malloc(sizeof(int) * ((size_t)g->n_values + 1));
    uint8_t *dead = xf_calloc((size_t)g->n_values + 1, 1);
    xf_status st = uses && dead ? XF_OK : XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
    if (!st) xf_edit_use_counts(g, uses);
    int n_values = g->n_values; /* the Transposes added are not tables */
    for (int a = 0; !st && a < n_values; a++) {
        const xf_value *va = &g->values[a];
        if (va->kind != XF_VALUE_CONST || !va->data || va->shape.rank != 2 ||
            xf_shape_numel(&va->shape) < TIED_MIN_ELEMS || !read_as_tables_only(g, a, uses))
            continue;
        int b = -1;
        for (int v = 0; b < 0 && v < n_values; v++)
            if (v != a && !dead[v] && is_transpose_of(va, &g->values[v])) b = v;
        if (b < 0) continue;
        int left = uses[a];
        for (int i = 0; !st && i < g->n_nodes; i++)
            if (g->nodes[i].op == XF_OP_GATHER && g->nodes[i].inputs[0] == a &&
                (st = gather_from(g, i, a, b, err)) == XF_OK)
                left--;
        if (left == 0) { /* else a Gather still reads it: it stays */
            dead[a] = 1;
            (*n_dropped)++;
        }
    }
    if (!st && *n_dropped) st = xf_edit_compact(g, NULL, dead, err);
    xf_free(uses);
    xf_free(dead);
    return st;
}
