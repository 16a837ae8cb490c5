/*
 * rule_dims.c — symbolic dims of a rule (xf_rule_dims, ir.h), so that the
 * sizes a rule's reshapes choose are parameters bound where the rule
 * applies instead of the small numbers it was enumerated with.
 *
 * Every dim is a monomial num/den * prod s_i^e_i over symbols: the dims of
 * the rule inputs, and fresh variables for what a reshape chooses (the lead
 * dims an unflatten makes, the head count of a split of the last axis). The
 * operators of both sides are walked in topological order, source first,
 * each giving its outputs' monomials from its inputs' and tying the dims it
 * forces equal; then the two sides' outputs are tied. A tie a = b is solved
 * for one symbol of a/b with exponent +-1 (a variable of the target first,
 * then one of the source, then an input dim), which is substituted
 * everywhere; a tie no symbol can be solved for is kept as a constraint to
 * check where the rule applies. The rule's own concrete shapes decide what
 * broadcasting does (a dim of 1 against another is tied to 1) and which
 * kind a reshape is (xf_view_classify).
 *
 * Operators whose output sizes are not monomials of their inputs'
 * (convolutions, pooling, pads, generators) give opaque dims: never
 * checked, and a reshape whose target needs one makes the rule not `ok`.
 * The others follow ir's shape inference, their parameters read by the
 * same functions (xf_reduce_axes: no axes is every axis; xf_transpose_perm);
 * tests/test_rule_dims.c compares each with the shapes ir infers.
 */
#include "ir.h"
#include "op_internal.h"

#include <string.h>

#define MAX_COEF ((int64_t)1 << 31)

static int64_t gcd64(int64_t a, int64_t b)
{
    if (a < 0) a = -a;
    if (b < 0) b = -b;
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a ? a : 1;
}

static xf_dimx opaque(void)
{
    xf_dimx x;
    memset(&x, 0, sizeof x);
    return x;
}

static xf_dimx konst(int64_t c)
{
    xf_dimx x = opaque();
    x.num = c;
    x.den = 1;
    return x;
}

static xf_dimx symbol(int s)
{
    xf_dimx x = konst(1);
    x.n = 1;
    x.sym[0] = (int16_t)s;
    x.exp[0] = 1;
    return x;
}

static int is_opaque(const xf_dimx *x)
{
    return x->den == 0;
}

/* a * b^e (e = +1 or -1); opaque when it does not fit. */
static xf_dimx mul_pow(const xf_dimx *a, const xf_dimx *b, int e)
{
    if (is_opaque(a) || is_opaque(b)) return opaque();
    xf_dimx r = *a;
    int64_t bn = e > 0 ? b->num : b->den, bd = e > 0 ? b->den : b->num;
    if (bn == 0 || bd == 0) return opaque();
    int64_t g1 = gcd64(r.num, bd), g2 = gcd64(bn, r.den);
    int64_t num = (r.num / g1) * (bn / g2), den = (r.den / g2) * (bd / g1);
    if (num >= MAX_COEF || den >= MAX_COEF || num <= -MAX_COEF || den <= -MAX_COEF) return opaque();
    if (den < 0) num = -num, den = -den;
    r.num = num;
    r.den = den;
    for (int i = 0; i < b->n; i++) {
        int k = 0;
        while (k < r.n && r.sym[k] != b->sym[i]) k++;
        int ex = (k < r.n ? r.exp[k] : 0) + e * b->exp[i];
        if (ex > 60 || ex < -60) return opaque();
        if (k < r.n) {
            if (ex == 0) { /* drop the factor */
                r.n--;
                r.sym[k] = r.sym[r.n];
                r.exp[k] = r.exp[r.n];
            } else {
                r.exp[k] = (int8_t)ex;
            }
        } else {
            if (r.n == XF_DIMX_FACTORS) return opaque();
            r.sym[r.n] = b->sym[i];
            r.exp[r.n] = (int8_t)ex;
            r.n++;
        }
    }
    /* a canonical factor order, so equal monomials are equal bytes */
    for (int i = 1; i < r.n; i++)
        for (int j = i; j > 0 && r.sym[j - 1] > r.sym[j]; j--) {
            int16_t s = r.sym[j];
            int8_t x = r.exp[j];
            r.sym[j] = r.sym[j - 1];
            r.exp[j] = r.exp[j - 1];
            r.sym[j - 1] = s;
            r.exp[j - 1] = x;
        }
    return r;
}

