/*
 * axioms_instance_rule.c — builds the rule of an axiom instance
 * (verify.h, xf_axiom_instance) from its text, so the instance table
 * (axiom_instances.c) stays one readable line per instance instead of a
 * builder function each. The language:
 *
 *   inputs  "x:2x3 y:2x3 s:"        name:dims, dims joined by 'x' (none: scalar)
 *   expr    NAME | OP[k=v,...](expr, ...)
 *
 * OP is an rlflow op name (ewadd, matmul, softmax...) or one of the
 * shorthands below; keys: axis=N; sizes=AxB (split sizes) and out=I (which
 * split output); p=same|valid (padding from the kernel size), s=N or HxW
 * (stride), k=N or HxW (pool window, enlarge target), act=relu|sigmoid|tanh,
 * g=N (conv groups), shape=AxBx.. (constants). Shorthands: trans (swap the
 * last two axes), tswap[axis=K] (swap axes K and K+1, K negative), smul (scalar_mul), mean (reduce_mean over `axis`, keeping
 * dims), ones, imat, iconv, pool (the constant generators); avgpool counts
 * padding. Both sides read the same inputs in declaration order.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify/verify.h"

#define MAX_NAMES 8

typedef struct parser {
    const xf_axiom_instance *inst;
    xf_graph *g;
    const char *text, *p;
    int n_names;
    char names[MAX_NAMES][16];
    int ids[MAX_NAMES];
    xf_error *err;
} parser;

typedef struct kv {
    int has_axis, axis, out, n_sizes, pad_valid, act, group, n_shape;
    int64_t sizes[4], shape[XF_MAX_DIMS];
    int32_t k[2], s[2];
} kv;

static xf_status fail(parser *ps, const char *what)
{
    return XF_FAIL(ps->err, XF_ERR_PARSE, "axiom instance %s: %s at '%s' in \"%s\"", ps->inst->axiom,
                   what, ps->p, ps->text);
}

static void skip_ws(parser *ps)
{
    while (isspace((unsigned char)*ps->p)) ps->p++;
}

static int word(parser *ps, char *buf, size_t n)
{
    size_t len = 0;
    skip_ws(ps);
    while ((isalnum((unsigned char)*ps->p) || *ps->p == '_' || *ps->p == '-') && len + 1 < n)
        buf[len++] = *ps->p++;
    buf[len] = '\0';
    return (int)len;
}

/* "2x3x4" (or "" for none) into dims; returns the count or -1. */
static int parse_dims(const char *s, int64_t *dims, int max)
{
    int n = 0;
    while (*s) {
        char *end;
        long long v = strtoll(s, &end, 10);
        if (end == s || n == max) return -1;
        dims[n++] = v;
        s = *end == 'x' ? end + 1 : end;
        if (*end && *end != 'x') return -1;
    }
    return n;
}

static void pair(const int64_t *d, int n, int32_t out[2])
{
    out[0] = (int32_t)d[0];
    out[1] = (int32_t)(n > 1 ? d[1] : d[0]);
}

static xf_status parse_kv(parser *ps, kv *o)
{
    memset(o, 0, sizeof *o);
    o->group = 1;
    o->s[0] = o->s[1] = 1;
    if (*ps->p != '[') return XF_OK;
    ps->p++;
    for (;;) {
        char key[16], val[32];
        int64_t d[XF_MAX_DIMS];
        if (!word(ps, key, sizeof key) || *ps->p != '=') return fail(ps, "expected key=value");
        ps->p++;
        if (!word(ps, val, sizeof val)) return fail(ps, "expected a value");
        int nd = parse_dims(val, d, XF_MAX_DIMS);
        if (!strcmp(key, "p") && (!strcmp(val, "same") || !strcmp(val, "valid"))) {
            o->pad_valid = val[0] == 'v';
        } else if (!strcmp(key, "act")) {
            o->act = !strcmp(val, "relu") ? XF_ACT_RELU : !strcmp(val, "sigmoid") ? XF_ACT_SIGMOID
                     : !strcmp(val, "tanh")                   ? XF_ACT_TANH
                                                              : -1;
            if (o->act < 0) return fail(ps, "unknown activation");
        } else if (nd < 1 && strcmp(key, "shape")) {
            return fail(ps, "expected a number");
        } else if (!strcmp(key, "axis")) {
            o->has_axis = 1, o->axis = (int)d[0];
        } else if (!strcmp(key, "out")) {
            o->out = (int)d[0];
        } else if (!strcmp(key, "g")) {
            o->group = (int)d[0];
        } else if (!strcmp(key, "k")) {
            pair(d, nd, o->k);
        } else if (!strcmp(key, "s")) {
            pair(d, nd, o->s);
        } else if (!strcmp(key, "sizes") && nd <= 4) {
            o->n_sizes = nd;
            memcpy(o->sizes, d, sizeof(int64_t) * (size_t)nd);
        } else if (!strcmp(key, "shape")) {
            o->n_shape = nd < 0 ? 0 : nd;
            memcpy(o->shape, d, sizeof(int64_t) * (size_t)o->n_shape);
        } else {
            return fail(ps, "unknown key");
        }
        skip_ws(ps);
        if (*ps->p == ']') break;
        if (*ps->p++ != ',') return fail(ps, "expected ',' or ']'");
    }
    ps->p++;
    return XF_OK;
}

