/*
 * domain_infer.c — the symbolic twin of shape inference: what the operators
 * of a graph demand of the dims of its inputs, as conditions of a validity
 * domain (domain.c), and what each value's dims are in terms of them.
 *
 * Every dim of every value is a linear form over variables: the input dims
 * (one per dim of each graph input, at the graph's own ranks), free
 * variables (the sizes of a rule target's split that the matcher takes from
 * the source outputs it replaces, and of a rule source's split that cuts
 * freely, cut as the model's is (xf_rule_split_cuts_freely); a
 * generator's, pinned today: see rule_generator), and an opaque variable for a
 * dim that is not linear in the inputs (a strided window's output size),
 * which remembers the input dims it depends on. Forms carry a common
 * denominator (the halves of a split are in/2). Each operator's rule
 * (node_rule, one case per operator) sets its outputs' forms and states
 * its conditions: forms equal (matmul's inner dims, the other axes of a
 * concat, element-wise operands where they are equal in the graph), a dim
 * that the graph broadcasts stays 1, a form >= 0 (a window fits), a form
 * divisible (a split into halves).
 *
 * Sound by construction where a rule is missing or a form cannot be
 * linear: pinning. A condition naming an opaque variable, a form with more
 * than XF_DOMAIN_MAX_TERMS terms, an overflow, an operator without a rule
 * here (gather, pad, a reshape of no kind the rules match... : the fallback
 * pins every dim of its inputs) all pin the input dims involved to their own sizes, where
 * the graph was built, so the domain is narrower but never wrong. An
 * operator's rule is also checked against the graph's own shapes (every
 * output form evaluates to the inferred dim there); a rule that disagrees
 * is a bug, and the node falls back to pinning.
 *
 * Adding an operator's symbolic rule (an engineer adding squeeze, flatten,
 * a head reshape or a slice to the vocabulary): a case in node_rule that
 * sets D(c, out, d) for each output dim and states the conditions with
 * cond_eq / cond_one / cond_ge / cond_mod; new kinds of condition go in
 * domain.c (its top comment says where).
 *
 * At the end the free variables are eliminated (an equality with a unit
 * coefficient substitutes them away, or one with another coefficient c, the
 * other conditions scaled by it and the equality kept as "the rest is a
 * multiple of c" (the size is whole); otherwise they are pinned to their own
 * size) and the conditions, now over input dims alone, become the domain's.
 */
#include "op_internal.h"

#include <string.h>

#define T XF_DOMAIN_MAX_TERMS
#define MAX_IN_VARS 128

enum { V_INPUT = 0, V_FREE = 1, V_OPAQUE = 2 };

typedef struct var {
    int kind;
    int64_t own;              /* its size in the graph as built */
    xf_dim_ref dim;           /* V_INPUT */
    uint64_t deps[MAX_IN_VARS / 64]; /* V_OPAQUE: the input dims it depends on */
    int pinned;
} var;

/* (sum coef[i] * var[i] + c) / den, den >= 1. */
typedef xf_dim_form lin;

/* A condition on a form's numerator. */
typedef xf_dim_cond iatom;

/* An opaque window output already made: the same function of the same
 * form is the same variable (a strided conv of x on both sides of a rule
 * has one output size, whatever it is). */
typedef struct opaque_memo {
    lin in;
    int64_t k, s, dil, p0, p1;
    int ceil_mode, var;
} opaque_memo;

typedef struct eng {
    int pin_generators; /* generators at their own size (rule_generator) */
    int soft;           /* conditions made now are broadcast ties (xf_dim_cond) */
    opaque_memo *memo;
    int n_memo, cap_memo;
    int n_inputs, n_in_vars;
    int *base; /* first variable of each graph input */
    var *v;
    int nv, capv;
    iatom *a;
    int na, capa;
    xf_status st;
    xf_error *err;
} eng;

static int new_var(eng *E, int kind, int64_t own)
{
    if (E->st != XF_OK) return 0;
    if (E->nv == E->capv) {
        int cap = E->capv ? 2 * E->capv : 64;
        var *p = xf_realloc(E->v, sizeof *p * (size_t)cap);
        if (!p) {
            E->st = XF_FAIL(E->err, XF_ERR_NOMEM, "out of memory inferring a validity domain");
            return 0;
        }
        E->v = p;
        E->capv = cap;
    }
    var *x = &E->v[E->nv];
    memset(x, 0, sizeof *x);
    x->kind = kind;
    x->own = own;
    return E->nv++;
}

static void push_atom(eng *E, int kind, const lin *l, int64_t m)
{
    if (E->st != XF_OK) return;
    if (E->na == E->capa) {
        int cap = E->capa ? 2 * E->capa : 32;
        iatom *p = xf_realloc(E->a, sizeof *p * (size_t)cap);
        if (!p) {
            E->st = XF_FAIL(E->err, XF_ERR_NOMEM, "out of memory inferring a validity domain");
            return;
        }
        E->a = p;
        E->capa = cap;
    }
    E->a[E->na].kind = kind;
    E->a[E->na].l = *l;
    E->a[E->na].m = m;
    E->a[E->na].soft = E->soft;
    E->na++;
}

/* ---------------------------------------------------------- linear forms */

static lin lin_const(int64_t k)
{
    lin l;
    memset(&l, 0, sizeof l);
    l.c = k;
    l.den = 1;
    return l;
}

static lin lin_var(int v)
{
    lin l = lin_const(0);
    l.n = 1;
    l.var[0] = v;
    l.coef[0] = 1;
    return l;
}

/* r = a + k * b; 0, or -1 when it overflows or needs more than T terms. */
static int lin_axpy(const lin *a, int64_t k, const lin *b, lin *r)
{
    int64_t g = a->den, h = b->den, x = g, y = h;
    while (y) { /* gcd, for the common denominator */
        int64_t t = x % y;
        x = y;
        y = t;
    }
    int64_t den, fa = h / x, fb = g / x; /* a * fa, b * fb over den */
    if (__builtin_mul_overflow(g, fa, &den) || __builtin_mul_overflow(k, fb, &fb)) return -1;
    lin o = lin_const(0);
    o.den = den;
    if (__builtin_mul_overflow(a->c, fa, &o.c)) return -1;
    int64_t t;
    if (__builtin_mul_overflow(b->c, fb, &t) || __builtin_add_overflow(o.c, t, &o.c)) return -1;
    for (int s = 0; s < 2; s++) {
        const lin *p = s ? b : a;
        int64_t f = s ? fb : fa;
        for (int i = 0; i < p->n; i++) {
            int64_t c;
            if (__builtin_mul_overflow(p->coef[i], f, &c)) return -1;
            int j = 0;
            while (j < o.n && o.var[j] != p->var[i]) j++;
            if (j == o.n) {
                if (o.n == T) return -1;
                o.var[o.n] = p->var[i];
                o.coef[o.n++] = 0;
            }
            if (__builtin_add_overflow(o.coef[j], c, &o.coef[j])) return -1;
        }
    }
    int m = 0;
    for (int i = 0; i < o.n; i++)
        if (o.coef[i]) o.var[m] = o.var[i], o.coef[m++] = o.coef[i];
    o.n = m;
    *r = o;
    return 0;
}

/* The same form, term for term. */
static int lin_equal(const lin *a, const lin *b)
{
    if (a->n != b->n || a->c != b->c || a->den != b->den) return 0;
    for (int i = 0; i < a->n; i++)
        if (a->var[i] != b->var[i] || a->coef[i] != b->coef[i]) return 0;
    return 1;
}

/* The form's value where the graph was built (its own sizes). */
static int64_t lin_own(const eng *E, const lin *l)
{
    int64_t s = l->c;
    for (int i = 0; i < l->n; i++) s += l->coef[i] * E->v[l->var[i]].own;
    return s / l->den;
}

/* ---------------------------------------------------------------- pinning */

static void pin_var(eng *E, int v)
{
    var *x = &E->v[v];
    if (x->pinned) return;
    x->pinned = 1;
    if (x->kind == V_OPAQUE) {
        uint64_t deps[MAX_IN_VARS / 64];
        memcpy(deps, x->deps, sizeof deps); /* E->v may move */
        for (int i = 0; i < E->n_in_vars; i++)
            if (deps[i / 64] >> (i % 64) & 1) pin_var(E, i);
        return;
    }
    lin l = lin_var(v);
    l.c = -E->v[v].own;
    push_atom(E, XF_DOM_EQ, &l, 0);
}

/* Pins every variable of l; returns its own value. */
static int64_t pin_lin(eng *E, const lin *l)
{
    for (int i = 0; i < l->n; i++) pin_var(E, l->var[i]);
    return lin_own(E, l);
}

