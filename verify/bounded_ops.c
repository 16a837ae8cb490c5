/*
 * bounded_ops.c — element-wise elaboration of each operator over Z3 reals,
 * for the bounded check (see bounded.c).
 *
 * Rather than re-deriving the index arithmetic of every kernel (strides,
 * pads, groups, dilation, count_include_pad, centred enlarge...), the
 * structure of an operator is read off our own float32 kernels by probing,
 * so the check uses exactly the semantics the interpreter runs:
 *  - affine operators (ewadd, concat, split, transpose, reshape, enlarge,
 *    avg-pool, reduce-mean, pad...): run the kernel on all-zero inputs (the
 *    constant term) and with one input element set to 1 (its coefficient in
 *    every output element); coefficients such as 1/9 are recovered as exact
 *    rationals with small denominators;
 *  - bilinear operators (ewmul, scalar-mul, matmul, conv): one input is a
 *    one-hot and the other holds the codes 1..n, so each non-zero output
 *    names the pair of elements multiplied into it;
 *  - max-pool: a one-hot shows each window; the output is a nested ite max
 *    over the window's terms sorted by Z3 term id (one term per window);
 *  - relu is an ite (an abstract function when the check asks for it:
 *    bounded_domain.c, "after their sums"); conv's fused activation is
 *    applied after probing;
 *  - softmax, layer-norm and batch-norm are written out with real division;
 *  - sigmoid, tanh, erf, gelu, exp, log and sqrt are abstract (uninterpreted)
 *    real functions, one per op, with the facts exp > 0 and sqrt >= 0 as side
 *    assertions (and a layer norm's sqrt(var + eps) > 0 when eps > 0, so the
 *    normal forms may divide by it, bounded_poly.c). A rule that holds for
 *    every such function holds for the real one, so unsat stays sound; a
 *    model may rely on an abstract function, which bounded.c handles by
 *    confirming it in floats.
 *  - constant generators run their kernel and become numerals.
 *
 * What probing reads is kept as the operator's pattern (the steps that
 * build its terms, in order), per form (bounded_patterns.c): an operator
 * met again at the same shapes, in this rule or in a later worker's, builds
 * its terms from the kept steps without running its kernel, the same Z3
 * calls in the same order. Output elements collect their terms by counting
 * (lanes), then each is summed, as before.
 */
#include "bounded_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

xf_status vf_bounded_z3_check(xfb_ctx *c, const char *what, xf_error *err)
{
    Z3_error_code ec = Z3_get_error_code(c->z);
    if (ec == Z3_OK) return XF_OK;
    return XF_FAIL(err, XF_ERR_INTERNAL, "z3: %s while %s", Z3_get_error_msg(c->z, ec), what);
}

static Z3_ast zero(xfb_ctx *c) { return Z3_mk_real(c->z, 0, 1); }

/* Exact rational numeral for a float: a small denominator first (1/9 comes
 * back as 1/9, not as its float rounding), else the float's binary value. */
static Z3_ast num(xfb_ctx *c, double v, xf_error *err)
{
    if (v == 0.0) return zero(c);
    for (int d = 1; d <= 1024; d++) {
        double x = v * d, r = nearbyint(x);
        if (fabs(r) < 1e9 && fabs(x - r) <= 1e-6 * fmax(1.0, fabs(r)))
            return Z3_mk_real(c->z, (int)r, d);
    }
    int k = 0;
    double m = v;
    while (m != nearbyint(m) && k < 62) m *= 2.0, k++;
    if (m != nearbyint(m) || fabs(m) > 9e18) {
        XF_FAIL(err, XF_ERR_UNSUPPORTED, "bounded check: constant %.9g has no exact rational form",
                v);
        return NULL;
    }
    char s[64];
    snprintf(s, sizeof s, "%lld/%llu", (long long)m, 1ULL << k);
    return Z3_mk_numeral(c->z, s, c->real);
}

static Z3_ast sum(xfb_ctx *c, Z3_ast *t, int n)
{
    if (n == 0) return zero(c);
    if (n == 1) return t[0];
    return Z3_mk_add(c->z, (unsigned)n, t);
}

static Z3_ast mul2(xfb_ctx *c, Z3_ast a, Z3_ast b)
{
    Z3_ast t[2] = {a, b};
    return Z3_mk_mul(c->z, 2, t);
}

static xf_status side(xfb_ctx *c, Z3_ast fact, xf_error *err)
{
    if (c->n_side == c->cap_side) {
        int cap = c->cap_side ? 2 * c->cap_side : 64;
        Z3_ast *p = xf_realloc(c->side, (size_t)cap * sizeof *p);
        if (!p) return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory");
        c->side = p, c->cap_side = cap;
    }
    c->side[c->n_side++] = fact;
    return XF_OK;
}

