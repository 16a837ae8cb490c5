/*
 * transformer.c — see transformer_internal.h. Node order and operand order follow
 * PyTorch's exports (../shared/models/bert_small): the bias is the first
 * operand of a linear layer's Add, keys are transposed straight to
 * [B,heads,d,S], scores are divided by sqrt(d) before the mask is added.
 */
#include "transformer_internal.h"

#include <math.h>
#include <stdio.h>


int zoo_embedding(zb *b, const char *module, int ids, int64_t rows, int64_t hidden, float bound)
{
    char n[256];
    int64_t dims[2] = {rows, hidden};
    int table = zoo_param(b, ZB_SUB(n, module, "weight"), 2, dims, bound);
    return zoo_binary(b, XF_OP_GATHER, table, ids, module);
}

int zoo_constant_ids(zb *b, const char *name, int64_t seq, int arange)
{
    if (b->st != XF_OK) return -1;
    int64_t *ids = xf_malloc(sizeof(int64_t) * (size_t)seq);
    if (!ids) return zoo_fail(b, XF_ERR_NOMEM, "out of memory for '%s'", name);
    for (int64_t i = 0; i < seq; i++) ids[i] = arange ? i : 0;
    int64_t dims[2] = {1, seq};
    int v = zoo_ints(b, name, 2, dims, ids);
    xf_free(ids);
    return v;
}

int zoo_linear(zb *b, int x, const char *name, int64_t out)
{
    if (b->st != XF_OK) return -1;
    const xf_shape *s = zoo_shape(b, x);
    int64_t in = s->dims[s->rank - 1];
    int64_t wdims[2] = {in, out};
    float bound = (float)(1.0 / sqrt((double)in));
    char n[256];
    int w = zoo_param(b, ZB_SUB(n, name, "weight"), 2, wdims, bound);
    int bias = zoo_param(b, ZB_SUB(n, name, "bias"), 1, &out, bound);
    int mm = zoo_binary(b, XF_OP_MATMUL, x, w, ZB_SUB(n, name, "matmul"));
    return zoo_binary(b, XF_OP_ADD, bias, mm, ZB_SUB(n, name, "add"));
}

/* "<name>.weight" (around 1) and "<name>.bias" (around 0) of width dim. */
static void norm_params(zb *b, const char *name, int64_t dim, int *w, int *bias)
{
    char n[256];
    *w = zoo_param_range(b, ZB_SUB(n, name, "weight"), 1, &dim, 0.8f, 1.2f);
    *bias = zoo_param(b, ZB_SUB(n, name, "bias"), 1, &dim, 0.1f);
}

int zoo_layernorm_decomposed(zb *b, int x, const char *name, float epsilon)
{
    if (b->st != XF_OK) return -1;
    const xf_shape *s = zoo_shape(b, x);
    int w, bias;
    norm_params(b, name, s->dims[s->rank - 1], &w, &bias);
    char n[256];
    xf_params mean = xf_params_default();
    mean.n_axes = 1;
    mean.axes[0] = -1;
    mean.keepdims = 1;
    int mu = zoo_node(b, XF_OP_REDUCE_MEAN, &mean, &x, 1, ZB_SUB(n, name, "mean"));
    int centred = zoo_binary(b, XF_OP_SUB, x, mu, ZB_SUB(n, name, "sub"));
    int two = zoo_scalar(b, ZB_SUB(n, name, "two"), 2.0f);
    int sq = zoo_binary(b, XF_OP_POW, centred, two, ZB_SUB(n, name, "pow"));
    int var = zoo_node(b, XF_OP_REDUCE_MEAN, &mean, &sq, 1, ZB_SUB(n, name, "variance"));
    int eps = zoo_scalar(b, ZB_SUB(n, name, "epsilon"), epsilon);
    int var_eps = zoo_binary(b, XF_OP_ADD, var, eps, ZB_SUB(n, name, "add_epsilon"));
    int sd = zoo_unary(b, XF_OP_SQRT, var_eps, ZB_SUB(n, name, "sqrt"));
    int normed = zoo_binary(b, XF_OP_DIV, centred, sd, ZB_SUB(n, name, "div"));
    int scaled = zoo_binary(b, XF_OP_MUL, normed, w, ZB_SUB(n, name, "mul"));
    return zoo_binary(b, XF_OP_ADD, scaled, bias, ZB_SUB(n, name, "add"));
}

int zoo_layernorm(zb *b, int x, const char *name, float epsilon)
{
    if (b->st != XF_OK) return -1;
    const xf_shape *s = zoo_shape(b, x);
    int w, bias;
    norm_params(b, name, s->dims[s->rank - 1], &w, &bias);
    xf_params p = xf_params_default();
    p.axis = -1;
    p.epsilon = epsilon;
    const int in[3] = {x, w, bias};
    return zoo_node(b, XF_OP_LAYERNORM, &p, in, 3, name);
}

int zoo_gelu_erf(zb *b, int x, const char *name)
{
    char n[256];
    int sqrt2 = zoo_scalar(b, ZB_SUB(n, name, "sqrt2"), 1.41421356f);
    int one = zoo_scalar(b, ZB_SUB(n, name, "one"), 1.0f);
    int half = zoo_scalar(b, ZB_SUB(n, name, "half"), 0.5f);
    int d = zoo_binary(b, XF_OP_DIV, x, sqrt2, ZB_SUB(n, name, "div"));
    int e = zoo_unary(b, XF_OP_ERF, d, ZB_SUB(n, name, "erf"));
    int a = zoo_binary(b, XF_OP_ADD, e, one, ZB_SUB(n, name, "add"));
    int m = zoo_binary(b, XF_OP_MUL, x, a, ZB_SUB(n, name, "mul"));
    return zoo_binary(b, XF_OP_MUL, m, half, ZB_SUB(n, name, "mul_half"));
}