/* The dims an opaque form depends on: its input dims and those of its
 * opaque variables; a free variable in it is pinned. */
static void deps_of(eng *E, const lin *l, uint64_t *deps)
{
    for (int i = 0; i < l->n; i++) {
        const var *x = &E->v[l->var[i]];
        if (x->kind == V_INPUT) deps[l->var[i] / 64] |= 1ull << (l->var[i] % 64);
        else if (x->kind == V_OPAQUE)
            for (int w = 0; w < MAX_IN_VARS / 64; w++) deps[w] |= x->deps[w];
        else pin_var(E, l->var[i]);
    }
}

/* A dim that is some function of the forms in[0..n) other than a linear
 * one, whose value in the graph is own. */
static lin opaque_of(eng *E, const lin *in, int n, int64_t own)
{
    int v = new_var(E, V_OPAQUE, own);
    if (E->st != XF_OK) return lin_const(own);
    uint64_t deps[MAX_IN_VARS / 64] = {0};
    for (int i = 0; i < n; i++) deps_of(E, &in[i], deps);
    memcpy(E->v[v].deps, deps, sizeof deps);
    return lin_var(v);
}

/* ------------------------------------------------------------- conditions */

/* States `l kind 0` (modulo m); opaque variables in it are pinned. */
static void cond(eng *E, int kind, const lin *l, int64_t m)
{
    lin x = *l;
    int k = 0;
    for (int i = 0; i < x.n; i++) {
        if (E->v[x.var[i]].kind == V_OPAQUE) {
            pin_var(E, x.var[i]);
            x.c += x.coef[i] * E->v[x.var[i]].own;
        } else {
            x.var[k] = x.var[i], x.coef[k++] = x.coef[i];
        }
    }
    x.n = k;
    if (kind == XF_DOM_MOD) m *= x.den;
    x.den = 1;
    push_atom(E, kind, &x, m);
}

static void cond_eq(eng *E, const lin *a, const lin *b)
{
    lin d;
    if (lin_axpy(a, -1, b, &d) < 0) { /* too wide: both at their own sizes */
        pin_lin(E, a);
        pin_lin(E, b);
        return;
    }
    cond(E, XF_DOM_EQ, &d, 0);
}

static void cond_one(eng *E, const lin *a)
{
    lin one = lin_const(1);
    cond_eq(E, a, &one);
}

/* a >= k */
static void cond_ge(eng *E, const lin *a, int64_t k)
{
    lin d, kk = lin_const(k);
    if (lin_axpy(a, -1, &kk, &d) < 0) {
        pin_lin(E, a);
        return;
    }
    cond(E, XF_DOM_GE, &d, 0);
}

/* a == 0 modulo m */
static void cond_mod(eng *E, const lin *a, int64_t m)
{
    cond(E, XF_DOM_MOD, a, m);
}

/* ------------------------------------------------------ operator rules */

/* One node being inferred: the forms of every value of the graph. */
typedef struct gctx {
    eng *E;
    const xf_graph *g;
    lin *dims;
    int *off;   /* first form of each value */
    const xf_rule *rule; /* g is side `side` of rule (0 source, 1 target), or NULL */
    int side;
} gctx;

static lin *D(gctx *c, int v, int d)
{
    return &c->dims[c->off[v] + d];
}

static int R(const gctx *c, int v)
{
    return c->g->values[v].shape.rank;
}

static int64_t OWN(const gctx *c, int v, int d)
{
    return c->g->values[v].shape.dims[d];
}

/* Every dim of every input at its own size, the outputs constants: the
 * rule for an operator this file has none for. */
static void pin_node(gctx *c, const xf_node *nd)
{
    for (int i = 0; i < nd->n_inputs; i++) {
        int v = nd->inputs[i];
        if (v < 0) continue;
        for (int d = 0; d < R(c, v); d++) pin_lin(c->E, D(c, v, d));
    }
    for (int o = 0; o < nd->n_outputs; o++) {
        int v = nd->outputs[o];
        for (int d = 0; d < R(c, v); d++) *D(c, v, d) = lin_const(OWN(c, v, d));
    }
}

/* Output o has the shape of input i. */
static int copy_shape(gctx *c, const xf_node *nd, int i, int o)
{
    int x = nd->inputs[i], y = nd->outputs[o];
    if (R(c, x) != R(c, y)) return 0;
    for (int d = 0; d < R(c, y); d++) *D(c, y, d) = *D(c, x, d);
    return 1;
}

/* numpy broadcasting of values vals[0..n) (each taken over its first
 * lead[k] dims, aligned at their ends) into the first out_lead dims of y:
 * where they are equal in the graph they stay equal, where the graph
 * broadcasts a 1 it stays 1. */
static void broadcast(gctx *c, const int *vals, const int *lead, int n, int y, int out_lead)
{
    c->E->soft = 1;
    for (int j = 0; j < out_lead; j++) {
        int64_t big = 1;
        for (int k = 0; k < n; k++) {
            int d = lead[k] - out_lead + j;
            if (d >= 0 && OWN(c, vals[k], d) > big) big = OWN(c, vals[k], d);
        }
        const lin *rep = NULL;
        for (int k = 0; k < n; k++) {
            int d = lead[k] - out_lead + j;
            if (d < 0) continue;
            const lin *l = D(c, vals[k], d);
            if (OWN(c, vals[k], d) != big) cond_one(c->E, l);
            else if (!rep) rep = l;
            else cond_eq(c->E, rep, l);
        }
        *D(c, y, j) = rep ? *rep : lin_const(1);
    }
    c->E->soft = 0;
}

/* Parameter p (broadcasting one way) against the last dims of x from
 * `from` on: equal where equal in the graph, else 1. */
static void unidirectional(gctx *c, int p, int x, int from)
{
    int tail = R(c, x) - from;
    c->E->soft = 1;
    for (int i = 1; i <= R(c, p) && i <= tail; i++) {
        int dp = R(c, p) - i, dx = R(c, x) - i;
        if (OWN(c, p, dp) == OWN(c, x, dx)) cond_eq(c->E, D(c, p, dp), D(c, x, dx));
        else cond_one(c->E, D(c, p, dp));
    }
    c->E->soft = 0;
}

static int64_t or_one(int64_t v)
{
    return v == 0 ? 1 : v;
}

/* Output size of a window along one dim: in + p0 + p1 - span >= 0, then
 * (in + p0 + p1 - span) / stride + 1; linear for stride 1 without ceil
 * mode, else opaque. */
static lin window(gctx *c, const lin *in, int64_t k, int64_t s, int64_t dil, int64_t p0,
                  int64_t p1, int ceil_mode, int64_t own_out)
{
    lin avail = *in, off = lin_const(p0 + p1 - ((k - 1) * dil + 1));
    if (lin_axpy(in, 1, &off, &avail) < 0) {
        pin_lin(c->E, in);
        return lin_const(own_out);
    }
    cond_ge(c->E, &avail, 0);
    if (s == 1 && !ceil_mode) {
        lin one = lin_const(1), out;
        if (lin_axpy(&avail, 1, &one, &out) == 0) return out;
    }
    eng *E = c->E;
    opaque_memo key = {*in, k, s, dil, p0, p1, ceil_mode, 0};
    for (int i = 0; i < E->n_memo; i++) {
        const opaque_memo *m = &E->memo[i];
        if (lin_equal(&m->in, in) && m->k == k && m->s == s && m->dil == dil && m->p0 == p0 &&
            m->p1 == p1 && m->ceil_mode == ceil_mode)
            return lin_var(m->var);
    }
    lin out = opaque_of(E, in, 1, own_out);
    if (E->st != XF_OK || out.n != 1) return out;
    if (E->n_memo == E->cap_memo) {
        int cap = E->cap_memo ? 2 * E->cap_memo : 8;
        opaque_memo *p = xf_realloc(E->memo, sizeof *p * (size_t)cap);
        if (!p) {
            E->st = XF_FAIL(E->err, XF_ERR_NOMEM, "out of memory inferring a validity domain");
            return out;
        }
        E->memo = p;
        E->cap_memo = cap;
    }
    key.var = out.var[0];
    E->memo[E->n_memo++] = key;
    return out;
}