/* op's abstract function applied to x; exp and sqrt add their sign fact. */
static Z3_ast apply_uf(xfb_ctx *c, xf_op op, Z3_ast x, xf_error *err)
{
    if (!c->uf[op]) {
        char name[48];
        snprintf(name, sizeof name, "%s", xf_op_get(op)->name);
        c->uf[op] = Z3_mk_func_decl(c->z, Z3_mk_string_symbol(c->z, name), 1, &c->real, c->real);
    }
    c->uses_uf = 1;
    Z3_ast y = Z3_mk_app(c->z, c->uf[op], 1, &x);
    if (op == XF_OP_EXP && side(c, Z3_mk_gt(c->z, y, zero(c)), err) != XF_OK) return NULL;
    if (op == XF_OP_SQRT && side(c, Z3_mk_ge(c->z, y, zero(c)), err) != XF_OK) return NULL;
    return y;
}

/* relu(x): an ite, or with c->relu_abstract an abstract function like gelu's
 * (bounded_domain.c, "after their sums"); NULL when out of memory. */
static Z3_ast relu(xfb_ctx *c, Z3_ast x, xf_error *err)
{
    if (c->relu_abstract) return apply_uf(c, XF_OP_RELU, x, err);
    return Z3_mk_ite(c->z, Z3_mk_gt(c->z, x, zero(c)), x, zero(c));
}

/* pow(x, e) for every element of x and the scalar e: an abstract function
 * of the two (valid for any such function, as the axioms' pow). */
static xf_status power(xfb_ctx *c, const xfb_tensor *x, const xfb_tensor *e, xfb_tensor *y,
                       xf_error *err)
{
    if (e->shape.rank != 0)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "bounded check: only a power by a scalar is modelled");
    if (!c->uf[XF_OP_POW]) {
        Z3_sort two[2] = {c->real, c->real};
        c->uf[XF_OP_POW] = Z3_mk_func_decl(c->z, Z3_mk_string_symbol(c->z, "pow"), 2, two, c->real);
    }
    c->uses_uf = 1;
    for (int64_t i = 0; i < y->n; i++) {
        Z3_ast args[2] = {x->e[i], e->e[0]};
        y->e[i] = Z3_mk_app(c->z, c->uf[XF_OP_POW], 2, args);
    }
    return vf_bounded_z3_check(c, "elaborating a power", err);
}

/* ---------------------------------------------------------------- patterns */

/* How a probed operator is read (the pattern's kind, part of its key). */
enum { PAT_AFFINE = 1, PAT_BILINEAR, PAT_MAXPOOL, PAT_CONSTANT };

/* Scratch float tensors for probing one node: inputs at their shapes
 * (zero), outputs allocated. */
typedef struct probe {
    int n_in, n_out;
    xf_tensor in[8];
    const xf_tensor *inp[8];
    xf_tensor out[XF_MAX_SPLIT];
} probe;

static void probe_free(probe *p)
{
    for (int i = 0; i < p->n_in; i++) xf_tensor_free(&p->in[i]);
    for (int o = 0; o < p->n_out; o++) xf_tensor_free(&p->out[o]);
}

/* Sets up probe tensors for node nd; n_in limits the inputs used (conv
 * without its bias). */
static xf_status probe_init(probe *p, const xf_graph *g, const xf_node *nd, int n_in,
                            xf_error *err)
{
    memset(p, 0, sizeof *p);
    if (n_in > 8 || nd->n_outputs > XF_MAX_SPLIT)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "bounded check: %s has too many operands",
                       xf_op_get(nd->op)->name);
    for (int i = 0; i < n_in; i++) {
        if (nd->inputs[i] < 0) {
            p->inp[i] = NULL;
            p->n_in = i + 1;
            continue;
        }
        const xf_value *v = &g->values[nd->inputs[i]];
        p->n_in = i + 1;
        xf_status st = xf_tensor_alloc(&p->in[i], XF_F32, &v->shape, err);
        if (st != XF_OK) return st;
        p->inp[i] = &p->in[i];
    }
    p->n_in = n_in;
    for (int o = 0; o < nd->n_outputs; o++) {
        const xf_value *v = &g->values[nd->outputs[o]];
        p->n_out = o + 1;
        xf_status st = xf_tensor_alloc(&p->out[o], XF_F32, &v->shape, err);
        if (st != XF_OK) return st;
    }
    return XF_OK;
}

static xf_status probe_run(probe *p, const xf_node *nd, const xf_params *prm, xf_error *err)
{
    return xf_op_run(nd->op, prm, p->n_in, p->inp, p->n_out, p->out, err);
}

static float *fdata(xf_tensor *t) { return (float *)t->data; }

/* Steps of a pattern as they are read. */
typedef struct stepv {
    vf_pattern_step *s;
    int64_t n, cap;
} stepv;

static xf_status step(stepv *v, int64_t in, int64_t elem, int out, int64_t at, double coef,
                      xf_error *err)
{
    if (v->n == v->cap) {
        int64_t cap = v->cap ? 2 * v->cap : 256;
        vf_pattern_step *p = xf_realloc(v->s, (size_t)cap * sizeof *p);
        if (!p) return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory");
        v->s = p, v->cap = cap;
    }
    vf_pattern_step s = {(int32_t)in, (int32_t)elem, (int32_t)out, (int32_t)at, coef};
    v->s[v->n++] = s;
    return XF_OK;
}