int xf_dimx_equal(const xf_dimx *a, const xf_dimx *b)
{
    if (is_opaque(a) || is_opaque(b)) return 0;
    if (a->num != b->num || a->den != b->den || a->n != b->n) return 0;
    for (int i = 0; i < a->n; i++)
        if (a->sym[i] != b->sym[i] || a->exp[i] != b->exp[i]) return 0;
    return 1;
}

/* x with every defined symbol replaced by its definition. */
static xf_dimx norm(const xf_rule_dims *d, const xf_dimx *x)
{
    if (is_opaque(x)) return *x;
    for (int i = 0; i < x->n; i++) {
        if (is_opaque(&d->def[x->sym[i]])) continue;
        xf_dimx rest = *x, one = symbol(x->sym[i]);
        /* remove the factor, multiply by its definition to that power */
        for (int e = x->exp[i]; e != 0; e += e > 0 ? -1 : 1) {
            rest = mul_pow(&rest, &one, e > 0 ? -1 : 1);
            xf_dimx dn = norm(d, &d->def[x->sym[i]]);
            rest = mul_pow(&rest, &dn, e > 0 ? 1 : -1);
            if (is_opaque(&rest)) return rest;
        }
        return norm(d, &rest);
    }
    return *x;
}

/* ------------------------------------------------------------ inference */

typedef struct infer {
    xf_rule_dims *d;
    const xf_rule *r;
} infer;

static xf_dimx *dims_of(infer *c, int side, int v)
{
    return c->d->val[side][v];
}

static int fresh(infer *c, int side)
{
    xf_rule_dims *d = c->d;
    if (d->n_sym >= XF_RULE_DIMS_MAX_SYMS) return -1;
    int s = d->n_sym++;
    d->sym_side[s] = (int8_t)side;
    d->def[s] = opaque();
    return s;
}

static void not_ok(infer *c, const char *why)
{
    if (c->d->ok) {
        c->d->ok = 0;
        c->d->why = why;
    }
}

/* Ties a = b: solves for one symbol or keeps the tie as a constraint. */
static void unify(infer *c, const xf_dimx *a0, const xf_dimx *b0)
{
    xf_rule_dims *d = c->d;
    xf_dimx a = norm(d, a0), b = norm(d, b0);
    if (is_opaque(&a) || is_opaque(&b)) return;
    xf_dimx q = mul_pow(&a, &b, -1);
    if (is_opaque(&q)) {
        not_ok(c, "a tie between dims overflows the monomials");
        return;
    }
    if (q.n == 0) {
        if (q.num != q.den) not_ok(c, "two dims tied by an operator have different sizes");
        return;
    }
    int best = -1, best_rank = -2;
    for (int i = 0; i < q.n; i++) {
        if (q.exp[i] != 1 && q.exp[i] != -1) continue;
        int rank = d->sym_side[q.sym[i]];
        if (rank > best_rank || (rank == best_rank && q.sym[i] > q.sym[best])) {
            best = i;
            best_rank = rank;
        }
    }
    if (best < 0) {
        if (d->n_cons == XF_RULE_DIMS_MAX_CONS) {
            not_ok(c, "too many ties between dims");
            return;
        }
        d->cons[d->n_cons][0] = a;
        d->cons[d->n_cons][1] = b;
        d->n_cons++;
        return;
    }
    /* q = s^e * rest = 1  =>  s = rest^(-e) */
    int s = q.sym[best], e = q.exp[best];
    xf_dimx one = symbol(s), rest = mul_pow(&q, &one, -e), val = konst(1);
    val = mul_pow(&val, &rest, -e);
    if (is_opaque(&val)) {
        not_ok(c, "a tie between dims overflows the monomials");
        return;
    }
    d->def[s] = val;
}