int zoo_to_heads(zb *b, int x, const char *name, int64_t heads, int keys)
{
    if (b->st != XF_OK) return -1;
    const xf_shape *s = zoo_shape(b, x);
    int64_t batch = s->dims[0], seq = s->dims[1], d = s->dims[2] / heads;
    char n[256];
    xf_params r = xf_params_default();
    r.n_shape = 4;
    r.shape[0] = batch;
    r.shape[1] = seq;
    r.shape[2] = heads;
    r.shape[3] = d;
    int split = zoo_node(b, XF_OP_RESHAPE, &r, &x, 1, ZB_SUB(n, name, "reshape"));
    xf_params t = xf_params_default();
    t.n_axes = 4;
    t.axes[0] = 0;
    t.axes[1] = 2;
    t.axes[2] = keys ? 3 : 1;
    t.axes[3] = keys ? 1 : 3;
    return zoo_node(b, XF_OP_TRANSPOSE, &t, &split, 1, ZB_SUB(n, name, "transpose"));
}

/* Where(causal [1,1,S,S] bool, scores, lowest float): the causal mask of
 * a decoder as HuggingFace's GPT-2 applies it (a lower-triangular boolean
 * buffer, exported as an int64 constant cast to bool). */
static int causal_mask(zb *b, int scores, const char *name, int64_t seq)
{
    if (b->st != XF_OK) return -1;
    char n[256];
    int64_t *tril = xf_malloc(sizeof(int64_t) * (size_t)(seq * seq));
    if (!tril) return zoo_fail(b, XF_ERR_NOMEM, "out of memory for '%s'", name);
    for (int64_t i = 0; i < seq; i++)
        for (int64_t j = 0; j < seq; j++) tril[i * seq + j] = j <= i;
    int64_t dims[4] = {1, 1, seq, seq};
    int keep = zoo_ints(b, ZB_SUB(n, name, "causal_mask"), 4, dims, tril);
    xf_free(tril);
    xf_params cast = xf_params_default();
    cast.to = XF_BOOL;
    keep = zoo_node(b, XF_OP_CAST, &cast, &keep, 1, ZB_SUB(n, name, "causal_mask.cast"));
    int lowest = zoo_scalar(b, ZB_SUB(n, name, "mask_value"), -3.4028234663852886e38f);
    const int in[3] = {keep, scores, lowest};
    return zoo_node(b, XF_OP_WHERE, NULL, in, 3, ZB_SUB(n, name, "causal"));
}

int zoo_attend(zb *b, int q, int k, int v, int mask, int causal, const char *name)
{
    if (b->st != XF_OK) return -1;
    const xf_shape *s = zoo_shape(b, q);
    int64_t batch = s->dims[0], heads = s->dims[1], seq = s->dims[2];
    int64_t hidden = heads * s->dims[3];
    char n[256];
    int scores = zoo_binary(b, XF_OP_MATMUL, q, k, ZB_SUB(n, name, "scores"));
    float root_d_value = (float)sqrt((double)(hidden / heads));
    int root_d = zoo_scalar(b, ZB_SUB(n, name, "sqrt_head_dim"), root_d_value);
    scores = zoo_binary(b, XF_OP_DIV, scores, root_d, ZB_SUB(n, name, "scale"));
    if (causal) scores = causal_mask(b, scores, name, seq);
    if (mask >= 0) scores = zoo_binary(b, XF_OP_ADD, scores, mask, ZB_SUB(n, name, "mask"));
    xf_params sm = xf_params_default();
    sm.axis = -1;
    int probs = zoo_node(b, XF_OP_SOFTMAX, &sm, &scores, 1, ZB_SUB(n, name, "softmax"));
    int ctx = zoo_binary(b, XF_OP_MATMUL, probs, v, ZB_SUB(n, name, "context"));
    xf_params t = xf_params_default();
    t.n_axes = 4;
    t.axes[0] = 0;
    t.axes[1] = 2;
    t.axes[2] = 1;
    t.axes[3] = 3;
    ctx = zoo_node(b, XF_OP_TRANSPOSE, &t, &ctx, 1, ZB_SUB(n, name, "context_transpose"));
    xf_params r = xf_params_default();
    r.n_shape = 3;
    r.shape[0] = batch;
    r.shape[1] = seq;
    r.shape[2] = hidden;
    return zoo_node(b, XF_OP_RESHAPE, &r, &ctx, 1, ZB_SUB(n, name, "context_reshape"));
}

int zoo_self_attention(zb *b, int x, int mask, const char *name, int64_t heads)
{
    if (b->st != XF_OK) return -1;
    int64_t hidden = zoo_shape(b, x)->dims[2];
    if (heads < 1 || hidden % heads != 0)
        return zoo_fail(b, XF_ERR_INVALID, "%s: hidden size %lld is not a multiple of %lld heads",
                       name, (long long)hidden, (long long)heads);
    char p[256];
    int q = zoo_linear(b, x, ZB_SUB(p, name, "query"), hidden);
    q = zoo_to_heads(b, q, p, heads, 0);
    int k = zoo_linear(b, x, ZB_SUB(p, name, "key"), hidden);
    k = zoo_to_heads(b, k, p, heads, 1);
    int v = zoo_linear(b, x, ZB_SUB(p, name, "value"), hidden);
    v = zoo_to_heads(b, v, p, heads, 0);
    return zoo_attend(b, q, k, v, mask, 0, name);
}
