/*
 * graph_format.c — readable infix text of a small graph, for people auditing
 * rules: "ewadd(matmul(x0, w0), matmul(x0, w1))". Each graph output is one
 * expression (joined by ", "); graph inputs and constants print as their
 * names (or in<i> / const<v>); an op prints as its table name, followed by
 * the parameters that change its meaning in brackets
 * ("conv2d[3x3,s1,same,relu]", "concat[axis=1]"), then its arguments.
 * Output k of a multi-output op prints as name<k> ("split0(...)").
 * Shared subexpressions are repeated, which is what makes the text readable
 * for rule-sized graphs; the caller's buffer bounds the size.
 */
#include "ir.h"

#include <stdio.h>
#include <string.h>

typedef struct writer {
    char *buf;
    size_t n, len;
    int overflow;
    int cyclic; /* a value reached itself: the graph is broken */
} writer;

static void put(writer *w, const char *fmt, ...) XF_PRINTF(2, 3);

static void put(writer *w, const char *fmt, ...)
{
    if (w->overflow) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(w->buf + w->len, w->n - w->len, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= w->n - w->len) {
        w->overflow = 1;
        w->len = w->n - 1;
        return;
    }
    w->len += (size_t)k;
}

/* Opens the bracket before the first parameter, separates the others. */
static void sep(writer *w, int *first)
{
    put(w, *first ? "[" : ",");
    *first = 0;
}

static void put_list(writer *w, const int64_t *v, int n, const char *joiner)
{
    for (int i = 0; i < n; i++) put(w, "%s%lld", i ? joiner : "", (long long)v[i]);
}

static void put_shape_dims(writer *w, const xf_shape *s)
{
    put_list(w, s->dims, s->rank, "x");
}

static const char *act_name(int32_t act)
{
    switch (act) {
    case XF_ACT_RELU: return "relu";
    case XF_ACT_SIGMOID: return "sigmoid";
    case XF_ACT_TANH: return "tanh";
    default: return NULL;
    }
}

static int32_t or_one(int32_t v)
{
    return v == 0 ? 1 : v;
}

/* Kernel, stride and padding of conv/pool: "3x3,s1,same". "same" means the
 * symmetric padding that keeps the size at stride 1 ((k-1)/2 per side). */
static void put_window(writer *w, int *first, const xf_params *p, int32_t kh, int32_t kw)
{
    sep(w, first);
    put(w, "%dx%d", (int)kh, (int)kw);
    int32_t sh = or_one(p->stride[0]), sw = or_one(p->stride[1]);
    if (sh == sw)
        put(w, ",s%d", (int)sh);
    else
        put(w, ",s%dx%d", (int)sh, (int)sw);
    const int32_t *q = p->pads;
    if (q[0] == 0 && q[1] == 0 && q[2] == 0 && q[3] == 0)
        put(w, ",valid");
    else if (kh % 2 == 1 && kw % 2 == 1 && q[0] == (kh - 1) / 2 && q[2] == q[0] &&
             q[1] == (kw - 1) / 2 && q[3] == q[1])
        put(w, ",same");
    else
        put(w, ",pad=%d,%d,%d,%d", (int)q[0], (int)q[1], (int)q[2], (int)q[3]);
    int32_t dh = or_one(p->dilation[0]), dw = or_one(p->dilation[1]);
    if (dh != 1 || dw != 1) put(w, ",d%dx%d", (int)dh, (int)dw);
}