/* numpy broadcast of dims a (rank ra, concrete sa) and b into out. */
static void broadcast(infer *c, const xf_dimx *a, const xf_shape *sa, const xf_dimx *b,
                      const xf_shape *sb, xf_dimx *out, const xf_shape *so)
{
    xf_dimx one = konst(1);
    for (int i = 0; i < so->rank; i++) {
        int ia = i - (so->rank - sa->rank), ib = i - (so->rank - sb->rank);
        if (ia < 0 && ib < 0) {
            out[i] = opaque();
        } else if (ia < 0) {
            out[i] = b[ib];
        } else if (ib < 0) {
            out[i] = a[ia];
        } else if (sa->dims[ia] == sb->dims[ib]) {
            unify(c, &a[ia], &b[ib]);
            out[i] = is_opaque(&a[ia]) ? b[ib] : a[ia];
        } else if (sa->dims[ia] == 1) {
            unify(c, &a[ia], &one);
            out[i] = b[ib];
        } else {
            unify(c, &b[ib], &one);
            out[i] = a[ia];
        }
    }
}

/* Two-operand element-wise operators (ir's classes) but scalar_mul, whose
 * scalar does not broadcast into the output. */
static int is_binary(xf_op op)
{
    return xf_op_is(op, XF_OPC_ELEMENTWISE) && xf_op_get(op)->max_inputs == 2 &&
           op != XF_OP_SCALAR_MUL;
}

static xf_dimx product(const xf_dimx *x, int n)
{
    xf_dimx p = konst(1);
    for (int i = 0; i < n; i++) p = mul_pow(&p, &x[i], 1);
    return p;
}

static void reshape_dims(infer *c, int side, const xf_shape *si, const xf_dimx *in,
                         const xf_shape *so, xf_dimx *out)
{
    int k;
    xf_view_kind kind = xf_view_classify(si, so, &k);
    switch (kind) {
    case XF_VIEW_FLATTEN:
        out[0] = product(in, k);
        for (int i = 1; i < so->rank; i++) out[i] = in[k + i - 1];
        return;
    case XF_VIEW_UNFLATTEN: {
        xf_dimx lead = in[0];
        for (int i = 0; i < k - 1; i++) {
            int s = fresh(c, side);
            if (s < 0) {
                not_ok(c, "too many reshape variables");
                out[i] = opaque();
                continue;
            }
            out[i] = symbol(s);
            lead = mul_pow(&lead, &out[i], -1);
        }
        out[k - 1] = lead;
        for (int i = k; i < so->rank; i++) out[i] = in[i - k + 1];
        return;
    }
    case XF_VIEW_SPLIT_LAST: {
        int r = si->rank, s = fresh(c, side);
        for (int i = 0; i < r - 1; i++) out[i] = in[i];
        if (s < 0) {
            not_ok(c, "too many reshape variables");
            out[r - 1] = out[r] = opaque();
            return;
        }
        out[r - 1] = symbol(s);
        out[r] = mul_pow(&in[r - 1], &out[r - 1], -1);
        return;
    }
    case XF_VIEW_MERGE_LAST: {
        int r = so->rank;
        for (int i = 0; i < r - 1; i++) out[i] = in[i];
        out[r - 1] = mul_pow(&in[r - 1], &in[r], 1);
        return;
    }
    default:
        for (int i = 0; i < so->rank; i++) out[i] = konst(so->dims[i]);
        return;
    }
}