/* Affine: steps (-1, 0, o, e, c): output o's element e has the constant
 * term c (the kernel on all-zero inputs); (i, j, o, e, d): it gains d times
 * element j of operand i (the kernel with that element 1, less the
 * constant). */
static xf_status read_affine(probe *p, const xf_node *nd, stepv *v, xf_error *err)
{
    float *base[XF_MAX_SPLIT] = {0};
    xf_status st = XF_OK;
    for (int o = 0; st == XF_OK && o < p->n_out; o++) {
        base[o] = xf_malloc((size_t)xf_shape_numel(&p->out[o].shape) * sizeof(float) + 1);
        if (!base[o]) st = XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory");
    }
    if (st == XF_OK) st = probe_run(p, nd, &nd->params, err);
    for (int o = 0; st == XF_OK && o < p->n_out; o++) {
        int64_t n = xf_shape_numel(&p->out[o].shape);
        memcpy(base[o], p->out[o].data, (size_t)n * sizeof(float));
        for (int64_t e = 0; st == XF_OK && e < n; e++)
            if (base[o][e] != 0.0f) st = step(v, -1, 0, o, e, base[o][e], err);
    }
    for (int i = 0; st == XF_OK && i < p->n_in; i++) {
        if (!p->inp[i]) continue;
        int64_t m = xf_shape_numel(&p->in[i].shape);
        for (int64_t j = 0; st == XF_OK && j < m; j++) {
            fdata(&p->in[i])[j] = 1.0f;
            st = probe_run(p, nd, &nd->params, err);
            fdata(&p->in[i])[j] = 0.0f;
            for (int o = 0; st == XF_OK && o < p->n_out; o++) {
                int64_t n = xf_shape_numel(&p->out[o].shape);
                for (int64_t e = 0; st == XF_OK && e < n; e++) {
                    double d = (double)fdata(&p->out[o])[e] - (double)base[o][e];
                    if (d != 0.0) st = step(v, i, j, o, e, d, err);
                }
            }
        }
    }
    for (int o = 0; o < XF_MAX_SPLIT; o++) xf_free(base[o]);
    return st;
}

/* Bilinear: one operand is a one-hot and the other holds the codes 1..n,
 * so each non-zero output names the pair multiplied into it: steps
 * (i, j, 0, e) for a_i * b_j in output element e. */
static xf_status read_bilinear(probe *p, const xf_node *nd, const xf_params *prm, stepv *v,
                               xf_error *err)
{
    int64_t na = xf_shape_numel(&p->in[0].shape), nb = xf_shape_numel(&p->in[1].shape);
    int64_t n = xf_shape_numel(&p->out[0].shape);
    for (int64_t j = 0; j < nb; j++) fdata(&p->in[1])[j] = (float)(j + 1);
    xf_status st = XF_OK;
    for (int64_t i = 0; st == XF_OK && i < na; i++) {
        fdata(&p->in[0])[i] = 1.0f;
        st = probe_run(p, nd, prm, err);
        fdata(&p->in[0])[i] = 0.0f;
        for (int64_t e = 0; st == XF_OK && e < n; e++) {
            float x = fdata(&p->out[0])[e];
            if (x == 0.0f) continue;
            int64_t j = (int64_t)nearbyintf(x) - 1;
            if (j < 0 || j >= nb || (float)(j + 1) != x)
                return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                               "bounded check: %s is not a sum of pairwise products",
                               xf_op_get(nd->op)->name);
            st = step(v, i, j, 0, e, 1.0, err);
        }
    }
    return st;
}

/* Max-pool: a one-hot shows each window: steps (i, 0, 0, e) for element i
 * in the window of output element e. */
static xf_status read_maxpool(probe *p, const xf_node *nd, stepv *v, xf_error *err)
{
    int64_t m = xf_shape_numel(&p->in[0].shape), n = xf_shape_numel(&p->out[0].shape);
    xf_status st = XF_OK;
    for (int64_t i = 0; st == XF_OK && i < m; i++) {
        fdata(&p->in[0])[i] = 1.0f;
        st = probe_run(p, nd, &nd->params, err);
        fdata(&p->in[0])[i] = 0.0f;
        for (int64_t e = 0; st == XF_OK && e < n; e++)
            if (fdata(&p->out[0])[e] != 0.0f) st = step(v, i, 0, 0, e, 1.0, err);
    }
    return st;
}

/* A constant generator: steps (0, 0, 0, e, value), every element. */
static xf_status read_constant(probe *p, const xf_node *nd, stepv *v, xf_error *err)
{
    xf_status st = probe_run(p, nd, &nd->params, err);
    int64_t n = xf_shape_numel(&p->out[0].shape);
    for (int64_t e = 0; st == XF_OK && e < n; e++) st = step(v, 0, 0, 0, e, fdata(&p->out[0])[e], err);
    return st;
}