static void rule_conv(gctx *c, const xf_node *nd)
{
    const xf_params *p = &nd->params;
    int x = nd->inputs[0], w = nd->inputs[1], y = nd->outputs[0];
    int64_t g = or_one(p->group), cin = OWN(c, x, 1);
    *D(c, y, 0) = *D(c, x, 0);
    *D(c, y, 1) = *D(c, w, 0);
    lin kh = lin_const(p->kernel[0]), kw = lin_const(p->kernel[1]);
    cond_eq(c->E, D(c, w, 2), &kh);
    cond_eq(c->E, D(c, w, 3), &kw);
    if (g == 1) {
        cond_eq(c->E, D(c, x, 1), D(c, w, 1));
    } else if (g == cin) { /* depthwise: the group follows the channels */
        cond_one(c->E, D(c, w, 1));
        lin mult; /* output channels: the graph's multiple of the channels */
        if (lin_axpy(D(c, w, 0), -(OWN(c, w, 0) / cin), D(c, x, 1), &mult) == 0)
            cond(c->E, XF_DOM_EQ, &mult, 0);
        else pin_lin(c->E, D(c, w, 0)), pin_lin(c->E, D(c, x, 1));
    } else { /* a fixed group: channels g * per-group, outputs divisible */
        lin ch;
        if (lin_axpy(D(c, x, 1), -g, D(c, w, 1), &ch) == 0) cond(c->E, XF_DOM_EQ, &ch, 0);
        else pin_lin(c->E, D(c, x, 1)), pin_lin(c->E, D(c, w, 1));
        cond_mod(c->E, D(c, w, 0), g);
    }
    if (nd->n_inputs > 2 && nd->inputs[2] >= 0) cond_eq(c->E, D(c, nd->inputs[2], 0), D(c, w, 0));
    for (int i = 0; i < 2; i++)
        *D(c, y, 2 + i) = window(c, D(c, x, 2 + i), p->kernel[i], or_one(p->stride[i]),
                                 or_one(p->dilation[i]), p->pads[i], p->pads[i + 2], 0,
                                 OWN(c, y, 2 + i));
}

static void rule_pool(gctx *c, const xf_node *nd)
{
    const xf_params *p = &nd->params;
    int x = nd->inputs[0], y = nd->outputs[0];
    *D(c, y, 0) = *D(c, x, 0);
    *D(c, y, 1) = *D(c, x, 1);
    for (int i = 0; i < 2; i++)
        *D(c, y, 2 + i) = window(c, D(c, x, 2 + i), p->kernel[i], or_one(p->stride[i]),
                                 or_one(p->dilation[i]), p->pads[i], p->pads[i + 2],
                                 p->ceil_mode, OWN(c, y, 2 + i));
}

static void rule_matmul(gctx *c, const xf_node *nd)
{
    int x = nd->inputs[0], w = nd->inputs[1], y = nd->outputs[0];
    int rx = R(c, x), rw = R(c, w), ry = R(c, y);
    cond_eq(c->E, D(c, x, rx - 1), D(c, w, rw - 2));
    *D(c, y, ry - 2) = *D(c, x, rx - 2);
    *D(c, y, ry - 1) = *D(c, w, rw - 1);
    int vals[2] = {x, w}, lead[2] = {rx - 2, rw - 2};
    broadcast(c, vals, lead, 2, y, ry - 2);
}

static void rule_concat(gctx *c, const xf_node *nd)
{
    int y = nd->outputs[0], x0 = nd->inputs[0], r = R(c, y);
    int a = xf_norm_axis(nd->params.axis, r);
    for (int d = 0; d < r; d++) {
        if (d != a) {
            *D(c, y, d) = *D(c, x0, d);
            for (int i = 1; i < nd->n_inputs; i++) cond_eq(c->E, D(c, x0, d), D(c, nd->inputs[i], d));
            continue;
        }
        lin s = *D(c, x0, d);
        for (int i = 1; i < nd->n_inputs; i++)
            if (lin_axpy(&s, 1, D(c, nd->inputs[i], d), &s) < 0) {
                for (int k = 0; k < nd->n_inputs; k++) pin_lin(c->E, D(c, nd->inputs[k], d));
                s = lin_const(OWN(c, y, d));
                break;
            }
        *D(c, y, d) = s;
    }
}

/* 1 when every output of nd is an output of the graph. */
static int outputs_mapped(const gctx *c, const xf_node *nd)
{
    for (int o = 0; o < nd->n_outputs; o++) {
        int hit = 0;
        for (int k = 0; k < c->g->n_outputs && !hit; k++) hit = c->g->outputs[k] == nd->outputs[o];
        if (!hit) return 0;
    }
    return 1;
}

/* Whether split nd's sizes are free, adding up to its axis: in a rule's
 * target when its outputs are all rule outputs (sized from the source
 * outputs they replace: the matcher's instantiation, the bounded check's
 * params_at); in a rule's source when it cuts freely
 * (xf_rule_split_cuts_freely: the matcher takes the model's cut, and
 * verify/bounded_shapes.c checks it at unequal cuts too). Any other split
 * is k equal parts of its axis, or the rule's own sizes. */
static int split_sizes_free(const gctx *c, const xf_node *nd)
{
    if (!c->rule) return 0;
    if (c->side == 0) return xf_rule_split_cuts_freely(c->rule, (int)(nd - c->g->nodes));
    return outputs_mapped(c, nd);
}

static void rule_split(gctx *c, const xf_node *nd)
{
    const xf_params *p = &nd->params;
    int x = nd->inputs[0], r = R(c, x), a = xf_norm_axis(p->axis, r);
    int64_t n = OWN(c, x, a);
    const lin *in = D(c, x, a);
    if (split_sizes_free(c, nd)) {
        lin sum = lin_const(0);
        int wide = 0;
        for (int o = 0; o < nd->n_outputs; o++) {
            int y = nd->outputs[o];
            for (int d = 0; d < r; d++) *D(c, y, d) = *D(c, x, d);
            lin f = lin_var(new_var(c->E, V_FREE, OWN(c, y, a)));
            *D(c, y, a) = f;
            wide |= lin_axpy(&sum, 1, &f, &sum) < 0;
        }
        if (!wide) cond_eq(c->E, in, &sum);
        else pin_node(c, nd);
        return;
    }
    int parts = xf_split_equal_parts(p, n);
    if (parts) { /* the sizes follow the axis (the matcher re-derives them) */
        cond_mod(c->E, in, parts);
        cond_ge(c->E, in, parts);
    } else {
        lin total = lin_const(n);
        cond_eq(c->E, in, &total);
    }
    for (int o = 0; o < nd->n_outputs; o++) {
        int y = nd->outputs[o];
        for (int d = 0; d < r; d++) *D(c, y, d) = *D(c, x, d);
        lin h = *in;
        h.den *= parts ? parts : 1;
        *D(c, y, a) = parts ? h : lin_const(p->split[o]);
    }
}

/* A reduce keeps the dims it does not reduce (xf_reduce_axes: no axes is
 * every axis). 0 when the axes do not fit the rank. */
static int rule_reduce(gctx *c, const xf_node *nd)
{
    const xf_params *p = &nd->params;
    int x = nd->inputs[0], y = nd->outputs[0], r = R(c, x);
    int red[XF_MAX_DIMS];
    if (xf_reduce_axes(p, r, red) < 0) return 0;
    int k = 0;
    for (int d = 0; d < r; d++) {
        if (!red[d]) *D(c, y, k++) = *D(c, x, d);
        else if (p->keepdims) *D(c, y, k++) = lin_const(1);
    }
    return 1;
}

/* 0 when the permutation does not fit the rank. */
static int rule_transpose(gctx *c, const xf_node *nd)
{
    int x = nd->inputs[0], y = nd->outputs[0], r = R(c, x), perm[XF_MAX_DIMS];
    if (xf_transpose_perm(&nd->params, r, perm) != 0) return 0;
    for (int d = 0; d < r; d++) *D(c, y, d) = *D(c, x, perm[d]);
    return 1;
}

/* A squeeze keeps the other dims and asks each squeezed one be 1; an
 * unsqueeze puts 1s at its axes. 0 when the axes do not fit the ranks. */
static int rule_squeeze(gctx *c, const xf_node *nd)
{
    const xf_params *p = &nd->params;
    int x = nd->inputs[0], y = nd->outputs[0], sq = nd->op == XF_OP_SQUEEZE;
    int rx = R(c, x), ry = R(c, y), at[XF_MAX_DIMS] = {0};
    if (p->n_axes < 1 || rx - ry != (sq ? p->n_axes : -p->n_axes)) return 0;
    for (int i = 0; i < p->n_axes; i++) {
        int a = xf_norm_axis(p->axes[i], sq ? rx : ry);
        if (a < 0 || at[a]) return 0;
        at[a] = 1;
    }
    for (int i = 0, k = 0; i < (sq ? rx : ry); i++) {
        if (!at[i]) {
            if (sq) *D(c, y, k++) = *D(c, x, i);
            else *D(c, y, i) = *D(c, x, k++);
        } else if (sq) {
            cond_one(c->E, D(c, x, i));
        } else {
            *D(c, y, i) = lin_const(1);
        }
    }
    return 1;
}