/* Output dims of node `ni` of side `side` from its inputs'. */
static void infer_node(infer *c, int side, const xf_graph *g, int ni)
{
    const xf_node *n = &g->nodes[ni];
    const xf_params *p = &n->params;
    xf_dimx *out = dims_of(c, side, n->outputs[0]);
    const xf_shape *so = &g->values[n->outputs[0]].shape;
    int x = n->n_inputs > 0 ? n->inputs[0] : -1;
    const xf_shape *sx = x >= 0 ? &g->values[x].shape : NULL;
    xf_dimx *in = x >= 0 ? dims_of(c, side, x) : NULL;
    xf_dimx one = konst(1);
    for (int o = 0; o < n->n_outputs; o++)
        for (int i = 0; i < XF_MAX_DIMS; i++) dims_of(c, side, n->outputs[o])[i] = opaque();
    if (!in) return; /* generators: opaque */
    if (ir_op_keeps_shape(n->op) || n->op == XF_OP_SCALAR_MUL) {
        for (int i = 0; i < so->rank && i < sx->rank; i++) out[i] = in[i];
    } else if (is_binary(n->op) && n->n_inputs == 2 && n->inputs[1] >= 0) {
        int y = n->inputs[1];
        broadcast(c, in, sx, dims_of(c, side, y), &g->values[y].shape, out, so);
    } else if (n->op == XF_OP_WHERE && n->n_inputs == 3) {
        /* the two branches broadcast first, to their own shape, which the
         * condition then broadcasts with (it may be the one with 1s) */
        xf_dimx tmp[XF_MAX_DIMS];
        int y = n->inputs[1], z = n->inputs[2];
        xf_shape st;
        if (xf_shape_broadcast(&g->values[y].shape, &g->values[z].shape, &st, NULL) != XF_OK) return;
        broadcast(c, dims_of(c, side, y), &g->values[y].shape, dims_of(c, side, z),
                  &g->values[z].shape, tmp, &st);
        broadcast(c, in, sx, tmp, &st, out, so);
    } else if (n->op == XF_OP_MATMUL && n->n_inputs == 2 && sx->rank >= 2 &&
               g->values[n->inputs[1]].shape.rank >= 2) {
        int y = n->inputs[1];
        const xf_shape *sy = &g->values[y].shape;
        xf_dimx *b = dims_of(c, side, y);
        unify(c, &in[sx->rank - 1], &b[sy->rank - 2]);
        xf_shape ba = xf_shape_make(sx->rank - 2, sx->dims), bb = xf_shape_make(sy->rank - 2, sy->dims),
                 bo = xf_shape_make(so->rank - 2, so->dims);
        broadcast(c, in, &ba, b, &bb, out, &bo);
        out[so->rank - 2] = in[sx->rank - 2];
        out[so->rank - 1] = b[sy->rank - 1];
    } else if (n->op == XF_OP_LAYERNORM || n->op == XF_OP_BATCHNORM) {
        for (int i = 0; i < so->rank; i++) out[i] = in[i];
        for (int j = 1; j < n->n_inputs && n->op == XF_OP_LAYERNORM; j++) {
            int y = n->inputs[j];
            if (y < 0) continue;
            xf_dimx tmp[XF_MAX_DIMS];
            broadcast(c, in, sx, dims_of(c, side, y), &g->values[y].shape, tmp, so);
        }
    } else if (n->op == XF_OP_REDUCE_MEAN || n->op == XF_OP_REDUCE_SUM || n->op == XF_OP_REDUCE_MAX) {
        /* no axes reduces every axis, as the operator does */
        int red[XF_MAX_DIMS], k = 0;
        if (xf_reduce_axes(p, sx->rank, red) < 0) return;
        for (int i = 0; i < sx->rank; i++) {
            if (!red[i]) out[k++] = in[i];
            else if (p->keepdims) out[k++] = one;
        }
    } else if (n->op == XF_OP_CONCAT) {
        int a = xf_norm_axis(p->axis, so->rank), same = 1;
        for (int j = 1; j < n->n_inputs; j++) {
            xf_dimx *b = dims_of(c, side, n->inputs[j]);
            for (int i = 0; i < so->rank; i++)
                if (i != a) unify(c, &in[i], &b[i]);
            /* parts of different sizes: the axis is a sum, not a monomial */
            xf_dimx pa = norm(c->d, &b[a]), pb = norm(c->d, &in[a]);
            if (!xf_dimx_equal(&pa, &pb)) same = 0;
        }
        for (int i = 0; i < so->rank; i++) out[i] = in[i];
        xf_dimx cnt = konst(n->n_inputs);
        out[a] = same ? mul_pow(&in[a], &cnt, 1) : opaque();
    } else if (n->op == XF_OP_SPLIT) {
        int a = xf_norm_axis(p->axis, sx->rank), equal = 1;
        for (int o = 0; o < n->n_outputs; o++)
            equal &= g->values[n->outputs[o]].shape.dims[a] * n->n_outputs == sx->dims[a];
        xf_dimx cnt = konst(n->n_outputs);
        for (int o = 0; o < n->n_outputs; o++) {
            xf_dimx *po = dims_of(c, side, n->outputs[o]);
            for (int i = 0; i < sx->rank; i++) po[i] = in[i];
            po[a] = equal ? mul_pow(&in[a], &cnt, -1) : opaque();
        }
    } else if (n->op == XF_OP_TRANSPOSE) {
        int perm[XF_MAX_DIMS];
        if (xf_transpose_perm(p, sx->rank, perm) != 0) return;
        for (int i = 0; i < so->rank; i++) out[i] = in[perm[i]];
    } else if (n->op == XF_OP_RESHAPE) {
        reshape_dims(c, side, sx, in, so, out);
    } else if (n->op == XF_OP_FLATTEN) {
        int a = xf_norm_axis(p->axis, sx->rank);
        if (a < 0) a = p->axis == sx->rank ? sx->rank : 0;
        out[0] = product(in, a);
        out[1] = product(in + a, sx->rank - a);
    } else if (n->op == XF_OP_SQUEEZE) {
        /* no axes drops every dim of 1, the rule's own: those the
         * operator drops wherever they stay 1 */
        int gone[XF_MAX_DIMS] = {0}, k = 0;
        for (int i = 0; i < sx->rank && p->n_axes == 0; i++) gone[i] = sx->dims[i] == 1;
        for (int i = 0; i < p->n_axes; i++) {
            int a = xf_norm_axis(p->axes[i], sx->rank);
            if (a >= 0) gone[a] = 1;
        }
        for (int i = 0; i < sx->rank; i++) {
            if (gone[i]) unify(c, &in[i], &one);
            else out[k++] = in[i];
        }
    } else if (n->op == XF_OP_UNSQUEEZE) {
        int made[XF_MAX_DIMS] = {0}, k = 0;
        for (int i = 0; i < p->n_axes; i++) {
            int a = xf_norm_axis(p->axes[i], so->rank);
            if (a >= 0) made[a] = 1;
        }
        for (int i = 0; i < so->rank; i++) out[i] = made[i] ? one : in[k++];
    } else if (n->op == XF_OP_SLICE) {
        for (int i = 0; i < so->rank; i++)
            out[i] = so->dims[i] == sx->dims[i] ? in[i] : konst(so->dims[i]);
        /* a sliced axis has the size the slice takes: the whole axis only
         * "to the end" from 0 by step 1; any other end is a constant, the
         * own size too (slice[0:4] of 4 takes 4 of 6), as the validity
         * domain reads it (ir/domain_infer.c) and the matcher binds it, and
         * so is a longer step's (slice[0::2] of 1 takes 1, of 6 takes 3),
         * whose input is tied to its own size too, as the domain pins it
         * (else an input of 2 would pass for the own 1) */
        for (int i = 0; i < p->n_axes; i++) {
            int a = xf_norm_axis(p->axes[i], sx->rank);
            if (a < 0 ||
                (p->starts[i] == 0 && p->ends[i] >= XF_SLICE_TO_THE_END && p->steps[i] == 1))
                continue;
            out[a] = konst(so->dims[a]);
            if (p->steps[i] != 1) {
                xf_dimx own = konst(sx->dims[a]);
                unify(c, &in[a], &own);
            }
        }
    }
    /* everything else (conv, pools, pad, generators...): opaque */
}