static int value_rank(parser *ps, int v)
{
    return ps->g->values[v].shape.rank;
}

static const int64_t *value_dims(parser *ps, int v)
{
    return ps->g->values[v].shape.dims;
}

/* Op and parameters of OP[...](args); -1 on error. */
static int apply(parser *ps, const char *op, const kv *o, const int *args, int na)
{
    xf_params prm = xf_params_default();
    xf_op id = xf_op_from_name(op);
    if (o->has_axis) prm.axis = o->axis;
    if (!strcmp(op, "trans")) {
        id = XF_OP_TRANSPOSE;
        int r = na ? value_rank(ps, args[0]) : 0;
        prm.n_axes = r;
        for (int i = 0; i < r; i++) prm.axes[i] = i < r - 2 ? i : (i == r - 2 ? r - 1 : r - 2);
    } else if (!strcmp(op, "tswap")) {
        id = XF_OP_TRANSPOSE;
        int r = na ? value_rank(ps, args[0]) : 0, a = r + o->axis;
        if (!o->has_axis || a < 0 || a + 1 >= r) {
            fail(ps, "tswap needs axis=K with -rank <= K <= -2");
            return -1;
        }
        prm.n_axes = r;
        for (int i = 0; i < r; i++) prm.axes[i] = i == a ? a + 1 : i == a + 1 ? a : i;
        prm.axis = 0;
    } else if (!strcmp(op, "conv")) {
        id = XF_OP_CONV;
    } else if (!strcmp(op, "smul")) {
        id = XF_OP_SCALAR_MUL;
    } else if (!strcmp(op, "mean")) {
        id = XF_OP_REDUCE_MEAN;
        prm.n_axes = 1, prm.axes[0] = o->axis, prm.keepdims = 1;
    } else if (!strcmp(op, "ones") || !strcmp(op, "imat") || !strcmp(op, "iconv") || !strcmp(op, "pool")) {
        id = op[0] == 'o' ? XF_OP_CONST_ONES : op[1] == 'm' ? XF_OP_CONST_IDENTITY_MATRIX
             : op[0] == 'i'                               ? XF_OP_CONST_IDENTITY_CONV
                                                          : XF_OP_CONST_POOL;
        prm.n_shape = o->n_shape;
        memcpy(prm.shape, o->shape, sizeof o->shape);
    }
    if (id == XF_OP_RESHAPE) {
        prm.n_shape = o->n_shape;
        memcpy(prm.shape, o->shape, sizeof o->shape);
    }
    /* the vocabulary's epsilon (enumerate/vocab.c); a layer norm of one
     * element is its bias only with epsilon > 0 (prove_zero.c) */
    if (id == XF_OP_LAYERNORM) prm.epsilon = 1e-5f;
    if (id == XF_OP_CONV && na == 2) {
        const int64_t *w = value_dims(ps, args[1]);
        prm.kernel[0] = (int32_t)w[2], prm.kernel[1] = (int32_t)w[3];
        prm.stride[0] = o->s[0], prm.stride[1] = o->s[1];
        prm.group = o->group, prm.activation = o->act;
        if (!o->pad_valid) {
            prm.pads[0] = prm.pads[2] = (int32_t)(w[2] - 1) / 2;
            prm.pads[1] = prm.pads[3] = (int32_t)(w[3] - 1) / 2;
        }
    } else if (id == XF_OP_AVGPOOL || id == XF_OP_MAXPOOL) {
        prm.kernel[0] = o->k[0], prm.kernel[1] = o->k[1];
        prm.stride[0] = o->s[0], prm.stride[1] = o->s[1];
        prm.count_include_pad = id == XF_OP_AVGPOOL;
        if (!o->pad_valid) {
            prm.pads[0] = prm.pads[2] = (o->k[0] - 1) / 2;
            prm.pads[1] = prm.pads[3] = (o->k[1] - 1) / 2;
        }
    } else if (id == XF_OP_ENLARGE) {
        prm.kernel[0] = o->k[0], prm.kernel[1] = o->k[1];
    } else if (id == XF_OP_SPLIT) {
        prm.n_split = o->n_sizes;
        memcpy(prm.split, o->sizes, sizeof(int64_t) * (size_t)o->n_sizes);
        if (o->out < 0 || o->out >= o->n_sizes) {
            fail(ps, "split output out of range");
            return -1;
        }
        int node = xf_graph_add_node(ps->g, id, &prm, args, na, o->n_sizes, NULL, ps->err);
        if (node < 0) xf_error_prefix(ps->err, "axiom instance %s, %s: ", ps->inst->axiom, op);
        return node < 0 ? -1 : ps->g->nodes[node].outputs[o->out];
    }
    if (id == XF_OP_COUNT) {
        fail(ps, "unknown operator");
        return -1;
    }
    int v = xf_graph_op(ps->g, id, &prm, args, na, ps->err);
    if (v < 0) xf_error_prefix(ps->err, "axiom instance %s, %s: ", ps->inst->axiom, op);
    return v;
}