static void rule_enlarge(gctx *c, const xf_node *nd)
{
    int w = nd->inputs[0], y = nd->outputs[0];
    *D(c, y, 0) = *D(c, w, 0);
    *D(c, y, 1) = *D(c, w, 1);
    for (int i = 0; i < 2; i++) {
        lin to = lin_const(nd->params.kernel[i]), gap;
        *D(c, y, 2 + i) = to;
        if (lin_axpy(&to, -1, D(c, w, 2 + i), &gap) < 0) {
            pin_lin(c->E, D(c, w, 2 + i));
            continue;
        }
        cond_ge(c->E, &gap, 0);
        cond_mod(c->E, &gap, 2);
    }
}

/* A generator (const_ones, const_imatrix, const_iconv, const_pool): the
 * matcher sizes it from its consumer, and so does the bounded check
 * (verify/bounded_shapes.c), so its dims are free variables, with the ties
 * of its shape: square for an identity, the window of a kernel kept, a
 * pooling kernel's one channel. With E->pin_generators (a proof by the own
 * shapes, which holds at the generators' own sizes) they are pinned. */
static void rule_generator(gctx *c, const xf_node *nd)
{
    int y = nd->outputs[0], r = R(c, y);
    for (int d = 0; d < r; d++) {
        int v = new_var(c->E, V_FREE, OWN(c, y, d));
        *D(c, y, d) = lin_var(v);
        if (c->E->pin_generators) pin_var(c->E, v);
    }
    if ((nd->op == XF_OP_CONST_IDENTITY_MATRIX || nd->op == XF_OP_CONST_IDENTITY_CONV) && r >= 2)
        cond_eq(c->E, D(c, y, 0), D(c, y, 1));
    if ((nd->op == XF_OP_CONST_IDENTITY_CONV || nd->op == XF_OP_CONST_POOL) && r == 4)
        for (int d = 2; d < 4; d++) pin_lin(c->E, D(c, y, d));
    if (nd->op == XF_OP_CONST_POOL && r == 4) cond_one(c->E, D(c, y, 1));
}

/* The product of forms f[0..n): linear when at most one of them is not a
 * constant, else a free variable of the product's own size (a reshape's
 * size, which the matcher binds from the rule's symbolic dims). */
static lin product(gctx *c, const lin *f, int n, int64_t own)
{
    int64_t k = 1;
    const lin *var_part = NULL;
    for (int i = 0; i < n; i++) {
        if (f[i].n == 0 && f[i].den == 1) {
            if (__builtin_mul_overflow(k, f[i].c, &k)) return lin_var(new_var(c->E, V_FREE, own));
        } else if (!var_part) {
            var_part = &f[i];
        } else {
            return lin_var(new_var(c->E, V_FREE, own));
        }
    }
    if (!var_part) return lin_const(k);
    lin zero = lin_const(0), out;
    if (lin_axpy(&zero, k, var_part, &out) < 0) return lin_var(new_var(c->E, V_FREE, own));
    return out;
}

/* A reshape of a kind rules match (xf_view_classify): the dims it keeps stay
 * the input's, the sizes it makes are products (linear when only one factor
 * varies) or free variables, which the matcher binds at the match through
 * the rule's symbolic dims (ir/rule_dims.c: the agreement of every value
 * with them is the reshape's part of where the rule holds). A reshape of
 * another kind keeps its exact target: its inputs are pinned. */
static int rule_reshape(gctx *c, const xf_node *nd)
{
    int x = nd->inputs[0], y = nd->outputs[0], rx = R(c, x), ry = R(c, y), k;
    xf_view_kind kind = xf_view_classify(&c->g->values[x].shape, &c->g->values[y].shape, &k);
    switch (kind) {
    case XF_VIEW_FLATTEN:
        *D(c, y, 0) = product(c, D(c, x, 0), k, OWN(c, y, 0));
        for (int d = 1; d < ry; d++) *D(c, y, d) = *D(c, x, k + d - 1);
        return 1;
    case XF_VIEW_UNFLATTEN:
        for (int d = 0; d < k; d++) *D(c, y, d) = lin_var(new_var(c->E, V_FREE, OWN(c, y, d)));
        for (int d = k; d < ry; d++) *D(c, y, d) = *D(c, x, d - k + 1);
        return 1;
    case XF_VIEW_SPLIT_LAST:
        for (int d = 0; d < rx - 1; d++) *D(c, y, d) = *D(c, x, d);
        for (int d = rx - 1; d < ry; d++) *D(c, y, d) = lin_var(new_var(c->E, V_FREE, OWN(c, y, d)));
        return 1;
    case XF_VIEW_MERGE_LAST:
        for (int d = 0; d < ry - 1; d++) *D(c, y, d) = *D(c, x, d);
        *D(c, y, ry - 1) = product(c, D(c, x, rx - 2), 2, OWN(c, y, ry - 1));
        return 1;
    default:
        return 0;
    }
}

/* A slice keeps the axes it does not cut; a cut axis has the slice's size
 * and must hold its end. */
static int rule_slice(gctx *c, const xf_node *nd)
{
    const xf_params *p = &nd->params;
    int x = nd->inputs[0], y = nd->outputs[0], r = R(c, x);
    if (R(c, y) != r) return 0;
    for (int d = 0; d < r; d++) *D(c, y, d) = *D(c, x, d);
    for (int i = 0; i < p->n_axes; i++) {
        int a = xf_norm_axis(p->axes[i], r);
        int64_t own = OWN(c, x, a);
        if (a < 0 || p->starts[i] < 0 || p->ends[i] < 0 || (p->steps[i] != 1 && p->steps[i] != 0))
            return 0;
        /* the whole axis at every size only when it ends past any size; an
         * end that is the own size is a constant [s, e) elsewhere (slice[0:1]
         * of an axis of 1 takes one element of an axis of 3) */
        if (p->starts[i] == 0 && p->ends[i] >= XF_SLICE_TO_THE_END) continue;
        if (p->ends[i] > own) return 0;
        *D(c, y, a) = lin_const(OWN(c, y, a));
        cond_ge(c->E, D(c, x, a), p->ends[i]);
    }
    return 1;
}

/* States the node's conditions and sets its outputs' forms; 0 when this
 * file has no rule for it (the caller pins). */