/* The form of a probed node, all its kernel's answer depends on: the kind
 * of reading, the operator, its parameters (canonical bytes: equal
 * operations have equal bytes, ir.h), which of its first n_in operands are
 * there and their shapes, and its results' shapes. */
#define PATTERN_KEY_MAX \
    (4 * sizeof(int32_t) + sizeof(xf_params) + \
     (8 + XF_MAX_SPLIT) * (sizeof(int32_t) + XF_MAX_DIMS * sizeof(int64_t)))

static void key_put(uint8_t *key, size_t *at, const void *p, size_t n)
{
    memcpy(key + *at, p, n);
    *at += n;
}

static void key_shape(uint8_t *key, size_t *at, const xf_shape *s)
{
    int32_t rank = s ? s->rank : -1;
    key_put(key, at, &rank, sizeof rank);
    if (s) key_put(key, at, s->dims, (size_t)s->rank * sizeof *s->dims);
}

static size_t pattern_key(int kind, const xf_graph *g, const xf_node *nd, const xf_params *prm,
                          int n_in, uint8_t *key)
{
    size_t at = 0;
    int32_t head[4] = {kind, (int32_t)nd->op, n_in, nd->n_outputs};
    key_put(key, &at, head, sizeof head);
    key_put(key, &at, prm, sizeof *prm);
    for (int i = 0; i < n_in; i++)
        key_shape(key, &at, nd->inputs[i] >= 0 ? &g->values[nd->inputs[i]].shape : NULL);
    for (int o = 0; o < nd->n_outputs; o++) key_shape(key, &at, &g->values[nd->outputs[o]].shape);
    return at;
}

/* A node's pattern: found (kept elsewhere) or read off its kernel now
 * (owned: the caller frees it). */
typedef struct pattern {
    const vf_pattern_step *step;
    int64_t n;
    vf_pattern_step *owned;
} pattern;

/* The pattern of nd read as `kind` with parameters prm over its first n_in
 * operands: found among the kept ones, else read off the kernel and kept. */
static xf_status pattern_get(xfb_ctx *c, int kind, const xf_graph *g, const xf_node *nd,
                             const xf_params *prm, int n_in, pattern *pt, xf_error *err)
{
    memset(pt, 0, sizeof *pt);
    uint8_t key[PATTERN_KEY_MAX];
    size_t key_len = 0;
    if (c->patterns && n_in <= 8 && nd->n_outputs <= XF_MAX_SPLIT) {
        key_len = pattern_key(kind, g, nd, prm, n_in, key);
        pt->step = vf_patterns_find(c->patterns, key, key_len, &pt->n);
        if (pt->step) return XF_OK;
    }
    probe p;
    stepv v = {NULL, 0, 0};
    xf_status st = probe_init(&p, g, nd, n_in, err);
    if (st == XF_OK) {
        switch (kind) {
        case PAT_AFFINE: st = read_affine(&p, nd, &v, err); break;
        case PAT_BILINEAR: st = read_bilinear(&p, nd, prm, &v, err); break;
        case PAT_MAXPOOL: st = read_maxpool(&p, nd, &v, err); break;
        default: st = read_constant(&p, nd, &v, err); break;
        }
    }
    probe_free(&p);
    if (st != XF_OK) {
        xf_free(v.s);
        return st;
    }
    pt->owned = v.s;
    pt->step = v.s;
    pt->n = v.n;
    if (key_len) vf_patterns_keep(c->patterns, key, key_len, v.s, v.n);
    return XF_OK;
}

/* Whether every step of pt fits node nd's operands and results (a pattern
 * is found by its form, so it always does; checked before any term is
 * built from it all the same). */
static xf_status pattern_fits(const pattern *pt, const xf_node *nd, int n_in,
                              const xfb_tensor *vals, int kind, xf_error *err)
{
    for (int64_t k = 0; k < pt->n; k++) {
        const vf_pattern_step *s = &pt->step[k];
        int in_ok, out_ok = s->out >= 0 && s->out < nd->n_outputs &&
                            s->at >= 0 && s->at < vals[nd->outputs[s->out]].n;
        if (kind == PAT_AFFINE)
            in_ok = s->in < 0 || (s->in < n_in && nd->inputs[s->in] >= 0 && s->elem >= 0 &&
                                  s->elem < vals[nd->inputs[s->in]].n);
        else if (kind == PAT_BILINEAR)
            in_ok = s->in >= 0 && s->in < vals[nd->inputs[0]].n && s->elem >= 0 &&
                    s->elem < vals[nd->inputs[1]].n;
        else if (kind == PAT_MAXPOOL)
            in_ok = s->in >= 0 && s->in < vals[nd->inputs[0]].n;
        else
            in_ok = s->at == k;
        if (!in_ok || !out_ok || (kind != PAT_AFFINE && s->out != 0))
            return XF_FAIL(err, XF_ERR_INTERNAL,
                           "bounded check: a kept pattern of %s does not fit its operands",
                           xf_op_get(nd->op)->name);
    }
    return XF_OK;
}