static xf_status alloc_side(xf_rule_dims *d, int side, int n_values, xf_error *err)
{
    d->n_values[side] = n_values;
    d->val[side] = xf_calloc((size_t)n_values + 1, sizeof *d->val[side]);
    if (!d->val[side]) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory inferring a rule's dims");
    return XF_OK;
}

int xf_rule_has_views(const xf_rule *r)
{
    for (int k = 0; k < 2; k++) {
        const xf_graph *g = k ? &r->dst : &r->src;
        for (int i = 0; i < g->n_nodes; i++)
            if (g->nodes[i].op == XF_OP_RESHAPE) return 1;
    }
    return 0;
}

void xf_rule_dims_free(xf_rule_dims *d)
{
    xf_free(d->val[0]);
    xf_free(d->val[1]);
    d->val[0] = d->val[1] = NULL;
}

static xf_status walk_side(infer *c, int side, xf_error *err)
{
    const xf_graph *g = side ? &c->r->dst : &c->r->src;
    int *order = xf_malloc(sizeof *order * ((size_t)g->n_nodes + 1));
    if (!order) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory inferring a rule's dims");
    xf_status st = xf_graph_topo_order(g, order, err);
    for (int i = 0; st == XF_OK && i < g->n_nodes; i++) infer_node(c, side, g, order[i]);
    xf_free(order);
    return st;
}