static int node_rule(gctx *c, const xf_node *nd)
{
    for (int i = 0; i < nd->n_inputs; i++)
        if (nd->inputs[i] < 0 && !(nd->op == XF_OP_CONV && i == 2)) return 0;
    int x = nd->n_inputs > 0 ? nd->inputs[0] : -1;
    if (ir_op_keeps_shape(nd->op)) {
        for (int o = 0; o < nd->n_outputs; o++)
            if (!copy_shape(c, nd, 0, o)) return 0;
        return 1;
    }
    /* the other element-wise operators (ir's classes) broadcast, but for
     * scalar_mul's scalar and prelu's slope */
    if (xf_op_is(nd->op, XF_OPC_ELEMENTWISE) && xf_op_get(nd->op)->min_inputs > 1 &&
        nd->op != XF_OP_SCALAR_MUL && nd->op != XF_OP_PRELU) {
        int lead[3];
        for (int i = 0; i < nd->n_inputs; i++) lead[i] = R(c, nd->inputs[i]);
        broadcast(c, nd->inputs, lead, nd->n_inputs, nd->outputs[0], R(c, nd->outputs[0]));
        return 1;
    }
    switch (nd->op) {
    case XF_OP_SCALAR_MUL:
        return R(c, nd->inputs[1]) == 0 && copy_shape(c, nd, 0, 0);
    case XF_OP_PRELU:
        if (!copy_shape(c, nd, 0, 0)) return 0;
        unidirectional(c, nd->inputs[1], x, 0);
        return 1;
    case XF_OP_LAYERNORM: {
        int a = xf_norm_axis(nd->params.axis, R(c, x));
        if (a < 0 || !copy_shape(c, nd, 0, 0)) return 0;
        for (int i = 1; i < nd->n_inputs; i++) unidirectional(c, nd->inputs[i], x, a);
        return 1;
    }
    case XF_OP_BATCHNORM:
        if (R(c, x) < 2 || !copy_shape(c, nd, 0, 0)) return 0;
        for (int i = 1; i < nd->n_inputs; i++) {
            if (R(c, nd->inputs[i]) != 1) return 0;
            cond_eq(c->E, D(c, nd->inputs[i], 0), D(c, x, 1));
        }
        return 1;
    case XF_OP_MATMUL:
        if (R(c, x) < 2 || R(c, nd->inputs[1]) < 2) return 0;
        rule_matmul(c, nd);
        return 1;
    case XF_OP_CONV:
        if (R(c, x) != 4 || R(c, nd->inputs[1]) != 4) return 0;
        rule_conv(c, nd);
        return 1;
    case XF_OP_MAXPOOL: case XF_OP_AVGPOOL:
        if (R(c, x) != 4) return 0;
        rule_pool(c, nd);
        return 1;
    case XF_OP_GLOBAL_AVGPOOL:
        if (R(c, x) != 4) return 0;
        *D(c, nd->outputs[0], 0) = *D(c, x, 0);
        *D(c, nd->outputs[0], 1) = *D(c, x, 1);
        *D(c, nd->outputs[0], 2) = *D(c, nd->outputs[0], 3) = lin_const(1);
        return 1;
    case XF_OP_REDUCE_MEAN: case XF_OP_REDUCE_SUM: case XF_OP_REDUCE_MAX:
        return rule_reduce(c, nd);
    case XF_OP_CONCAT:
        for (int i = 0; i < nd->n_inputs; i++)
            if (R(c, nd->inputs[i]) != R(c, nd->outputs[0])) return 0;
        rule_concat(c, nd);
        return 1;
    case XF_OP_SPLIT:
        if (xf_norm_axis(nd->params.axis, R(c, x)) < 0) return 0;
        rule_split(c, nd);
        return 1;
    case XF_OP_TRANSPOSE:
        return rule_transpose(c, nd);
    case XF_OP_ENLARGE:
        if (R(c, x) != 4) return 0;
        rule_enlarge(c, nd);
        return 1;
    case XF_OP_CONST_IDENTITY_CONV: case XF_OP_CONST_IDENTITY_MATRIX: case XF_OP_CONST_ONES:
    case XF_OP_CONST_POOL:
        rule_generator(c, nd);
        return 1;
    case XF_OP_RESHAPE:
        return rule_reshape(c, nd);
    case XF_OP_SQUEEZE:
    case XF_OP_UNSQUEEZE:
        return rule_squeeze(c, nd);
    case XF_OP_SLICE:
        return rule_slice(c, nd);
    default: return 0; /* gather, pad, a reshape of no rule kind...: pinned */
    }
}

/* Every output form of nd evaluates to the graph's dim. */
static int agrees(gctx *c, const xf_node *nd)
{
    for (int o = 0; o < nd->n_outputs; o++) {
        int y = nd->outputs[o];
        for (int d = 0; d < R(c, y); d++)
            if (D(c, y, d)->den < 1 || lin_own(c->E, D(c, y, d)) != OWN(c, y, d)) return 0;
    }
    return 1;
}

/* The forms of every value of g (whose inputs are E's, at their own
 * shapes), with its operators' conditions stated. *dims and *off are the
 * caller's (xf_free). */
static xf_status infer_graph(eng *E, const xf_graph *g, const xf_rule *rule, int side, lin **dims,
                             int **off)
{
    int total = 0;
    *dims = NULL;
    *off = xf_malloc(sizeof **off * ((size_t)g->n_values + 1));
    int *order = xf_malloc(sizeof *order * ((size_t)g->n_nodes + 1));
    if (!*off || !order) {
        xf_free(order);
        return XF_FAIL(E->err, XF_ERR_NOMEM, "out of memory inferring a validity domain");
    }
    for (int v = 0; v < g->n_values; v++) (*off)[v] = total, total += g->values[v].shape.rank;
    *dims = xf_malloc(sizeof **dims * ((size_t)total + 1));
    xf_status st = *dims ? xf_graph_topo_order(g, order, E->err)
                         : XF_FAIL(E->err, XF_ERR_NOMEM, "out of memory inferring a validity domain");
    if (st != XF_OK) {
        xf_free(order);
        return st;
    }
    gctx c = {E, g, *dims, *off, rule, side};
    for (int v = 0; v < g->n_values; v++) /* constants (and anything not computed): as built */
        for (int d = 0; d < R(&c, v); d++) *D(&c, v, d) = lin_const(OWN(&c, v, d));
    for (int i = 0; i < g->n_inputs && i < E->n_inputs; i++) {
        int v = g->inputs[i];
        for (int d = 0; d < R(&c, v); d++) *D(&c, v, d) = lin_var(E->base[i] + d);
    }
    uint8_t *pinned = xf_malloc((size_t)E->nv + 1);
    if (!pinned) E->st = XF_FAIL(E->err, XF_ERR_NOMEM, "out of memory inferring a validity domain");
    for (int i = 0; i < g->n_nodes && E->st == XF_OK; i++) {
        const xf_node *nd = &g->nodes[order[i]];
        int na = E->na, nv = E->nv;
        uint8_t *p2 = xf_realloc(pinned, (size_t)nv + 1);
        if (!p2) {
            E->st = XF_FAIL(E->err, XF_ERR_NOMEM, "out of memory inferring a validity domain");
            break;
        }
        pinned = p2;
        for (int v = 0; v < nv; v++) pinned[v] = (uint8_t)E->v[v].pinned;
        if (nd->op == XF_OP_OPAQUE || !node_rule(&c, nd) || !agrees(&c, nd)) {
            /* a rule that does not fit the graph states nothing */
            E->na = na;
            for (int v = 0; v < nv; v++) E->v[v].pinned = pinned[v];
            pin_node(&c, nd);
        }
    }
    xf_free(pinned);
    xf_free(order);
    return E->st;
}

static xf_status eng_init(eng *E, const xf_graph *g, xf_error *err)
{
    memset(E, 0, sizeof *E);
    E->err = err;
    E->n_inputs = g->n_inputs;
    E->base = xf_malloc(sizeof *E->base * ((size_t)g->n_inputs + 1));
    if (!E->base) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory inferring a validity domain");
    for (int i = 0; i < g->n_inputs; i++) {
        const xf_shape *s = &g->values[g->inputs[i]].shape;
        E->base[i] = E->nv;
        for (int d = 0; d < s->rank; d++) {
            if (E->nv >= MAX_IN_VARS || i > INT16_MAX)
                return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                               "validity domain: more than %d input dims", MAX_IN_VARS);
            int v = new_var(E, V_INPUT, s->dims[d]);
            if (E->st != XF_OK) return E->st;
            E->v[v].dim.input = (int16_t)i;
            E->v[v].dim.axis = (int16_t)(d - s->rank);
        }
    }
    E->n_in_vars = E->nv;
    return XF_OK;
}

static void eng_free(eng *E)
{
    xf_free(E->memo);
    xf_free(E->base);
    xf_free(E->v);
    xf_free(E->a);
}

static int coef_of(const lin *l, int v)
{
    for (int i = 0; i < l->n; i++)
        if (l->var[i] == v) return i;
    return -1;
}

/* a * |c| - k * sign(c) * e, which has no term in the variable whose
 * coefficients are k in a and c in e: an equality or inequality a stays
 * one (|c| > 0, and e == 0). 0, or -1 as lin_axpy. */
static int lin_cancel(const lin *a, int64_t k, const lin *e, int64_t c, lin *r)
{
    lin scaled, zero = lin_const(0);
    int64_t ac = c < 0 ? -c : c, kc;
    if (lin_axpy(&zero, ac, a, &scaled) < 0 || __builtin_mul_overflow(k, c < 0 ? 1 : -1, &kc))
        return -1;
    return lin_axpy(&scaled, kc, e, r);
}

/* l == 0 modulo m with each coefficient and the constant reduced modulo m
 * (a multiple of m drops out: 2 x - 3 f == 0 mod 3 is 2 x == 0 mod 3). */
static void lin_mod_reduce(lin *l, int64_t m)
{
    int n = 0;
    for (int i = 0; i < l->n; i++) {
        int64_t c = l->coef[i] % m;
        if (c) l->var[n] = l->var[i], l->coef[n++] = c;
    }
    l->n = n;
    l->c %= m;
}

/* Removes free variable f from every condition: through an equality where
 * it has a unit coefficient, else through one where it has another (the
 * other conditions scaled: three equal parts of a split tie 3 f = x; the
 * equality stays as a modulus, so f is whole), else by pinning it to its
 * own size. */