/* Terms of each output element in step order, found by counting: lane k
 * (output o's element e, k = first[o] + e) is t[start[k] .. start[k+1]). */
typedef struct lanes {
    int64_t first[XF_MAX_SPLIT + 1];
    int64_t *start, *fill;
    Z3_ast *t;
} lanes;

static void lanes_free(lanes *l)
{
    xf_free(l->start);
    xf_free(l->fill);
    xf_free(l->t);
}

static xf_status lanes_init(lanes *l, const pattern *pt, const xf_node *nd, const xfb_tensor *vals,
                            xf_error *err)
{
    memset(l, 0, sizeof *l);
    for (int o = 0; o < nd->n_outputs; o++) l->first[o + 1] = l->first[o] + vals[nd->outputs[o]].n;
    int64_t total = l->first[nd->n_outputs];
    l->start = xf_calloc((size_t)total + 2, sizeof *l->start);
    l->fill = xf_calloc((size_t)total + 1, sizeof *l->fill);
    l->t = xf_malloc((size_t)pt->n * sizeof *l->t + 1);
    if (!l->start || !l->fill || !l->t)
        return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory");
    for (int64_t k = 0; k < pt->n; k++) l->start[l->first[pt->step[k].out] + pt->step[k].at + 1]++;
    for (int64_t k = 0; k < total; k++) l->start[k + 1] += l->start[k];
    return XF_OK;
}

/* Adds term a to lane k, after the terms added before. */
static void lanes_put(lanes *l, int64_t k, Z3_ast a)
{
    l->t[l->start[k] + l->fill[k]++] = a;
}

/* Each output element the sum of its lane, in order. */
static xf_status lanes_sum(xfb_ctx *c, const lanes *l, const xf_node *nd, xfb_tensor *vals,
                           xf_error *err)
{
    for (int o = 0; o < nd->n_outputs; o++) {
        xfb_tensor *t = &vals[nd->outputs[o]];
        for (int64_t e = 0; e < t->n; e++) {
            int64_t k = l->first[o] + e;
            t->e[e] = sum(c, l->t + l->start[k], (int)(l->start[k + 1] - l->start[k]));
        }
    }
    return vf_bounded_z3_check(c, "building sums", err);
}

/* ------------------------------------------------------------------ affine */

static xf_status affine(xfb_ctx *c, const xf_graph *g, const xf_node *nd, xfb_tensor *vals,
                        xf_error *err)
{
    pattern pt;
    lanes l;
    memset(&l, 0, sizeof l);
    xf_status st = pattern_get(c, PAT_AFFINE, g, nd, &nd->params, nd->n_inputs, &pt, err);
    if (st == XF_OK) st = pattern_fits(&pt, nd, nd->n_inputs, vals, PAT_AFFINE, err);
    if (st == XF_OK) st = lanes_init(&l, &pt, nd, vals, err);
    for (int64_t k = 0; st == XF_OK && k < pt.n; k++) {
        const vf_pattern_step *s = &pt.step[k];
        Z3_ast term;
        if (s->in < 0) {
            term = num(c, s->coef, err); /* the constant term */
        } else {
            term = vals[nd->inputs[s->in]].e[s->elem];
            if (s->coef != 1.0) {
                Z3_ast coef = num(c, s->coef, err);
                term = coef ? mul2(c, coef, term) : NULL;
            }
        }
        if (!term) st = XF_ERR_UNSUPPORTED;
        else lanes_put(&l, l.first[s->out] + s->at, term);
    }
    if (st == XF_OK) st = lanes_sum(c, &l, nd, vals, err);
    lanes_free(&l);
    xf_free(pt.owned);
    return st;
}

/* ---------------------------------------------------------------- bilinear */

static xf_status bilinear(xfb_ctx *c, const xf_graph *g, const xf_node *nd, const xf_params *prm,
                          xfb_tensor *vals, xf_error *err)
{
    const xfb_tensor *a = &vals[nd->inputs[0]], *b = &vals[nd->inputs[1]];
    pattern pt;
    lanes l;
    memset(&l, 0, sizeof l);
    xf_status st = pattern_get(c, PAT_BILINEAR, g, nd, prm, 2, &pt, err);
    if (st == XF_OK) st = pattern_fits(&pt, nd, 2, vals, PAT_BILINEAR, err);
    if (st == XF_OK) st = lanes_init(&l, &pt, nd, vals, err);
    for (int64_t k = 0; st == XF_OK && k < pt.n; k++)
        lanes_put(&l, pt.step[k].at, mul2(c, a->e[pt.step[k].in], b->e[pt.step[k].elem]));
    if (st == XF_OK) st = lanes_sum(c, &l, nd, vals, err);
    lanes_free(&l);
    xf_free(pt.owned);
    return st;
}