/* 1 when every dim of value v of side `side` is a monomial of bindable
 * symbols (input dims and the source's variables). */
static int bindable(const xf_rule_dims *d, int side, int v, int rank)
{
    for (int i = 0; i < rank; i++) {
        const xf_dimx *x = &d->val[side][v][i];
        if (is_opaque(x)) return 0;
        for (int f = 0; f < x->n; f++)
            if (d->sym_side[x->sym[f]] > 0) return 0;
    }
    return 1;
}

xf_status xf_rule_dims_infer(const xf_rule *r, xf_rule_dims *d, xf_error *err)
{
    memset(d, 0, sizeof *d);
    d->ok = 1;
    infer c = {d, r};
    if (r->src.n_inputs > XF_RULE_DIMS_MAX_INPUTS || r->dst.n_inputs != r->src.n_inputs) {
        d->ok = 0;
        d->why = "more rule inputs than the symbolic dims follow";
        return XF_OK;
    }
    d->n_sym = XF_RULE_DIMS_INPUT_SYMS;
    for (int s = 0; s < XF_RULE_DIMS_MAX_SYMS; s++) {
        d->sym_side[s] = -1;
        d->def[s] = opaque();
    }
    xf_status st = alloc_side(d, 0, r->src.n_values, err);
    if (st == XF_OK) st = alloc_side(d, 1, r->dst.n_values, err);
    for (int side = 0; st == XF_OK && side < 2; side++) {
        const xf_graph *g = side ? &r->dst : &r->src;
        for (int v = 0; v < g->n_values; v++)
            for (int i = 0; i < XF_MAX_DIMS; i++) d->val[side][v][i] = opaque();
        for (int i = 0; i < g->n_inputs; i++) {
            const xf_value *val = &g->values[g->inputs[i]];
            for (int j = 0; j < val->shape.rank; j++)
                d->val[side][g->inputs[i]][j] = symbol(i * XF_MAX_DIMS + j);
        }
    }
    for (int side = 0; st == XF_OK && side < 2; side++) st = walk_side(&c, side, err);
    if (st != XF_OK) {
        xf_rule_dims_free(d);
        return st;
    }
    for (int o = 0; o < r->src.n_outputs && o < r->dst.n_outputs; o++) {
        int a = r->src.outputs[o], b = r->dst.outputs[o];
        for (int i = 0; i < r->src.values[a].shape.rank; i++)
            unify(&c, &d->val[0][a][i], &d->val[1][b][i]);
    }
    for (int side = 0; side < 2; side++)
        for (int v = 0; v < d->n_values[side]; v++)
            for (int i = 0; i < XF_MAX_DIMS; i++) d->val[side][v][i] = norm(d, &d->val[side][v][i]);
    for (int k = 0; k < d->n_cons; k++)
        for (int j = 0; j < 2; j++) d->cons[k][j] = norm(d, &d->cons[k][j]);
    for (int i = 0; i < r->dst.n_nodes && d->ok; i++) {
        const xf_node *n = &r->dst.nodes[i];
        if (n->op != XF_OP_RESHAPE) continue;
        int v = n->outputs[0];
        if (!bindable(d, 1, v, r->dst.values[v].shape.rank))
            not_ok(&c, "a reshape of the target has a size that nothing in the source binds");
    }
    return XF_OK;
}

/* ------------------------------------------------------------ evaluation */

/* The value of x under symval into *out: 0 when opaque, unbound, not a
 * positive integer or beyond 2^40. */
static int dimx_eval(const xf_rule_dims *d, const xf_dimx *x, const int64_t *symval, int64_t *out)
{
    (void)d;
    *out = 0;
    if (is_opaque(x)) return 0;
    __int128 num = x->num, den = x->den;
    const __int128 lim = (__int128)1 << 80;
    for (int i = 0; i < x->n; i++) {
        int64_t v = symval[x->sym[i]];
        if (v <= 0) return 0;
        for (int e = x->exp[i]; e != 0; e += e > 0 ? -1 : 1) {
            if (e > 0) num *= v;
            else den *= v;
            if (num > lim || den > lim) return 0;
        }
    }
    if (den <= 0 || num <= 0 || num % den != 0) return 0;
    __int128 q = num / den;
    if (q > ((__int128)1 << 40)) return 0;
    *out = (int64_t)q;
    return 1;
}