static void eliminate(eng *E, int f)
{
    int e = -1;
    for (int i = 0; i < E->na && e < 0; i++) {
        int k = coef_of(&E->a[i].l, f);
        if (E->a[i].kind == XF_DOM_EQ && k >= 0 && (E->a[i].l.coef[k] == 1 || E->a[i].l.coef[k] == -1))
            e = i;
    }
    int scale = 0; /* through a non-unit coefficient */
    for (int i = 0; i < E->na && e < 0; i++)
        if (E->a[i].kind == XF_DOM_EQ && E->a[i].l.den == 1 && coef_of(&E->a[i].l, f) >= 0)
            e = i, scale = 1;
    iatom *tmp = e >= 0 ? xf_malloc(sizeof *tmp * ((size_t)E->na + 1)) : NULL;
    if (e >= 0 && !tmp) {
        E->st = XF_FAIL(E->err, XF_ERR_NOMEM, "out of memory inferring a validity domain");
        return;
    }
    int ok = tmp != NULL;
    for (int i = 0; i < E->na && ok; i++) {
        tmp[i] = E->a[i];
        int k = coef_of(&E->a[i].l, f);
        if (i == e || k < 0) continue;
        const lin *el = &E->a[e].l;
        int64_t ce = el->coef[coef_of(el, f)];
        if (scale && E->a[i].kind == XF_DOM_MOD) { /* only a term the modulus drops */
            ok = E->a[i].l.den == 1 && E->a[i].l.coef[k] % E->a[i].m == 0;
            if (ok) lin_mod_reduce(&tmp[i].l, E->a[i].m);
            continue;
        }
        if (scale) { /* a modulus does not survive scaling */
            ok = E->a[i].l.den == 1 &&
                 lin_cancel(&E->a[i].l, E->a[i].l.coef[k], el, ce, &tmp[i].l) == 0;
            continue;
        }
        int64_t s = E->a[i].l.coef[k] * ce; /* unit: its own inverse */
        ok = lin_axpy(&E->a[i].l, -s, el, &tmp[i].l) == 0 && (E->a[i].kind != XF_DOM_MOD ||
                                                               E->a[i].l.den == 1);
    }
    if (ok && scale) { /* c f + rest == 0 has an integer f where |c| divides rest */
        lin *l = &E->a[e].l;
        int k = coef_of(l, f);
        int64_t c = l->coef[k] < 0 ? -l->coef[k] : l->coef[k];
        l->coef[k] = l->coef[--l->n], l->var[k] = l->var[l->n];
        for (int i = 0; i < E->na; i++)
            if (i != e) E->a[i] = tmp[i];
        E->a[e].kind = XF_DOM_MOD; /* c >= 2: a unit coefficient took the other path */
        E->a[e].m = c;
        lin_mod_reduce(&E->a[e].l, c);
    } else if (ok) { /* substituted away; the defining equality goes */
        int n = 0;
        for (int i = 0; i < E->na; i++)
            if (i != e) E->a[n++] = tmp[i];
        E->na = n;
    } else { /* pinned: f is its own size everywhere */
        for (int i = 0; i < E->na; i++) {
            lin *l = &E->a[i].l;
            int k = coef_of(l, f);
            if (k < 0) continue;
            l->c += l->coef[k] * E->v[f].own;
            l->coef[k] = l->coef[--l->n], l->var[k] = l->var[l->n];
        }
    }
    xf_free(tmp);
}

/* The conditions, free variables eliminated, appended to d. */
static xf_status eng_finish(eng *E, xf_domain *d)
{
    for (int f = E->n_in_vars; f < E->nv && E->st == XF_OK; f++)
        if (E->v[f].kind == V_FREE) eliminate(E, f);
    for (int i = 0; i < E->na && E->st == XF_OK; i++) {
        const iatom *ia = &E->a[i];
        xf_dom_atom a;
        memset(&a, 0, sizeof a);
        a.kind = ia->kind;
        a.c = ia->l.c;
        a.m = ia->m;
        for (int k = 0; k < ia->l.n; k++) {
            int v = ia->l.var[k];
            if (v >= E->n_in_vars) { /* cannot be: opaque ones are pinned, free ones gone */
                E->st = XF_FAIL(E->err, XF_ERR_INTERNAL, "validity domain: a variable is left");
                break;
            }
            a.dim[a.n] = E->v[v].dim;
            a.coef[a.n++] = ia->l.coef[k];
        }
        if (E->st == XF_OK) E->st = xf_domain_add(d, &a, E->err);
    }
    return E->st;
}

/* ------------------------------------------------------------------ API */

/* Both sides of r inferred in E (made here; the caller frees it with dims
 * and off, also on failure), their outputs' dims equal. */
static xf_status infer_rule(eng *E, const xf_rule *r, int pin_generators, lin **dims, int **off,
                            xf_error *err)
{
    xf_status st = eng_init(E, &r->src, err);
    E->pin_generators = pin_generators;
    if (st == XF_OK) st = infer_graph(E, &r->src, r, 0, &dims[0], &off[0]);
    if (st == XF_OK) st = infer_graph(E, &r->dst, r, 1, &dims[1], &off[1]);
    for (int o = 0; st == XF_OK && o < r->src.n_outputs && o < r->dst.n_outputs; o++) {
        int a = r->src.outputs[o], b = r->dst.outputs[o];
        int ra = r->src.values[a].shape.rank;
        if (ra != r->dst.values[b].shape.rank) continue; /* the rule does not validate */
        for (int d = 0; d < ra; d++) cond_eq(E, &dims[0][off[0][a] + d], &dims[1][off[1][b] + d]);
        st = E->st;
    }
    return st;
}

static xf_status of_rule(const xf_rule *r, int pin_generators, const xf_rule_dim_size *held,
                         int n_held, xf_domain *out, xf_error *err)
{
    xf_domain_clear(out);
    eng E;
    lin *dims[2] = {NULL, NULL};
    int *off[2] = {NULL, NULL};
    xf_status st = infer_rule(&E, r, pin_generators, dims, off, err);
    for (int i = 0; st == XF_OK && i < n_held; i++) {
        const xf_rule_dim_size *h = &held[i];
        const xf_graph *g = h->side ? &r->dst : &r->src;
        if (h->side < 0 || h->side > 1 || h->value < 0 || h->value >= g->n_values || h->axis < 0 ||
            h->axis >= g->values[h->value].shape.rank) {
            st = XF_FAIL(err, XF_ERR_INVALID, "validity domain: no dim %d of value %d on side %d",
                         h->axis, h->value, h->side);
            break;
        }
        lin size = lin_const(h->size);
        cond_eq(&E, &dims[h->side][off[h->side][h->value] + h->axis], &size);
        st = E.st;
    }
    if (st == XF_OK) st = eng_finish(&E, out);
    if (st == XF_OK) st = xf_domain_normalize(out, err);
    for (int k = 0; k < 2; k++) xf_free(dims[k]), xf_free(off[k]);
    eng_free(&E);
    return st;
}

xf_status xf_domain_of_rule(const xf_rule *r, xf_domain *out, xf_error *err)
{
    return of_rule(r, 0, NULL, 0, out, err);
}

xf_status xf_domain_of_rule_pinned(const xf_rule *r, xf_domain *out, xf_error *err)
{
    return of_rule(r, 1, NULL, 0, out, err);
}

xf_status xf_domain_of_rule_held(const xf_rule *r, const xf_rule_dim_size *held, int n,
                                 xf_domain *out, xf_error *err)
{
    return of_rule(r, 0, held, n, out, err);
}

xf_status xf_domain_add_graph(xf_domain *d, const xf_graph *g, xf_error *err)
{
    return xf_domain_add_mapped(d, g, NULL, err);
}

/* The step's scalar inputs (rank 0) bound in g: each dim of the value
 * bound is 1, as the matcher binds a scalar to one element only. */
static xf_status scalars_bound(eng *E, const xf_graph *g, const xf_domain_step *step,
                               const lin *dims, const int *off)
{
    const xf_graph *src = &step->rule->src;
    for (int k = 0; k < step->n_values && k < src->n_inputs; k++) {
        int v = step->values[k];
        if (v < 0 || v >= g->n_values || src->values[src->inputs[k]].shape.rank != 0) continue;
        for (int ax = 0; ax < g->values[v].shape.rank; ax++) cond_one(E, &dims[off[v] + ax]);
    }
    return E->st;
}

static int to_the_end(const xf_params *p, int i)
{
    return p->ends[i] >= XF_SLICE_TO_THE_END;
}

/* The step's slices bound to g's: where one reads "to the end" and the
 * other a finite end (the matcher binds them where that end is the axis's
 * size: match_slice_ends_agree), the step holds at g's own size of the
 * axis only. mean[-1](x[:, 0:END]) => mean[-1](x) applied to g's
 * x[:, 0:4] of x 2x4 says nothing of x[:, 0:4] of x 2x6, which drops two
 * columns (review 42d, M1); g's x[:, 0:END] read by a step's x[:, 0:4] the
 * same way round. */