static xf_status conv(xfb_ctx *c, const xf_graph *g, const xf_node *nd, xfb_tensor *vals,
                      xf_error *err)
{
    xf_params prm = nd->params;
    prm.activation = XF_ACT_NONE;
    xf_status st = bilinear(c, g, nd, &prm, vals, err);
    if (st != XF_OK) return st;
    xfb_tensor *y = &vals[nd->outputs[0]];
    if (nd->n_inputs > 2 && nd->inputs[2] >= 0) {
        const xfb_tensor *bias = &vals[nd->inputs[2]];
        int64_t hw = y->n / (y->shape.dims[0] * y->shape.dims[1]);
        for (int64_t e = 0; e < y->n; e++) {
            Z3_ast t[2] = {y->e[e], bias->e[(e / hw) % y->shape.dims[1]]};
            y->e[e] = Z3_mk_add(c->z, 2, t);
        }
    }
    for (int64_t e = 0; e < y->n; e++) {
        switch (nd->params.activation) {
        case XF_ACT_NONE: break;
        case XF_ACT_RELU: y->e[e] = relu(c, y->e[e], err); break;
        case XF_ACT_SIGMOID: y->e[e] = apply_uf(c, XF_OP_SIGMOID, y->e[e], err); break;
        case XF_ACT_TANH: y->e[e] = apply_uf(c, XF_OP_TANH, y->e[e], err); break;
        default:
            return XF_FAIL(err, XF_ERR_UNSUPPORTED, "bounded check: conv activation %d",
                           (int)nd->params.activation);
        }
        if (!y->e[e]) return XF_ERR_NOMEM;
    }
    return vf_bounded_z3_check(c, "elaborating conv", err);
}

/* ----------------------------------------------------------------- maxpool */

static xf_status maxpool(xfb_ctx *c, const xf_graph *g, const xf_node *nd, xfb_tensor *vals,
                         xf_error *err)
{
    const xfb_tensor *x = &vals[nd->inputs[0]];
    xfb_tensor *y = &vals[nd->outputs[0]];
    pattern pt;
    lanes l;
    memset(&l, 0, sizeof l);
    xf_status st = pattern_get(c, PAT_MAXPOOL, g, nd, &nd->params, 1, &pt, err);
    if (st == XF_OK) st = pattern_fits(&pt, nd, 1, vals, PAT_MAXPOOL, err);
    if (st == XF_OK) st = lanes_init(&l, &pt, nd, vals, err);
    for (int64_t k = 0; st == XF_OK && k < pt.n; k++) lanes_put(&l, pt.step[k].at, x->e[pt.step[k].in]);
    for (int64_t e = 0; st == XF_OK && e < y->n; e++) {
        Z3_ast *w = l.t + l.start[e];
        int n = (int)(l.start[e + 1] - l.start[e]);
        if (n == 0) {
            st = XF_FAIL(err, XF_ERR_UNSUPPORTED, "bounded check: maxpool window %lld is empty",
                         (long long)e);
            break;
        }
        /* Window in a fixed order (term ids), so the same window read in
         * another order (e.g. through a transpose) is the same term. */
        for (int i = 1; i < n; i++)
            for (int j = i; j > 0 && Z3_get_ast_id(c->z, w[j - 1]) > Z3_get_ast_id(c->z, w[j]); j--) {
                Z3_ast t = w[j];
                w[j] = w[j - 1], w[j - 1] = t;
            }
        Z3_ast m = w[0];
        for (int k = 1; k < n; k++) m = Z3_mk_ite(c->z, Z3_mk_gt(c->z, w[k], m), w[k], m);
        y->e[e] = m;
    }
    lanes_free(&l);
    xf_free(pt.owned);
    return st == XF_OK ? vf_bounded_z3_check(c, "elaborating maxpool", err) : st;
}

/* ------------------------------------------------------------ constants */

static xf_status constant(xfb_ctx *c, const xf_graph *g, const xf_node *nd, xfb_tensor *vals,
                          xf_error *err)
{
    pattern pt;
    xf_status st = pattern_get(c, PAT_CONSTANT, g, nd, &nd->params, 0, &pt, err);
    if (st == XF_OK) st = pattern_fits(&pt, nd, 0, vals, PAT_CONSTANT, err);
    xfb_tensor *y = &vals[nd->outputs[0]];
    if (st == XF_OK && pt.n != y->n)
        st = XF_FAIL(err, XF_ERR_INTERNAL, "bounded check: a kept constant does not fit");
    for (int64_t e = 0; st == XF_OK && e < y->n; e++) {
        y->e[e] = num(c, pt.step[e].coef, err);
        if (!y->e[e]) st = XF_ERR_UNSUPPORTED;
    }
    xf_free(pt.owned);
    return st;
}

/* -------------------------------------------------------- normalisations */

/* Flat index into `in` (numpy-broadcast to `out`) of out's flat index e. */
static int64_t bcast_index(const xf_shape *out, const xf_shape *in, int64_t e)
{
    int64_t idx = 0, stride = 1;
    for (int d = out->rank - 1, k = in->rank - 1; d >= 0; d--, k--) {
        int64_t coord = e % out->dims[d];
        e /= out->dims[d];
        if (k < 0) continue;
        if (in->dims[k] != 1) idx += coord * stride;
        stride *= in->dims[k];
    }
    return idx;
}