int xf_rule_dims_shape(const xf_rule_dims *d, int side, int v, const int64_t *symval,
                       xf_shape *out)
{
    if (v < 0 || v >= d->n_values[side]) return 0;
    for (int i = 0; i < out->rank; i++)
        if (!dimx_eval(d, &d->val[side][v][i], symval, &out->dims[i])) return 0;
    return 1;
}

int xf_rule_dims_agree(const xf_rule_dims *d, int side, int v, const int64_t *symval,
                       const xf_shape *s)
{
    if (v < 0 || v >= d->n_values[side]) return 0;
    for (int i = 0; i < s->rank; i++) {
        const xf_dimx *x = &d->val[side][v][i];
        int64_t e;
        if (is_opaque(x)) continue;
        if (!dimx_eval(d, x, symval, &e) || e != s->dims[i]) return 0;
    }
    return 1;
}

/* 1 when the ties kept as constraints hold under symval. */
static int cons_hold(const xf_rule_dims *d, const int64_t *symval)
{
    for (int k = 0; k < d->n_cons; k++) {
        int64_t a, b;
        if (!dimx_eval(d, &d->cons[k][0], symval, &a) ||
            !dimx_eval(d, &d->cons[k][1], symval, &b) || a != b)
            return 0;
    }
    return 1;
}

int xf_rule_dims_bind(const xf_rule_dims *d, const xf_shape *shapes, int64_t *symval)
{
    memset(symval, 0, sizeof *symval * (size_t)d->n_sym);
    for (int v = 0; v < d->n_values[0]; v++) {
        if (shapes[v].rank < 0) continue;
        for (int i = 0; i < shapes[v].rank; i++) {
            const xf_dimx *x = &d->val[0][v][i];
            if (is_opaque(x) || x->n != 1 || x->exp[0] != 1 || x->num != 1 || x->den != 1) continue;
            int s = x->sym[0];
            if (symval[s] == 0) symval[s] = shapes[v].dims[i];
            else if (symval[s] != shapes[v].dims[i]) return 0;
        }
    }
    for (int v = 0; v < d->n_values[0]; v++)
        if (shapes[v].rank >= 0 && !xf_rule_dims_agree(d, 0, v, symval, &shapes[v])) return 0;
    return cons_hold(d, symval);
}

char *xf_dimx_str(const xf_dimx *x, char *buf, size_t n)
{
    xf_strbuf b = {buf, n, 0, 0};
    if (n) buf[0] = 0;
    if (is_opaque(x)) {
        xf_strbuf_printf(&b, "?");
        return buf;
    }
    int any = 0;
    if (x->num != 1 || x->n == 0) {
        xf_strbuf_printf(&b, "%lld", (long long)x->num);
        any = 1;
    }
    for (int i = 0; i < x->n; i++) {
        for (int e = x->exp[i] > 0 ? x->exp[i] : 0; e > 0; e--) {
            int s = x->sym[i];
            if (s < XF_RULE_DIMS_INPUT_SYMS)
                xf_strbuf_printf(&b, "%sin%d.%d", any ? "*" : "", s / XF_MAX_DIMS, s % XF_MAX_DIMS);
            else
                xf_strbuf_printf(&b, "%sv%d", any ? "*" : "", s - XF_RULE_DIMS_INPUT_SYMS);
            any = 1;
        }
    }
    if (!any) xf_strbuf_printf(&b, "1");
    for (int i = 0; i < x->n; i++) {
        for (int e = x->exp[i] < 0 ? -x->exp[i] : 0; e > 0; e--) {
            int s = x->sym[i];
            if (s < XF_RULE_DIMS_INPUT_SYMS)
                xf_strbuf_printf(&b, "/in%d.%d", s / XF_MAX_DIMS, s % XF_MAX_DIMS);
            else
                xf_strbuf_printf(&b, "/v%d", s - XF_RULE_DIMS_INPUT_SYMS);
        }
    }
    if (x->den != 1) xf_strbuf_printf(&b, "/%lld", (long long)x->den);
    return buf;
}