static xf_status slice_ends_bound(eng *E, const xf_graph *g, const xf_domain_step *step,
                                  const lin *dims, const int *off)
{
    const xf_graph *side = step->matched;
    for (int k = 0; side && k < side->n_nodes; k++) {
        const xf_node *pn = &side->nodes[k];
        if (pn->op != XF_OP_SLICE) continue;
        int node = step->nodes[k];
        if (node < 0 || node >= g->n_nodes || g->nodes[node].op != XF_OP_SLICE ||
            g->nodes[node].n_inputs < 1 || g->nodes[node].inputs[0] < 0)
            return XF_FAIL(E->err, XF_ERR_INVALID,
                           "validity domain: a step's slice is bound to node %d, no slice", node);
        const xf_node *gn = &g->nodes[node];
        int x = gn->inputs[0], rank = g->values[x].shape.rank;
        for (int i = 0; i < gn->params.n_axes && i < pn->params.n_axes; i++) {
            int a = xf_norm_axis(gn->params.axes[i], rank);
            if (a < 0) continue; /* g's own reading pins what it cannot name */
            if (to_the_end(&pn->params, i) == to_the_end(&gn->params, i)) continue;
            lin own = lin_const(g->values[x].shape.dims[a]);
            cond_eq(E, &dims[off[x] + a], &own);
        }
    }
    return E->st;
}

/* Whether value v of h is a generator's output. */
static int generator_output(const xf_graph *h, int v)
{
    return v >= 0 && v < h->n_values && h->values[v].kind == XF_VALUE_NODE &&
           xf_op_is(h->nodes[h->values[v].producer].op, XF_OPC_GENERATOR);
}

/* The node of h that reads value v first in h's topological order (pos: each
 * node's place in it), -1 when none; *slot gets the input. */
static int first_reader(const xf_graph *h, const int *pos, int v, int *slot)
{
    int best = -1;
    for (int n = 0; n < h->n_nodes; n++)
        for (int s = 0; s < h->nodes[n].n_inputs; s++)
            if (h->nodes[n].inputs[s] == v && (best < 0 || pos[n] < pos[best])) {
                best = n, *slot = s;
                break;
            }
    return best;
}

/* Whether generator node `gen` of h (at its own shapes) keeps its own shape
 * where reader node u, at input `slot`, sizes it (xf_rule_generator_held,
 * as the bounded check and the matcher read it: an operand that is a
 * generator u reads first sizes nothing); else *from and *axes say the
 * operand of u and its dims that size it. */
static int held_by(const xf_graph *h, const int *pos, int gen, int u, int slot, int *from,
                   uint32_t *axes)
{
    const xf_node *gn = &h->nodes[gen], *un = &h->nodes[u];
    const xf_shape *own[2] = {NULL, NULL};
    for (int i = 0; i < 2 && i < un->n_inputs; i++) {
        int v = un->inputs[i], at;
        if (v < 0 || (generator_output(h, v) && first_reader(h, pos, v, &at) == u)) continue;
        own[i] = &h->values[v].shape;
    }
    return xf_rule_generator_held(gn->op, &gn->params, un->op, un->n_inputs, slot, own, from, axes);
}

/* Each node's place in h's topological order, into pos (h->n_nodes). */
static xf_status topo_places(const xf_graph *h, int *pos, xf_error *err)
{
    int *order = xf_malloc(sizeof *order * ((size_t)h->n_nodes + 1));
    if (!order) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory inferring a validity domain");
    xf_status st = xf_graph_topo_order(h, order, err);
    for (int i = 0; st == XF_OK && i < h->n_nodes; i++) pos[order[i]] = i;
    xf_free(order);
    return st;
}

/* Each reader of generator node `node` of g that gives it its own shape
 * there (gpos: g's topological places): the dims of its operand that size
 * it stay at their own sizes. */
static void pin_sizing_readers(eng *E, const xf_graph *g, const int *gpos, int node,
                               const lin *dims, const int *off)
{
    int v = g->nodes[node].outputs[0];
    for (int n = 0; n < g->n_nodes; n++)
        for (int s = 0; s < g->nodes[n].n_inputs; s++) {
            int from = 0;
            uint32_t axes = 0;
            if (g->nodes[n].inputs[s] != v || held_by(g, gpos, node, n, s, &from, &axes))
                continue;
            int a = g->nodes[n].inputs[from];
            for (int d = 0; d < g->values[a].shape.rank; d++)
                if (axes >> d & 1) {
                    lin own = lin_const(g->values[a].shape.dims[d]);
                    cond_eq(E, &dims[off[a] + d], &own);
                }
        }
}

/* Whether generator node k of rule side h keeps its own shape where the
 * rule is applied: its first reader does not size it (or none reads it). */
static int side_holds(const xf_graph *h, const int *pos, int k)
{
    int slot = 0, u = first_reader(h, pos, h->nodes[k].outputs[0], &slot);
    return u < 0 || held_by(h, pos, k, u, slot, NULL, NULL);
}

xf_status xf_domain_add_mapped(xf_domain *d, const xf_graph *g, const xf_domain_step *step,
                               xf_error *err)
{
    eng E;
    lin *dims = NULL;
    int *off = NULL;
    xf_status st = eng_init(&E, g, err);
    if (st == XF_OK) st = infer_graph(&E, g, NULL, 0, &dims, &off);
    if (st == XF_OK && step) st = scalars_bound(&E, g, step, dims, off);
    if (st == XF_OK && step) st = slice_ends_bound(&E, g, step, dims, off);
    const int *values = step ? step->values : NULL;
    int n = step ? step->n_values : 0;
    for (int i = 0; st == XF_OK && step && i < step->rule->domain.n; i++) {
        const xf_dom_atom *a = &step->rule->domain.a[i];
        lin l = lin_const(a->c);
        int wide = 0;
        for (int k = 0; k < a->n && !wide; k++) {
            int in = a->dim[k].input;
            if (in < 0 || in >= n || values[in] < 0 || values[in] >= g->n_values) {
                st = XF_FAIL(err, XF_ERR_INVALID,
                             "validity domain: a condition names input %d of a rule bound to %d "
                             "values",
                             in, n);
                break;
            }
            int v = values[in], ax = g->values[v].shape.rank + a->dim[k].axis;
            lin t = ax >= 0 ? dims[off[v] + ax] : lin_const(1); /* absent: 1 */
            wide = lin_axpy(&l, a->coef[k], &t, &l) < 0;
        }
        if (st != XF_OK) break;
        if (wide) { /* every dim it names at its own size: then it holds as built */
            for (int k = 0; k < a->n; k++) {
                int v = values[a->dim[k].input], ax = g->values[v].shape.rank + a->dim[k].axis;
                if (ax >= 0) pin_lin(&E, &dims[off[v] + ax]);
            }
            st = E.st;
            continue;
        }
        cond(&E, a->kind, &l, a->m);
        st = E.st;
    }
    if (st == XF_OK) st = eng_finish(&E, d);
    xf_free(dims);
    xf_free(off);
    eng_free(&E);
    return st;
}

void xf_domain_held_init(xf_domain_held *h)
{
    memset(h, 0, sizeof *h);
}

void xf_domain_held_free(xf_domain_held *h)
{
    xf_free(h->op);
    xf_free(h->params);
    xf_domain_held_init(h);
}

/* Whether h has a generator of node nd's operator and shape. */
static int held_has(const xf_domain_held *h, const xf_node *nd)
{
    for (int i = 0; i < h->n; i++)
        if (h->op[i] == nd->op && xf_params_same_shape(&h->params[i], &nd->params)) return 1;
    return 0;
}

xf_status xf_domain_held_add(xf_domain_held *h, const xf_graph *side, xf_error *err)
{
    int *pos = xf_malloc(sizeof *pos * ((size_t)side->n_nodes + 1));
    xf_status st = pos ? topo_places(side, pos, err)
                       : XF_FAIL(err, XF_ERR_NOMEM, "out of memory inferring a validity domain");
    for (int k = 0; st == XF_OK && k < side->n_nodes; k++) {
        const xf_node *nd = &side->nodes[k];
        if (!xf_op_is(nd->op, XF_OPC_GENERATOR) || !side_holds(side, pos, k) || held_has(h, nd))
            continue;
        if (h->n == h->cap) {
            int cap = h->cap ? 2 * h->cap : 4;
            xf_op *op = xf_realloc(h->op, sizeof *op * (size_t)cap);
            if (op) h->op = op;
            xf_params *pp = op ? xf_realloc(h->params, sizeof *pp * (size_t)cap) : NULL;
            if (!pp) {
                st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory inferring a validity domain");
                break;
            }
            h->params = pp;
            h->cap = cap;
        }
        h->op[h->n] = nd->op;
        h->params[h->n++] = nd->params;
    }
    xf_free(pos);
    return st;
}