static xf_status softmax(xfb_ctx *c, const xfb_tensor *x, int axis, xfb_tensor *y,
                         xf_error *err)
{
    int64_t n = x->shape.dims[axis], inner = 1;
    for (int d = axis + 1; d < x->shape.rank; d++) inner *= x->shape.dims[d];
    Z3_ast *ex = xf_malloc((size_t)n * sizeof *ex);
    if (!ex) return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory");
    for (int64_t base = 0; base < x->n; base++) {
        if ((base / inner) % n != 0) continue; /* first element of a lane */
        for (int64_t k = 0; k < n; k++) {
            ex[k] = apply_uf(c, XF_OP_EXP, x->e[base + k * inner], err);
            if (!ex[k]) return xf_free(ex), XF_ERR_NOMEM;
        }
        Z3_ast s = sum(c, ex, (int)n);
        for (int64_t k = 0; k < n; k++) y->e[base + k * inner] = Z3_mk_div(c->z, ex[k], s);
    }
    xf_free(ex);
    return vf_bounded_z3_check(c, "elaborating softmax", err);
}

static xf_status layernorm(xfb_ctx *c, const xf_graph *g, const xf_node *nd, xfb_tensor *vals,
                           xf_error *err)
{
    const xfb_tensor *x = &vals[nd->inputs[0]], *scale = &vals[nd->inputs[1]];
    const xfb_tensor *bias = nd->n_inputs > 2 && nd->inputs[2] >= 0 ? &vals[nd->inputs[2]] : NULL;
    xfb_tensor *y = &vals[nd->outputs[0]];
    int axis = nd->params.axis < 0 ? nd->params.axis + x->shape.rank : nd->params.axis;
    xf_shape tail = xf_shape_make(x->shape.rank - axis, x->shape.dims + axis);
    int64_t inner = xf_shape_numel(&tail);
    Z3_ast *d = xf_malloc((size_t)inner * 2 * sizeof *d);
    if (!d) return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory");
    Z3_ast *sq = d + inner, inv_n = Z3_mk_real(c->z, 1, (int)inner);
    Z3_ast eps = num(c, nd->params.epsilon, err);
    if (!eps) return xf_free(d), XF_ERR_UNSUPPORTED;
    for (int64_t row = 0; row < x->n; row += inner) {
        Z3_ast mean = mul2(c, inv_n, sum(c, x->e + row, (int)inner));
        for (int64_t k = 0; k < inner; k++) {
            d[k] = Z3_mk_sub(c->z, 2, (Z3_ast[]){x->e[row + k], mean});
            sq[k] = mul2(c, d[k], d[k]);
        }
        Z3_ast var = mul2(c, inv_n, sum(c, sq, (int)inner));
        Z3_ast s = apply_uf(c, XF_OP_SQRT, Z3_mk_add(c->z, 2, (Z3_ast[]){var, eps}), err);
        /* sqrt(var + eps) > 0 holds only for eps > 0 (a constant row has var 0) */
        if (!s || (nd->params.epsilon > 0 && side(c, Z3_mk_gt(c->z, s, zero(c)), err) != XF_OK))
            return xf_free(d), XF_ERR_NOMEM;
        for (int64_t k = 0; k < inner; k++) {
            Z3_ast v = mul2(c, Z3_mk_div(c->z, d[k], s),
                            scale->e[bcast_index(&tail, &scale->shape, k)]);
            if (bias)
                v = Z3_mk_add(c->z, 2, (Z3_ast[]){v, bias->e[bcast_index(&tail, &bias->shape, k)]});
            y->e[row + k] = v;
        }
    }
    xf_free(d);
    (void)g;
    return vf_bounded_z3_check(c, "elaborating layernorm", err);
}

static xf_status batchnorm(xfb_ctx *c, const xf_node *nd, xfb_tensor *vals, xf_error *err)
{
    const xfb_tensor *x = &vals[nd->inputs[0]], *scale = &vals[nd->inputs[1]],
                     *b = &vals[nd->inputs[2]], *mean = &vals[nd->inputs[3]],
                     *var = &vals[nd->inputs[4]];
    xfb_tensor *y = &vals[nd->outputs[0]];
    int64_t ch = x->shape.dims[1], hw = x->n / (x->shape.dims[0] * ch);
    Z3_ast eps = num(c, nd->params.epsilon, err);
    if (!eps) return XF_ERR_UNSUPPORTED;
    for (int64_t e = 0; e < x->n; e++) {
        int64_t k = (e / hw) % ch;
        Z3_ast s = apply_uf(c, XF_OP_SQRT, Z3_mk_add(c->z, 2, (Z3_ast[]){var->e[k], eps}), err);
        if (!s) return XF_ERR_NOMEM;
        Z3_ast centred = Z3_mk_sub(c->z, 2, (Z3_ast[]){x->e[e], mean->e[k]});
        Z3_ast v = Z3_mk_div(c->z, mul2(c, centred, scale->e[k]), s);
        y->e[e] = Z3_mk_add(c->z, 2, (Z3_ast[]){v, b->e[k]});
    }
    return vf_bounded_z3_check(c, "elaborating batchnorm", err);
}