static int parse_expr(parser *ps)
{
    char name[24];
    const char *at = ps->p;
    if (!word(ps, name, sizeof name)) {
        fail(ps, "expected a name");
        return -1;
    }
    skip_ws(ps);
    if (*ps->p != '[' && *ps->p != '(') {
        for (int i = 0; i < ps->n_names; i++)
            if (!strcmp(ps->names[i], name)) return ps->ids[i];
        ps->p = at;
        fail(ps, "unknown input");
        return -1;
    }
    kv o;
    if (parse_kv(ps, &o) != XF_OK) return -1;
    skip_ws(ps);
    if (*ps->p++ != '(') {
        fail(ps, "expected '('");
        return -1;
    }
    int args[4], na = 0;
    skip_ws(ps);
    while (*ps->p != ')') {
        if (na == 4) {
            fail(ps, "more than 4 arguments");
            return -1;
        }
        if ((args[na++] = parse_expr(ps)) < 0) return -1;
        skip_ws(ps);
        if (*ps->p == ',') ps->p++, skip_ws(ps);
        else if (*ps->p != ')') {
            fail(ps, "expected ',' or ')'");
            return -1;
        }
    }
    ps->p++;
    return apply(ps, name, &o, args, na);
}

static xf_status build_side(const xf_axiom_instance *inst, xf_graph *g, const char *text,
                            xf_error *err)
{
    parser ps = {inst, g, inst->inputs, inst->inputs, 0, {{0}}, {0}, err};
    for (;;) {
        skip_ws(&ps);
        if (!*ps.p) break;
        char spec[40];
        int64_t d[XF_MAX_DIMS];
        size_t len = strcspn(ps.p, " \t");
        const char *colon = memchr(ps.p, ':', len);
        if (!colon || len >= sizeof spec || ps.n_names == MAX_NAMES || colon - ps.p >= 16)
            return fail(&ps, "expected name:dims");
        memcpy(spec, colon + 1, len - (size_t)(colon - ps.p) - 1);
        spec[len - (size_t)(colon - ps.p) - 1] = '\0';
        int nd = parse_dims(spec, d, XF_MAX_DIMS);
        if (nd < 0) return fail(&ps, "bad dims");
        memcpy(ps.names[ps.n_names], ps.p, (size_t)(colon - ps.p));
        ps.names[ps.n_names][colon - ps.p] = '\0';
        xf_shape s = xf_shape_make(nd, d);
        ps.ids[ps.n_names] = xf_graph_add_input(g, ps.names[ps.n_names], XF_F32, &s, err);
        if (ps.ids[ps.n_names++] < 0) return err ? err->code : XF_ERR_INVALID;
        ps.p += len;
    }
    ps.text = ps.p = text;
    int out = parse_expr(&ps);
    if (out < 0) return err ? err->code : XF_ERR_PARSE;
    skip_ws(&ps);
    if (*ps.p) return fail(&ps, "trailing text");
    return xf_graph_mark_output(g, out, err);
}

xf_status xf_verify_axiom_instance_rule(const xf_axiom_instance *inst, xf_rule *r, xf_error *err)
{
    xf_rule_init(r);
    xf_status st = build_side(inst, &r->src, inst->src, err);
    if (st == XF_OK) st = build_side(inst, &r->dst, inst->dst, err);
    if (st == XF_OK) {
        st = xf_rule_validate(r, err);
        if (st != XF_OK) xf_error_prefix(err, "axiom instance %s", inst->axiom);
    }
    return st;
}