/* A step rule's generator whose first reader there does not size it
 * (xf_rule_generator_held) is proved at its own shape only (x + I[1x1]
 * read at x 3x3 holds I at 1x1). In the graphs of the chain its readers
 * may size it: the graph the step rewrites (x 1x1 sizes I there, review
 * 44a F3), the graph it makes, or one a later step rewires it in
 * (tr(x) => tr(x) * tr(I[1x1]) at x 3x3 holds I at 1x1 with no sizing
 * reader; tr(a) * tr(b) => tr(a * b) then multiplies x by it), and the
 * derived rule's own sides. The matcher sizes it there from the model,
 * where no step held, so each such graph pins the dims of every reader's
 * operand that gives a generator of that operator and shape its own shape
 * (pin_sizing_readers: every reader, not only the first, as which one
 * sizes it where the derived rule applies depends on its sides). Which
 * node of another graph is the step's is not tracked across the rewrites:
 * any generator of that operator and shape is taken for it, which may pin
 * dims that size another (narrower, never wrong). */
xf_status xf_domain_add_own_size(xf_domain *d, const xf_graph *g, const xf_domain_held *h,
                                 xf_error *err)
{
    if (!h->n) return XF_OK;
    eng E;
    lin *dims = NULL;
    int *off = NULL;
    int *pos = xf_malloc(sizeof *pos * ((size_t)g->n_nodes + 1));
    xf_status st = pos ? eng_init(&E, g, err)
                       : XF_FAIL(err, XF_ERR_NOMEM, "out of memory inferring a validity domain");
    if (st == XF_OK) st = infer_graph(&E, g, NULL, 0, &dims, &off);
    if (st == XF_OK) st = topo_places(g, pos, err);
    for (int n = 0; st == XF_OK && n < g->n_nodes; n++) {
        if (!xf_op_is(g->nodes[n].op, XF_OPC_GENERATOR) || !held_has(h, &g->nodes[n]))
            continue;
        pin_sizing_readers(&E, g, pos, n, dims, off);
        st = E.st;
    }
    if (st == XF_OK) st = eng_finish(&E, d);
    xf_free(dims);
    xf_free(off);
    xf_free(pos);
    if (pos) eng_free(&E);
    return st;
}

/* ------------------------------------------------------------ rule forms */

static int64_t gcd_abs(int64_t a, int64_t b)
{
    a = a < 0 ? -a : a;
    b = b < 0 ? -b : b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* l's terms sorted by variable, all reduced by their gcd. */
static void form_canonical(lin *l)
{
    for (int i = 1; i < l->n; i++) /* insertion sort by variable */
        for (int j = i; j > 0 && l->var[j - 1] > l->var[j]; j--) {
            int v = l->var[j];
            int64_t c = l->coef[j];
            l->var[j] = l->var[j - 1], l->coef[j] = l->coef[j - 1];
            l->var[j - 1] = v, l->coef[j - 1] = c;
        }
    int64_t g = gcd_abs(l->den, l->c);
    for (int i = 0; i < l->n; i++) g = gcd_abs(g, l->coef[i]);
    if (g <= 1) return;
    l->den /= g, l->c /= g;
    for (int i = 0; i < l->n; i++) l->coef[i] /= g;
}

/* l with a pinned opaque variable at its own size (its input dims are
 * pinned, so it has it), canonical. */
static void form_tidy(const eng *E, lin *l)
{
    int k = 0;
    for (int i = 0; i < l->n; i++) {
        const var *x = &E->v[l->var[i]];
        if (x->kind == V_OPAQUE && x->pinned) l->c += l->coef[i] * x->own;
        else l->var[k] = l->var[i], l->coef[k++] = l->coef[i];
    }
    l->n = k;
    form_canonical(l);
}

int xf_dim_form_add(const xf_dim_form *a, const xf_dim_form *b, xf_dim_form *r)
{
    lin s;
    if (lin_axpy(a, 1, b, &s) < 0) return -1;
    form_canonical(&s);
    *r = s;
    return 0;
}

/* f with variable v replaced through def (coef * v + rest == 0, coef +-1,
 * over den 1); unchanged where that does not fit. */
static void form_substitute(lin *f, int v, const lin *def, int64_t coef)
{
    int k = coef_of(f, v);
    if (k < 0) return;
    lin d = *def, r;
    d.den = f->den; /* the numerator of f gains alpha * def */
    if (lin_axpy(f, -f->coef[k] * coef, &d, &r) == 0) *f = r;
}

/* A broadcast's tie naming a size the matcher chooses. */
static int soft_on_chosen(const xf_rule_forms *out, const xf_dim_cond *e)
{
    for (int t = 0; e->soft && t < e->l.n; t++)
        if (out->chosen[e->l.var[t]]) return 1;
    return 0;
}

/* Every equality that defines a variable substituted away, but a soft one
 * on a chosen size (x + softmax[-1](ones) with the rule's ones 4x1 makes
 * its last axis 1 only there: a model's may be 3), which keeps that size a
 * variable, so a proof that holds it is no proof (verify/prove.c). */
static void forms_substitute(xf_rule_forms *out, const int *total)
{
    for (int i = 0; i < out->n_cond; i++) {
        xf_dim_cond *e = &out->cond[i];
        if (e->kind != XF_DOM_EQ || e->l.den != 1 || soft_on_chosen(out, e)) continue;
        int64_t g = e->l.c; /* 2 a - 2 b == 0 is a - b == 0 */
        for (int t = 0; t < e->l.n; t++) g = gcd_abs(g, e->l.coef[t]);
        if (g > 1) {
            e->l.c /= g;
            for (int t = 0; t < e->l.n; t++) e->l.coef[t] /= g;
        }
        int k = -1; /* the last variable (input dims come first) */
        for (int t = 0; t < e->l.n; t++)
            if ((e->l.coef[t] == 1 || e->l.coef[t] == -1) && (k < 0 || e->l.var[t] > e->l.var[k])) k = t;
        if (k < 0) continue;
        int v = e->l.var[k];
        int64_t coef = e->l.coef[k];
        lin def = e->l;
        for (int j = 0; j < out->n_cond; j++)
            if (j != i) form_substitute(&out->cond[j].l, v, &def, coef);
        for (int s = 0; s < 2; s++)
            for (int t = 0; t < total[s]; t++) form_substitute(&out->dims[s][t], v, &def, coef);
    }
}

xf_status xf_rule_forms_infer(const xf_rule *r, xf_rule_forms *out, xf_error *err)
{
    memset(out, 0, sizeof *out);
    eng E;
    lin *dims[2] = {NULL, NULL};
    int *off[2] = {NULL, NULL};
    int total[2] = {0, 0};
    xf_status st = infer_rule(&E, r, 0, dims, off, err);
    if (st == XF_OK) {
        for (int s = 0; s < 2; s++) {
            const xf_graph *g = s ? &r->dst : &r->src;
            for (int v = 0; v < g->n_values; v++) total[s] += g->values[v].shape.rank;
        }
        out->cond = xf_malloc(sizeof *out->cond * ((size_t)E.na + 1));
        out->chosen = xf_malloc((size_t)E.nv + 1);
        if (!out->cond || !out->chosen)
            st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory inferring a rule's forms");
    }
    if (st == XF_OK) {
        out->n_vars = E.nv;
        for (int k = 0; k < E.nv; k++) out->chosen[k] = E.v[k].kind == V_FREE;
        for (int s = 0; s < 2; s++) {
            out->dims[s] = dims[s], out->off[s] = off[s];
            dims[s] = NULL, off[s] = NULL;
            for (int t = 0; t < total[s]; t++) form_tidy(&E, &out->dims[s][t]);
        }
        for (int i = 0; i < E.na; i++) out->cond[out->n_cond++] = E.a[i];
        forms_substitute(out, total);
        for (int s = 0; s < 2; s++)
            for (int t = 0; t < total[s]; t++) form_tidy(&E, &out->dims[s][t]);
    }
    for (int k = 0; k < 2; k++) xf_free(dims[k]), xf_free(off[k]);
    eng_free(&E);
    if (st != XF_OK) xf_rule_forms_free(out);
    return st;
}

void xf_rule_forms_free(xf_rule_forms *f)
{
    for (int s = 0; s < 2; s++) xf_free(f->dims[s]), xf_free(f->off[s]);
    xf_free(f->cond);
    xf_free(f->chosen);
    memset(f, 0, sizeof *f);
}