/* ---------------------------------------------------------------- dispatch */

static xf_status node(xfb_ctx *c, const xf_graph *g, const xf_node *nd, xfb_tensor *vals,
                      xf_error *err)
{
    const xfb_tensor *x = nd->n_inputs > 0 && nd->inputs[0] >= 0 ? &vals[nd->inputs[0]] : NULL;
    xfb_tensor *y = &vals[nd->outputs[0]];
    switch (nd->op) {
    case XF_OP_ADD: case XF_OP_SUB: case XF_OP_NEG: case XF_OP_IDENTITY:
    case XF_OP_CONCAT: case XF_OP_SPLIT: case XF_OP_TRANSPOSE: case XF_OP_RESHAPE:
    case XF_OP_FLATTEN: case XF_OP_SQUEEZE: case XF_OP_UNSQUEEZE: case XF_OP_SLICE:
    case XF_OP_PAD: case XF_OP_EXPAND: case XF_OP_ENLARGE: case XF_OP_AVGPOOL:
    case XF_OP_GLOBAL_AVGPOOL: case XF_OP_REDUCE_MEAN:
        return affine(c, g, nd, vals, err);
    case XF_OP_MUL: case XF_OP_SCALAR_MUL: case XF_OP_MATMUL:
        return bilinear(c, g, nd, &nd->params, vals, err);
    case XF_OP_CONV: return conv(c, g, nd, vals, err);
    case XF_OP_MAXPOOL: return maxpool(c, g, nd, vals, err);
    case XF_OP_CONST_IDENTITY_CONV: case XF_OP_CONST_IDENTITY_MATRIX: case XF_OP_CONST_ONES:
    case XF_OP_CONST_POOL: case XF_OP_CONSTANT_OF_SHAPE:
        return constant(c, g, nd, vals, err);
    case XF_OP_RELU:
        for (int64_t e = 0; e < y->n; e++)
            if (!(y->e[e] = relu(c, x->e[e], err))) return XF_ERR_NOMEM;
        return vf_bounded_z3_check(c, "elaborating relu", err);
    case XF_OP_SIGMOID: case XF_OP_TANH: case XF_OP_ERF: case XF_OP_GELU: case XF_OP_EXP:
    case XF_OP_LOG: case XF_OP_SQRT:
        for (int64_t e = 0; e < y->n; e++)
            if (!(y->e[e] = apply_uf(c, nd->op, x->e[e], err))) return XF_ERR_NOMEM;
        return vf_bounded_z3_check(c, "elaborating an abstract function", err);
    case XF_OP_POW: return power(c, x, &vals[nd->inputs[1]], y, err);
    case XF_OP_SOFTMAX: {
        int axis = nd->params.axis < 0 ? nd->params.axis + x->shape.rank : nd->params.axis;
        return softmax(c, x, axis, y, err);
    }
    case XF_OP_LAYERNORM: return layernorm(c, g, nd, vals, err);
    case XF_OP_BATCHNORM: return batchnorm(c, nd, vals, err);
    default:
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "bounded check: operator %s is not modelled",
                       xf_op_get(nd->op)->name);
    }
}

xf_status vf_bounded_elaborate(xfb_ctx *c, const xf_graph *g, xfb_tensor *vals, xf_error *err)
{
    int *order = xf_malloc((size_t)g->n_nodes * sizeof *order + 1);
    if (!order) return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory");
    xf_status st = xf_graph_topo_order(g, order, err);
    for (int k = 0; st == XF_OK && k < g->n_nodes; k++) {
        const xf_node *nd = &g->nodes[order[k]];
        for (int i = 0; st == XF_OK && i < nd->n_inputs; i++)
            if (nd->inputs[i] >= 0 && g->values[nd->inputs[i]].dtype != XF_F32)
                st = XF_FAIL(err, XF_ERR_UNSUPPORTED, "bounded check: %s reads a %s tensor",
                             xf_op_get(nd->op)->name,
                             xf_dtype_name(g->values[nd->inputs[i]].dtype));
        for (int o = 0; st == XF_OK && o < nd->n_outputs; o++) {
            xfb_tensor *t = &vals[nd->outputs[o]];
            t->shape = g->values[nd->outputs[o]].shape;
            t->n = xf_shape_numel(&t->shape);
            t->e = xf_calloc((size_t)t->n + 1, sizeof *t->e);
            if (!t->e) st = XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory");
        }
        if (st == XF_OK) st = node(c, g, nd, vals, err);
        if (st != XF_OK) {
            char b[128];
            xf_error_prefix(err, "%s", xf_node_describe(g, order[k], b, sizeof b));
        }
    }
    xf_free(order);
    return st;
}