static void put_params(writer *w, const xf_graph *g, const xf_node *nd)
{
    const xf_params *p = &nd->params;
    int first = 1;
    switch (nd->op) {
    case XF_OP_CONV:
        put_window(w, &first, p, p->kernel[0], p->kernel[1]);
        if (p->group > 1) put(w, ",g%d", (int)p->group);
        if (act_name(p->activation)) put(w, ",%s", act_name(p->activation));
        break;
    case XF_OP_MAXPOOL:
    case XF_OP_AVGPOOL:
        put_window(w, &first, p, p->kernel[0], p->kernel[1]);
        if (p->ceil_mode) put(w, ",ceil");
        if (nd->op == XF_OP_AVGPOOL && p->count_include_pad) put(w, ",count_pad");
        break;
    case XF_OP_CONCAT:
    case XF_OP_SOFTMAX:
    case XF_OP_GATHER:
    case XF_OP_FLATTEN:
        sep(w, &first);
        put(w, "axis=%d", (int)p->axis);
        break;
    case XF_OP_SPLIT:
        sep(w, &first);
        put(w, "axis=%d", (int)p->axis);
        for (int i = 0; i < p->n_split; i++)
            if (p->split[i] != 0) {
                put(w, ",sizes=");
                put_list(w, p->split, p->n_split, "/");
                break;
            }
        break;
    case XF_OP_LAYERNORM:
        sep(w, &first);
        put(w, "axis=%d", (int)p->axis);
        if (p->epsilon != 0.0f) put(w, ",eps=%g", (double)p->epsilon);
        break;
    case XF_OP_BATCHNORM:
        if (p->epsilon != 0.0f) {
            sep(w, &first);
            put(w, "eps=%g", (double)p->epsilon);
        }
        break;
    case XF_OP_TRANSPOSE:
        sep(w, &first);
        put(w, "perm=");
        put_list(w, p->axes, p->n_axes, ",");
        break;
    case XF_OP_REDUCE_MEAN:
    case XF_OP_SQUEEZE:
    case XF_OP_UNSQUEEZE:
        sep(w, &first);
        put(w, "axes=");
        put_list(w, p->axes, p->n_axes, ",");
        if (nd->op == XF_OP_REDUCE_MEAN && p->keepdims) put(w, ",keepdims");
        break;
    case XF_OP_SLICE:
        sep(w, &first);
        for (int i = 0; i < p->n_axes; i++)
            put(w, "%saxis%lld=%lld:%lld:%lld", i ? "," : "", (long long)p->axes[i],
                (long long)p->starts[i], (long long)p->ends[i], (long long)p->steps[i]);
        break;
    case XF_OP_PAD: {
        int rank = nd->n_inputs > 0 && nd->inputs[0] >= 0 ? g->values[nd->inputs[0]].shape.rank : 0;
        sep(w, &first);
        put(w, "pads=");
        put_list(w, p->starts, rank, ",");
        put(w, "/");
        put_list(w, p->ends, rank, ",");
        static const char *const modes[] = {"constant", "reflect", "edge"};
        if (p->pad_mode >= 0 && p->pad_mode <= XF_PAD_EDGE) put(w, ",%s", modes[p->pad_mode]);
        if (p->value != 0.0) put(w, ",value=%g", p->value);
        break;
    }
    case XF_OP_RESHAPE:
    case XF_OP_EXPAND:
        sep(w, &first);
        put(w, "shape=");
        put_list(w, p->shape, p->n_shape, "x");
        break;
    case XF_OP_ENLARGE:
        sep(w, &first);
        put(w, "%dx%d", (int)p->kernel[0], (int)p->kernel[1]);
        break;
    case XF_OP_CONST_IDENTITY_CONV:
    case XF_OP_CONST_IDENTITY_MATRIX:
    case XF_OP_CONST_ONES:
    case XF_OP_CONST_POOL:
    case XF_OP_CONSTANT_OF_SHAPE:
        sep(w, &first);
        if (nd->n_outputs > 0)
            put_shape_dims(w, &g->values[nd->outputs[0]].shape);
        if (nd->op == XF_OP_CONSTANT_OF_SHAPE)
            put(w, ",%s=%g", xf_dtype_name((xf_dtype)p->to), p->value);
        break;
    case XF_OP_CAST:
        sep(w, &first);
        put(w, "to=%s", xf_dtype_name((xf_dtype)p->to));
        break;
    case XF_OP_GEMM:
        if (p->trans_a || p->trans_b || p->alpha != 1.0f || p->beta != 1.0f) {
            sep(w, &first);
            put(w, "alpha=%g,beta=%g", (double)p->alpha, (double)p->beta);
            if (p->trans_a) put(w, ",ta");
            if (p->trans_b) put(w, ",tb");
        }
        break;
    default: break;
    }
    if (!first) put(w, "]");
}

static void put_value(writer *w, const xf_graph *g, int v, int depth)
{
    if (w->overflow || w->cyclic) return;
    if (depth > g->n_nodes) {
        w->cyclic = 1;
        return;
    }
    if (v < 0) {
        put(w, "_");
        return;
    }
    const xf_value *val = &g->values[v];
    if (val->kind == XF_VALUE_INPUT) {
        if (val->name) {
            put(w, "%s", val->name);
            return;
        }
        for (int i = 0; i < g->n_inputs; i++)
            if (g->inputs[i] == v) {
                put(w, "in%d", i);
                return;
            }
        put(w, "in?%d", v);
        return;
    }
    if (val->kind == XF_VALUE_CONST) {
        if (val->name)
            put(w, "%s", val->name);
        else
            put(w, "const%d", v);
        return;
    }
    const xf_node *nd = &g->nodes[val->producer];
    if (nd->op == XF_OP_OPAQUE && nd->opaque)
        put(w, "%s", nd->opaque->op_type);
    else
        put(w, "%s", xf_op_get(nd->op)->name);
    if (nd->n_outputs > 1) put(w, "%d", val->producer_output);
    put_params(w, g, nd);
    put(w, "(");
    for (int i = 0; i < nd->n_inputs; i++) {
        if (i) put(w, ", ");
        put_value(w, g, nd->inputs[i], depth + 1);
    }
    put(w, ")");
}

xf_status xf_graph_format(const xf_graph *g, char *buf, size_t n, xf_error *err)
{
    if (!buf || n == 0) return XF_FAIL(err, XF_ERR_INVALID, "graph format: no output buffer");
    writer w = {buf, n, 0, 0, 0};
    buf[0] = '\0';
    for (int i = 0; i < g->n_outputs; i++) {
        if (i) put(&w, ", ");
        put_value(&w, g, g->outputs[i], 0);
    }
    if (w.cyclic)
        return XF_FAIL(err, XF_ERR_GRAPH, "graph format: graph '%s' has a cycle",
                       g->name ? g->name : "");
    if (w.overflow)
        return XF_FAIL(err, XF_ERR_INVALID,
                       "graph format: the text of graph '%s' does not fit in %zu bytes",
                       g->name ? g->name : "", n);
    return XF_OK;
}
