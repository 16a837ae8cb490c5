/*
 * bounded.c — the bounded element-wise check of a rule, independent of the
 * axioms (docs/design.md "Data flow", docs/verify.md).
 *
 * The rule is checked at its own input shapes, then at the small other
 * admissible ones and last at the largest, as bounded_shapes.c chooses
 * (dims 1..4, at most bounded_max_shapes assignments in all); at each,
 * both sides are
 * elaborated over one real Z3 constant per input element, operator by
 * operator (bounded_ops.c). Output elements whose canonical polynomial
 * forms (bounded_poly.c) are identical need no solving; each of the others,
 * deduplicated and cheapest first, is one query "this element differs" in a
 * fresh solver, all queries of all shapes sharing the rule's time budget:
 *  - first, both sides run in floats on random inputs; a clear difference
 *    refutes the rule at that shape at once (float_probe);
 *  - unsat for every element at every shape: valid;
 *  - sat (the first ends the check): the model's input values become
 *    float32 tensors and both graphs, rebuilt at that shape, run in our
 *    interpreter. A difference there confirms the refutation. A model of a
 *    rule without abstract functions is a real counterexample even when
 *    float rounding hides it (still refuted). A model that relies on an
 *    abstract function (sigmoid, exp...) and that floats do not confirm
 *    shows only that the rule needs more than "any function": that shape
 *    is unknown and the next one is tried;
 *  - the solver's unknown (timeout, resource limit, memory) at some shape,
 *    or a budget running out before the last shape, is unknown, with the
 *    class of the first reason in out->why.
 *
 * Budgets: the check's queries share the rule's time budget (timeout_ms)
 * and its resource budget (rlimit, Z3's deterministic work count, read
 * from the context's counter, which also counts simplification). The
 * resource budget is the one that normally binds, so a verdict is the
 * same on a loaded machine; the time budget is the backstop.
 *
 * A rule the axioms did not prove can only end refuted or unknown, and
 * every refutation of the 4-operator samples at shapes other than the
 * rule's own came from the float probe (docs/log/verify.md "Unknown rules"):
 * xf_verify_bounded_refute runs the full check at the rule's own shapes
 * and only the float probe at the other planned shapes (also when the own
 * shapes spent the budget). In every form the float probe runs at every
 * planned shape: once the exact check has spent its budget, or where it is
 * limited to a few shapes because the solver was needed, the other shapes
 * are still probed, so a rule false at shapes other than its own is
 * refuted for a few milliseconds however hard its exact form is.
 * xf_verify_bounded_cross is the check of a rule the axioms proved: its
 * exact part runs at the own shapes alone (cross_shapes: more), where a wrong axiom or encoding
 * would show as a disagreement, with the smaller cross_rlimit budget, and
 * the float probe at every other shape finds a rule that holds at its own
 * shapes only (every such refutation in the samples came from the floats;
 * the exact check at up to 64 shapes found none of its own and was most of
 * the verification time: docs/verify.md "Limits").
 * xf_verify_bounded_probe is the float probe alone at every planned shape,
 * which xferverify runs before the axioms (worker.c, probe_first).
 *
 * xf_verify_bounded_after_probe is the cross-check or the refute-only form
 * of a rule whose float probe agreed at every planned shape: the probe is
 * deterministic (the same plan, the same seeds), so it is not run again.
 *
 * Each call has its own non-reference-counted Z3 context (terms of every
 * shape live until it is deleted) with an error handler that records errors
 * instead of exiting; it reads only the verifier's options. Making one is
 * most of the cost of the exact check of a small rule (a third of the
 * cross-check of a 4-operator rule the axioms proved), so
 * xf_verifier_prepare makes one ahead (vf_bounded_context_ahead), in
 * xferverify's parent before the forks: the first check of each forked
 * worker takes it as it is, a context in the same state as a fresh one;
 * later checks of the same process make their own.
 */
#include "bounded_internal.h"
#include "verify/verify_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *xf_bounded_result_name(xf_bounded_result r)
{
    switch (r) {
    case XF_BOUNDED_VALID: return "valid";
    case XF_BOUNDED_REFUTED: return "refuted";
    case XF_BOUNDED_UNKNOWN: return "unknown";
    case XF_BOUNDED_UNSUPPORTED: return "unsupported";
    }
    return "?";
}

void xf_bounded_init(xf_bounded *b)
{
    memset(b, 0, sizeof *b);
    b->result = XF_BOUNDED_UNKNOWN;
    b->output = -1;
}

void xf_bounded_free(xf_bounded *b)
{
    for (int i = 0; i < b->n_inputs; i++) xf_tensor_free(&b->inputs[i]);
    xf_free(b->inputs);
    xf_bounded_init(b);
}

static void ignore_z3_error(Z3_context z, Z3_error_code e)
{
    (void)z;
    (void)e;
}

/* Everything one check owns; src, dst and diff belong to the shape being
 * checked, the rest to the whole check. */
typedef struct check {
    xfb_ctx c;
    xfb_tensor *src, *dst; /* per value of each side */
    xfb_canon *canon;      /* normal forms of the output elements */
    int n_facts;           /* side facts registered with canon */
    struct diff *diff;     /* output elements that may differ */
    int n_diff;
    int too_large;         /* an element's normal form is beyond the normaliser's size
                              limit: the shape's exact check stops unknown */
    double deadline;       /* end of the time budget (ms, 0: none) */
    uint64_t rl_budget;    /* resource budget (Z3 units, 0: none) */
    uint64_t rl_used;      /* units counted in this context so far */
    xf_verify_why why;     /* class of the last query's unknown */
    xf_verifier *v;
} check;

/* Frees what one shape's check built. */
static void shape_free(check *k, const xf_rule *r)
{
    for (int i = 0; k->src && i < r->src.n_values; i++) xf_free(k->src[i].e);
    for (int i = 0; k->dst && i < r->dst.n_values; i++) xf_free(k->dst[i].e);
    xf_free(k->src);
    xf_free(k->dst);
    xf_free(k->diff);
    k->src = k->dst = NULL;
    k->diff = NULL;
    k->n_diff = 0;
    k->too_large = 0;
    k->c.n_side = 0;
    k->n_facts = 0;
    k->c.uses_uf = 0;
}

static void check_free(check *k)
{
    vf_bounded_canon_free(k->canon);
    xf_free(k->c.side);
    if (k->c.z && !k->v->exiting) Z3_del_context(k->c.z);
}

/* A fresh context for one check under options o. */
static xf_status new_context(const xf_verify_options *o, Z3_context *out, xf_error *err)
{
    Z3_config cfg = Z3_mk_config();
    if (!cfg) return XF_FAIL(err, XF_ERR_INTERNAL, "bounded check: Z3 configuration failed");
    char buf[32];
    snprintf(buf, sizeof buf, "%u", o->timeout_ms);
    if (o->timeout_ms) Z3_set_param_value(cfg, "timeout", buf);
    *out = Z3_mk_context(cfg);
    Z3_del_config(cfg);
    if (!*out) return XF_FAIL(err, XF_ERR_INTERNAL, "bounded check: Z3 context creation failed");
    Z3_set_error_handler(*out, ignore_z3_error);
    if (o->memory_mb) {
        snprintf(buf, sizeof buf, "%u", o->memory_mb);
        Z3_global_param_set("memory_max_size", buf);
    }
    return XF_OK;
}

xf_status vf_bounded_context_ahead(xf_verifier *v, xf_error *err)
{
    if (v->bounded_ctx) return XF_OK;
    return new_context(&v->opt, &v->bounded_ctx, err);
}

/* The check's context: the one made ahead when there is one (taken: the
 * check owns it, and deletes it unless the process is exiting), else a
 * fresh one. */
static xf_status make_context(check *k, const xf_verify_options *o, xf_error *err)
{
    if (k->v->bounded_ctx) {
        k->c.z = k->v->bounded_ctx;
        k->v->bounded_ctx = NULL;
    } else {
        xf_status st = new_context(o, &k->c.z, err);
        if (st != XF_OK) return st;
    }
    k->c.real = Z3_mk_real_sort(k->c.z);
    k->canon = vf_bounded_canon_new(k->c.z, k->c.real);
    if (!k->canon) return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory");
    return vf_bounded_z3_check(&k->c, "creating the context", err);
}

/* The check runs a rule only at inputs of at most max_dim per axis, or,
 * scaled, of at most 4 max_dim on an axis and max_dim^4 elements (a rule
 * whose heads need an axis of 8 or 12: [2,2,12] against the bound 4): a
 * rule's own shapes may be anything a database holds ([2^26,4,4,4] would
 * take the float probe 16 GiB and a minute), so they are refused before
 * anything is allocated, as unsupported. */
static xf_status inputs_within_bound(const xf_rule *r, int max_dim, xf_error *err)
{
    int64_t cap = (int64_t)max_dim * max_dim * max_dim * max_dim;
    for (int i = 0; i < r->src.n_inputs; i++) {
        const xf_shape *sh = &r->src.values[r->src.inputs[i]].shape;
        int64_t numel = xf_shape_numel(sh);
        for (int d = 0; d < sh->rank; d++)
            if (sh->dims[d] > max_dim && (sh->dims[d] > 4 * (int64_t)max_dim || numel > cap)) {
                char s[96];
                return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                               "bounded check: input %d is %s, beyond the bound %d per axis "
                               "(%d on an axis of an input of at most %lld elements)", i,
                               xf_shape_str(sh, s, sizeof s), max_dim, 4 * max_dim, (long long)cap);
            }
    }
    return XF_OK;
}

/* One real constant per element of every rule input, shared by both sides. */
static xf_status make_inputs(check *k, const xf_rule *r, xf_error *err)
{
    k->src = xf_calloc((size_t)r->src.n_values + 1, sizeof *k->src);
    k->dst = xf_calloc((size_t)r->dst.n_values + 1, sizeof *k->dst);
    if (!k->src || !k->dst) return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory");
    for (int i = 0; i < r->src.n_inputs; i++) {
        xfb_tensor *a = &k->src[r->src.inputs[i]], *b = &k->dst[r->dst.inputs[i]];
        a->shape = r->src.values[r->src.inputs[i]].shape;
        a->n = xf_shape_numel(&a->shape);
        a->e = xf_malloc((size_t)a->n * sizeof *a->e + 1);
        if (!a->e) return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory");
        for (int64_t e = 0; e < a->n; e++) {
            char name[48];
            snprintf(name, sizeof name, "in%d_%lld", i, (long long)e);
            a->e[e] = Z3_mk_const(k->c.z, Z3_mk_string_symbol(k->c.z, name), k->c.real);
        }
        if (b->e) continue; /* the same value read twice */
        *b = *a;
        b->e = xf_malloc((size_t)a->n * sizeof *b->e + 1);
        if (!b->e) return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory");
        memcpy(b->e, a->e, (size_t)a->n * sizeof *b->e);
    }
    return vf_bounded_z3_check(&k->c, "declaring inputs", err);
}

/* One output element whose two sides are not the same term. */
typedef struct diff {
    Z3_ast x, y;
    double size; /* monomials of the two normal forms; raw terms count as large */
} diff;

static int diff_cmp(const void *p, const void *q)
{
    double a = ((const diff *)p)->size, b = ((const diff *)q)->size;
    return (a > b) - (a < b);
}

/* Side t of one element, whose canonical id is `id` (-1: outside the
 * normaliser), as a term for the solver into *out: its normal form
 * rebuilt, else the simplified raw term (NULL when Z3 failed). */
static xf_status element(check *k, Z3_ast t, int32_t id, Z3_ast *out, double *size, xf_error *err)
{
    *out = NULL;
    if (id >= 0) {
        xf_status st = vf_bounded_canon_build(k->canon, id, out, err);
        if (st != XF_OK) return st;
    }
    if (*out) {
        *size += (double)vf_bounded_canon_size(k->canon, id);
        return XF_OK;
    }
    *size += 1e9;
    *out = Z3_simplify(k->c.z, t);
    return XF_OK;
}

/* Collects the output elements whose normal forms differ, each pair once,
 * cheapest first. Elements with equal normal forms are never rebuilt. */
static xf_status collect_diffs(check *k, const xf_rule *r, xf_error *err)
{
    int64_t total = 0;
    for (int o = 0; o < r->src.n_outputs; o++) total += k->src[r->src.outputs[o]].n;
    k->diff = xf_malloc((size_t)total * sizeof *k->diff + 1);
    if (!k->diff) return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory");
    for (; k->n_facts < k->c.n_side; k->n_facts++) {
        xf_status st = vf_bounded_canon_fact(k->canon, k->c.side[k->n_facts], err);
        if (st != XF_OK) return st;
    }
    for (int o = 0; o < r->src.n_outputs; o++) {
        const xfb_tensor *a = &k->src[r->src.outputs[o]], *b = &k->dst[r->dst.outputs[o]];
        if (!xf_shape_equal(&a->shape, &b->shape))
            return XF_FAIL(err, XF_ERR_SHAPE, "bounded check: output %d has different shapes", o);
        for (int64_t e = 0; e < a->n; e++) {
            int32_t ia = -1, ib = -1;
            xf_status st = vf_bounded_canon_id(k->canon, a->e[e], &ia, err);
            if (st == XF_OK) st = vf_bounded_canon_id(k->canon, b->e[e], &ib, err);
            if (st != XF_OK) return st;
            if (ia >= 0 && ia == ib) continue;
            if ((ia < 0 || ib < 0) && vf_bounded_canon_too_large(k->canon) > 0) {
                k->too_large = 1; /* the solver would get raw terms of that size */
                return XF_OK;
            }
            diff d = {NULL, NULL, 0};
            st = element(k, a->e[e], ia, &d.x, &d.size, err);
            if (st == XF_OK) st = element(k, b->e[e], ib, &d.y, &d.size, err);
            if (st != XF_OK) return st;
            if (!d.x || !d.y) return vf_bounded_z3_check(&k->c, "simplifying outputs", err);
            if (Z3_is_eq_ast(k->c.z, d.x, d.y)) continue;
            int seen = 0;
            for (int i = 0; i < k->n_diff && !seen; i++)
                seen = Z3_is_eq_ast(k->c.z, k->diff[i].x, d.x) &&
                       Z3_is_eq_ast(k->c.z, k->diff[i].y, d.y);
            if (!seen) k->diff[k->n_diff++] = d;
        }
    }
    qsort(k->diff, (size_t)k->n_diff, sizeof *k->diff, diff_cmp);
    return vf_bounded_z3_check(&k->c, "comparing outputs", err);
}

/* Model values of the inputs as float32 tensors into out->inputs. */
static xf_status model_inputs(check *k, const xf_rule *r, Z3_model m, xf_bounded *out,
                              xf_error *err)
{
    out->inputs = xf_calloc((size_t)r->src.n_inputs + 1, sizeof *out->inputs);
    if (!out->inputs) return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory");
    out->n_inputs = r->src.n_inputs;
    for (int i = 0; i < r->src.n_inputs; i++) {
        const xfb_tensor *a = &k->src[r->src.inputs[i]];
        xf_status st = xf_tensor_alloc(&out->inputs[i], XF_F32, &a->shape, err);
        if (st != XF_OK) return st;
        float *d = out->inputs[i].data;
        for (int64_t e = 0; e < a->n; e++) {
            Z3_ast v = NULL;
            if (!Z3_model_eval(k->c.z, m, a->e[e], true, &v) || !v)
                return XF_FAIL(err, XF_ERR_INTERNAL, "bounded check: model has no value for %s",
                               Z3_ast_to_string(k->c.z, a->e[e]));
            Z3_string s = Z3_get_numeral_decimal_string(k->c.z, v, 12);
            if (!s) return vf_bounded_z3_check(&k->c, "reading a model value", err);
            d[e] = strtof(s, NULL);
        }
    }
    return XF_OK;
}

/* Runs both sides on out->inputs; out->output = first output differing by
 * more than rtol * (1 + |dst|) (-1: none). A NaN on one side only counts as
 * a difference when nan_differs. */
static xf_status confirm(const xf_rule *r, xf_bounded *out, xf_tolerance tol, int nan_differs,
                         double *max_diff, xf_error *err)
{
    int n = r->src.n_outputs;
    xf_tensor *a = xf_calloc((size_t)n + 1, sizeof *a), *b = xf_calloc((size_t)n + 1, sizeof *b);
    xf_status st = a && b ? XF_OK : XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory");
    if (st == XF_OK) st = xf_interp_run(&r->src, out->inputs, out->n_inputs, a, err);
    if (st == XF_OK) {
        st = xf_interp_run(&r->dst, out->inputs, out->n_inputs, b, err);
        if (st != XF_OK) memset(b, 0, (size_t)n * sizeof *b);
    } else if (a) {
        memset(a, 0, (size_t)n * sizeof *a);
    }
    *max_diff = 0;
    out->output = -1;
    for (int o = 0; st == XF_OK && o < n; o++) {
        const float *x = a[o].data, *y = b[o].data;
        for (int64_t e = 0; e < xf_shape_numel(&a[o].shape); e++) {
            double d = fabs((double)x[e] - (double)y[e]);
            if (isnan(x[e]) != isnan(y[e])) d = nan_differs ? INFINITY : 0;
            if (isnan(x[e]) && isnan(y[e])) d = 0;
            if (d > *max_diff) *max_diff = d;
            int agree = xf_value_agree(x[e], y[e], tol) ||
                        (!nan_differs && isnan(x[e]) != isnan(y[e]));
            if (!agree && out->output < 0) out->output = o;
        }
    }
    for (int o = 0; o < n && a && b; o++) xf_tensor_free(&a[o]), xf_tensor_free(&b[o]);
    xf_free(a);
    xf_free(b);
    return st;
}

/* Whether the resource budget is spent. */
static int rl_spent(const check *k)
{
    return k->rl_budget > 0 && k->rl_used >= k->rl_budget;
}

/* Decides "element i differs" in a fresh (non-incremental) solver, so Z3
 * picks its tactic for the logic at hand (nlsat for pure polynomial
 * queries, the SMT core when abstract functions appear);
 * the query gets what is left of the check's time and resource budgets.
 * *m: the model when sat (reference held). */
static Z3_lbool query(check *k, int i, double deadline, Z3_model *m, char *why, size_t why_len)
{
    Z3_context z = k->c.z;
    Z3_solver s = Z3_mk_solver(z);
    if (!s) return Z3_L_UNDEF;
    Z3_solver_inc_ref(z, s);
    Z3_params p = Z3_mk_params(z);
    Z3_params_inc_ref(z, p);
    /* Z3's non-linear arithmetic hands hard cases to nlsat, whose
     * polynomial arithmetic does not poll the timeout or the resource
     * limit: layer-norm rules (sqrt, division) ran for minutes past a
     * 10 s timeout and were killed. Its Groebner bases do not poll them
     * either: the layer norm of a transposed mean of a softmax ran to the
     * 70 s hard kill. Without both the solver still decides them by
     * linearisation, and stops at its limits (docs/verify.md "Limits");
     * on the 322 rules of the 4-operator run whose check needed the
     * solver, verdicts were the same. */
    Z3_params_set_bool(z, p, Z3_mk_string_symbol(z, "smt.arith.nl.nra"), false);
    Z3_params_set_bool(z, p, Z3_mk_string_symbol(z, "smt.arith.nl.grobner"), false);
    if (deadline > 0) {
        double left = deadline - xf_clock_now_ms();
        Z3_params_set_uint(z, p, Z3_mk_string_symbol(z, "timeout"),
                           left > 1 ? (unsigned)left : 1);
    }
    if (k->rl_budget > 0) {
        uint64_t left = k->rl_budget > k->rl_used ? k->rl_budget - k->rl_used : 1;
        Z3_params_set_uint(z, p, Z3_mk_string_symbol(z, "rlimit"),
                           left > UINT32_MAX ? UINT32_MAX : (unsigned)left);
    }
    Z3_solver_set_params(z, s, p);
    Z3_params_dec_ref(z, p);
    for (int j = 0; j < k->c.n_side; j++) Z3_solver_assert(z, s, k->c.side[j]);
    Z3_solver_assert(z, s, Z3_mk_not(z, Z3_mk_eq(z, k->diff[i].x, k->diff[i].y)));
    Z3_lbool res = Z3_get_error_code(z) == Z3_OK ? Z3_solver_check(z, s) : Z3_L_UNDEF;
    if (Z3_get_error_code(z) != Z3_OK) res = Z3_L_UNDEF;
    if (res == Z3_L_TRUE) {
        *m = Z3_solver_get_model(z, s);
        if (*m) Z3_model_inc_ref(z, *m);
        else res = Z3_L_UNDEF;
    }
    if (res == Z3_L_UNDEF) {
        Z3_string r = Z3_get_error_code(z) == Z3_OK ? Z3_solver_get_reason_unknown(z, s) : NULL;
        snprintf(why, why_len, "%s", r ? r : "error");
    }
    k->rl_used = vf_rlimit_count(z, s);
    if (res == Z3_L_UNDEF) k->why = vf_why_of_reason(why, rl_spent(k));
    Z3_solver_dec_ref(z, s);
    return res;
}

/* Queries the differing elements of one shape one by one, cheapest first;
 * the first sat ends the search (refutation), an unknown leaves the shape
 * unknown unless a later element is sat. The verdict and a short reason go
 * to one->result and why. */
static xf_status solve(check *k, const xf_rule *r, xf_bounded *one, char *why, size_t why_len,
                       xf_error *err)
{
    one->result = XF_BOUNDED_VALID;
    why[0] = 0;
    Z3_model m = NULL;
    int n_unknown = 0;
    for (int i = 0; i < k->n_diff && !m; i++) {
        Z3_model mi = NULL;
        Z3_lbool res = query(k, i, k->deadline, &mi, why, why_len);
        if (res == Z3_L_TRUE) m = mi;
        else if (res == Z3_L_UNDEF) n_unknown++;
        if (res == Z3_L_UNDEF &&
            ((k->deadline > 0 && xf_clock_now_ms() >= k->deadline) || rl_spent(k)))
            break;
    }
    if (!m) {
        if (n_unknown) one->result = XF_BOUNDED_UNKNOWN;
        return XF_OK;
    }
    xf_status st = model_inputs(k, r, m, one, err);
    Z3_model_dec_ref(k->c.z, m);
    double d = 0;
    if (st == XF_OK) st = confirm(r, one, XF_TOL_RULE, 1, &d, err);
    if (st != XF_OK) return st;
    one->result = XF_BOUNDED_REFUTED;
    if (one->output >= 0) {
        snprintf(why, why_len, "output %d differs by %.6g in the float interpreter", one->output,
                 d);
    } else if (!k->c.uses_uf) {
        one->output = 0;
        snprintf(why, why_len, "a difference in exact arithmetic (float32 differs by only %.3g)",
                 d);
    } else {
        one->result = XF_BOUNDED_UNKNOWN;
        k->why = XF_WHY_INCOMPLETE;
        snprintf(why, why_len, "differs only for some abstract non-polynomial function; floats "
                               "agree");
    }
    return XF_OK;
}

/* Runs both sides in floats on random inputs (seeded by the shape's
 * index): outputs differing by more than 1e-3 relative — far beyond float32
 * rounding for graphs this small; NaNs ignored — refute the rule at these
 * shapes without any solving. Cheap, and it keeps false rules whose
 * element-wise form is hard for the solver (divisions, square roots) from
 * spending the time budget. */
static xf_status float_probe(const xf_rule *r, uint64_t seed, xf_bounded *one, char *why,
                             size_t why_len, xf_error *err)
{
    one->inputs = xf_calloc((size_t)r->src.n_inputs + 1, sizeof *one->inputs);
    if (!one->inputs) return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory");
    one->n_inputs = r->src.n_inputs;
    double d = 0;
    xf_status st = xf_graph_random_inputs(&r->src, seed, one->inputs, err);
    if (st == XF_OK) st = confirm(r, one, XF_TOL_PROBE, 0, &d, err);
    if (st == XF_OK && one->output >= 0) {
        one->result = XF_BOUNDED_REFUTED;
        snprintf(why, why_len, "random inputs: output %d differs by %.6g in the float interpreter",
                 one->output, d);
    } else {
        xf_bounded_free(one);
    }
    return st;
}

/* The check at one input-shape assignment (r already rebuilt there);
 * *n_diff: output elements whose normal forms differed. `probe`: the float
 * probe; `exact`: the exact check (one->result stays unknown unless the
 * probe refutes when it is off). */
static xf_status check_shape(check *k, const xf_rule *r, int index, int max_dim, int probe,
                             int exact, xf_bounded *one, char *why, size_t why_len, int *n_diff,
                             xf_error *err)
{
    *n_diff = 0;
    xf_status st = inputs_within_bound(r, max_dim, err);
    if (st == XF_OK && probe)
        st = float_probe(r, 0x5eed + (uint64_t)index, one, why, why_len, err);
    if (st != XF_OK || one->result == XF_BOUNDED_REFUTED || !exact) return st;
    /* the Z3 context on first use: a rule the floats refute, and the probe
     * alone (xf_verify_bounded_probe), never build one (a few ms each) */
    if (!k->c.z) st = make_context(k, vf_verifier_options(k->v), err);
    if (st == XF_OK) st = make_inputs(k, r, err);
    if (st == XF_OK) st = vf_bounded_elaborate(&k->c, &r->src, k->src, err);
    if (st == XF_OK) st = vf_bounded_elaborate(&k->c, &r->dst, k->dst, err);
    if (st == XF_OK) st = collect_diffs(k, r, err);
    *n_diff = k->n_diff;
    if (st == XF_OK && k->too_large) {
        *n_diff = 1; /* not decided by normal forms */
        one->result = XF_BOUNDED_UNKNOWN;
        k->why = XF_WHY_RLIMIT;
        snprintf(why, why_len, "a normal form beyond the normaliser's limit of monomials: too "
                               "large for the exact check");
    } else if (st == XF_OK) {
        st = solve(k, r, one, why, why_len, err);
    }
    shape_free(k, r);
    return st;
}

/* "2x4x4x4, 4x4x3x3" */
static void shapes_str(const xf_shape *sh, int n, char *buf, size_t len)
{
    xf_strbuf b = {buf, len, 0, 0};
    for (int i = 0; i < n; i++) {
        char one[96];
        xf_strbuf_printf(&b, "%s%s", i ? ", " : "", sh[i].rank ? xf_shape_str(&sh[i], one, sizeof one)
                                                               : "scalar");
    }
}

/* A rule whose own shapes need the solver gets the exact check at this
 * many shapes at most (own and small ones): each costs solver queries. The
 * float probe still runs at all of them. */
#define XFB_SOLVER_SHAPES 8

/* Which shapes a verdict covers: "all 16 admissible input shapes (cap 64)"
 * or "18 of 1024 admissible input shapes (own, 16 small, largest; cap 64)",
 * and where the solver was needed "...; exact at the own and 7 small". */
static void scope_str(const xfb_shape_plan *plan, char *buf, size_t len)
{
    char exact[64] = "";
    if (plan->n_exact == 1 && plan->n > 1)
        snprintf(exact, sizeof exact, "; exact at the own only");
    else if (plan->n_exact < plan->n)
        snprintf(exact, sizeof exact, "; exact at the own and %d small", plan->n_exact - 1);
    if (plan->n == plan->n_admissible)
        snprintf(buf, len, "all %d admissible input shape%s (cap %d%s)", plan->n,
                 plan->n == 1 ? "" : "s", plan->cap, exact);
    else
        snprintf(buf, len, "%d of %d admissible input shapes (own, %d small, largest; cap %d%s)",
                 plan->n, plan->n_admissible, plan->n > 2 ? plan->n - 2 : 0, plan->cap, exact);
}

/* What the exact pass found. */
typedef struct pass_tally {
    int n_exact, n_nf, n_solved, n_unknown;
    int spent_at; /* the exact pass stopped before this shape; -1: it did not */
    int trim;     /* the own shapes needing the solver limit the exact check */
    int trimmed;  /* ... and did: the plan's shapes after the own are others */
    xf_verify_why spent_why, first_class;
    char first_why[160];
} pass_tally;

/* One pass over shapes [from, to) of the plan, in order: the float probe
 * (probe), the exact check (exact), or both; the exact check stops at a
 * shape past the own ones once the budget is spent. A refutation ends the
 * check (*done, out filled). After the own shapes' exact check, the plan
 * may limit the exact check to fewer shapes (plan->n_exact). */
static xf_status run_pass(check *k, const xf_rule *r, xfb_shape_plan *plan, int max_dim,
                          int from, int to, int probe, int exact, xf_bounded *out, int *done,
                          pass_tally *t, char *scope, size_t scope_len, xf_error *err)
{
    char why[160] = "";
    xf_status st = XF_OK;
    for (int s = from; s < to && st == XF_OK && !*done; s++) {
        if (exact && s > 0 &&
            (s >= plan->n_exact || rl_spent(k) ||
             (k->deadline > 0 && xf_clock_now_ms() >= k->deadline))) {
            if (s < plan->n_exact) {
                t->spent_at = s;
                t->spent_why = rl_spent(k) ? XF_WHY_RLIMIT : XF_WHY_TIMEOUT;
            }
            break;
        }
        const xf_shape *sh = plan->shapes + (size_t)s * (size_t)plan->n_inputs;
        xf_rule at;
        const xf_rule *rs = r;
        if (s > 0) {
            st = xf_verify_rule_at_shapes(r, sh, &at, err);
            rs = &at;
        }
        xf_bounded one;
        xf_bounded_init(&one);
        int n_diff = 0;
        if (st == XF_OK)
            st = check_shape(k, rs, s, max_dim, probe, exact, &one, why, sizeof why, &n_diff,
                             err);
        if (s > 0) xf_rule_free(&at);
        if (st == XF_OK && exact && s == 0 && n_diff > 0 && t->trim) {
            const xf_shape *before = plan->shapes;
            st = vf_bounded_shape_plan_trim(plan, XFB_SOLVER_SHAPES, err); /* new shapes array */
            t->trimmed = plan->shapes != before; /* reordered: the indices (seeds) moved */
            scope_str(plan, scope, scope_len);
            sh = plan->shapes; /* the own shapes stay first */
        }
        if (st != XF_OK) {
            xf_bounded_free(&one);
            break;
        }
        if (one.result == XF_BOUNDED_REFUTED) {
            char shs[160];
            shapes_str(sh, plan->n_inputs, shs, sizeof shs);
            xf_bounded_free(out);
            *out = one;
            out->n_shapes = s + 1;
            out->n_admissible = plan->n_admissible;
            out->shape_index = s;
            snprintf(out->detail, sizeof out->detail,
                     "counterexample at input shapes %s (%s; shape %d of %d checked, %d "
                     "admissible): %s",
                     shs, s == 0 ? "the rule's own" : "not the rule's own", s + 1, plan->n,
                     plan->n_admissible, why);
            *done = 1;
            break;
        }
        if (exact) {
            if (one.result == XF_BOUNDED_UNKNOWN && t->n_unknown++ == 0) {
                snprintf(t->first_why, sizeof t->first_why, "%s", why);
                t->first_class = k->why;
            }
            t->n_nf += n_diff == 0 && one.result == XF_BOUNDED_VALID;
            t->n_solved += one.result == XF_BOUNDED_VALID;
            t->n_exact++;
        }
        xf_bounded_free(&one);
    }
    return st;
}

/* The exact check, the float probe first at each, at the plan's shapes
 * after the own (dims up to top), when `run`; *done when it refuted the
 * rule (written into out), else *left what leaves it unproved (NULL: valid
 * at every one). Frees the plan. */
static xf_status extra_shapes(check *k, const xf_rule *r, xfb_shape_plan *plan, int top, int run,
                              xf_bounded *out, int *done, const char **left, char *scope,
                              size_t scope_size, xf_error *err)
{
    pass_tally t;
    memset(&t, 0, sizeof t);
    t.spent_at = -1;
    xf_status st = XF_OK;
    if (run) st = run_pass(k, r, plan, top, 1, plan->n, 1, 1, out, done, &t, scope, scope_size, err);
    vf_bounded_shape_plan_free(plan);
    *left = t.spent_at >= 0 ? (t.spent_why == XF_WHY_RLIMIT ? "the resource (rlimit) budget ran out"
                                                            : "the time budget ran out")
            : t.n_unknown ? "the solver did not decide one"
                          : NULL;
    return st;
}

/* A proof by the own shapes (out->proves) holds where every input dim its
 * argument read at its own size only (dom->fixed_dim) keeps that size:
 * into out->held, for the stored domain (worker.c). Each is listed: the
 * operators' domain holds a fixed class's dims too (the strict ties'
 * premise), not a reshape's merged axis fixed through its parts (their
 * product is no linear condition: review 42h, finding 3). */
static void held_dims(const xf_rule *r, const xfb_domain *dom, xf_bounded *out)
{
    out->n_held = 0;
    out->held_all = dom->fixed_past;
    for (int i = 0, flat = 0; i < r->src.n_inputs; i++) {
        int v = r->src.inputs[i];
        for (int d = 0; d < r->src.values[v].shape.rank; d++, flat++) {
            if (flat >= XFB_EDGE_DIMS || !dom->fixed_dim[flat]) continue;
            if (out->n_held == XF_VERIFY_MAX_HELD) {
                out->held_all = 1;
                continue;
            }
            xf_rule_dim_size *h = &out->held[out->n_held++];
            h->side = 0, h->value = v, h->axis = d, h->size = r->src.values[v].shape.dims[d];
        }
    }
}

/* A rule valid at its own shapes whose every input dim is fixed, indexed
 * or summed, or in a class read near its ends only or averaged by means
 * (bounded_domain.c): the exact check at every admissible size 1..top of
 * those classes (the float probe first at each) proves it, a refutation
 * there refutes it, anything else leaves it unknown. */
static xf_status check_edges(check *k, const xf_rule *r, int max_dim, const xfb_domain *dom,
                             xf_bounded *out, xf_error *err)
{
    xfb_shape_plan plan;
    int upward, done = 0, top = 0;
    for (int c = 0; c < dom->n_edge_classes; c++) top = dom->edge_top[c] > top ? dom->edge_top[c] : top;
    xf_status st = vf_bounded_shape_plan_edges(r, dom, &plan, &upward, err);
    if (st != XF_OK) return st;
    char scope[160];
    int plan_n = plan.n; /* extra_shapes frees the plan */
    snprintf(scope, sizeof scope, "%d admissible combination(s) of sizes up to %d of %d class(es)",
             plan_n - 1, top, dom->n_edge_classes);
    const char *why;
    st = extra_shapes(k, r, &plan, top > max_dim ? top : max_dim, upward, out, &done, &why, scope,
                      sizeof scope, err);
    if (st != XF_OK || done) return st;
    if (!upward)
        why = dom->n_averaged ? "a size it checks is not admissible where another one is"
                              : "a larger size is not admissible where a smaller one is";
    /* the ends stand for every shape only when one of them was checked:
     * with none admissible besides the own shapes the argument rests on
     * nothing (review 44a, F1: a rule no other shape fits was proved so) */
    if (!why && dom->n_edge_classes > 0 && plan_n == 1)
        why = "no combination of sizes near their ends is admissible besides the own shapes";
    out->proves = why == NULL;
    if (out->proves) held_dims(r, dom, out);
    if (out->proves && dom->n_averaged)
        snprintf(out->detail, sizeof out->detail,
                 "valid at the rule's own shapes and at the %s read near their ends or averaged, "
                 "which stand for every shape it applies to: %d input dim(s) fixed by the rule, "
                 "%d an index no operator mixes, %d summed over, %d read near their ends only, "
                 "%d averaged by a mean",
                 scope, dom->n_fixed, dom->n_indexed, dom->n_summed, dom->n_edge,
                 dom->n_averaged);
    else if (out->proves)
        snprintf(out->detail, sizeof out->detail,
                 "valid at the rule's own shapes and at the %s near their ends, which stand for "
                 "every shape it applies to: %d input dim(s) fixed by the rule, %d an index no "
                 "operator mixes, %d summed over, %d read near their ends only",
                 scope, dom->n_fixed, dom->n_indexed, dom->n_summed, dom->n_edge);
    else
        snprintf(out->detail, sizeof out->detail,
                 "valid at the rule's own shapes; not proved at the sizes near the ends of %d "
                 "class(es) read there only%s (up to %d): %s",
                 dom->n_edge_classes, dom->n_averaged ? " or averaged" : "", top, why);
    return XF_OK;
}

/* A rule valid at its own shapes that is not closed there only for its
 * matmul batch dims of two classes, when the cases of those
 * (bounded_cases.c) each close: the exact check at each case's shape (the
 * float probe first at each) proves it, a refutation there refutes it,
 * anything else leaves it unknown. *tried 0 (nothing written but the
 * open case's reason into dom->why) when the cases do not close. */
static xf_status check_cases(check *k, const xf_rule *r, int max_dim, xfb_domain *dom,
                             xf_bounded *out, int *tried, xf_error *err)
{
    xfb_shape_plan plan;
    int closes, n_cases, done = 0;
    char why[200];
    *tried = 0;
    xf_status st = vf_bounded_shape_plan_cases(r, &plan, &closes, &n_cases, why, sizeof why, err);
    if (st != XF_OK || !closes) {
        if (why[0]) snprintf(dom->why, sizeof dom->why, "%s", why); /* the case that stays open */
        vf_bounded_shape_plan_free(&plan);
        return st;
    }
    *tried = 1;
    int top = max_dim;
    for (int i = 0; i < plan.n * plan.n_inputs; i++)
        for (int d = 0; d < plan.shapes[i].rank; d++)
            top = plan.shapes[i].dims[d] > top ? (int)plan.shapes[i].dims[d] : top;
    char scope[160];
    snprintf(scope, sizeof scope, "%d case(s) of its matmul batch dims of two classes (%d more shape(s))",
             n_cases, plan.n - 1);
    const char *left;
    st = extra_shapes(k, r, &plan, top, 1, out, &done, &left, scope, sizeof scope, err);
    if (st != XF_OK || done) return st;
    out->proves = left == NULL;
    if (out->proves) held_dims(r, dom, out);
    if (out->proves)
        snprintf(out->detail, sizeof out->detail,
                 "valid at the rule's own shapes and at the shapes of the %s, which stand for "
                 "every shape it applies to, each case closed by the own-shape argument",
                 scope);
    else
        snprintf(out->detail, sizeof out->detail,
                 "valid at the rule's own shapes; not proved at the shapes of the %s: %s", scope,
                 left);
    return XF_OK;
}

/* A rule valid at its own shapes whose domain closes only with its ReLUs
 * abstract (some class summed before a non-polynomial operator reads its
 * sums: bounded_domain.c, "after their sums"): the exact check at the own
 * shapes once more, every ReLU an abstract function, proves it when valid;
 * anything else leaves it unknown (never refuted: the rule with real
 * ReLUs was valid there). `how`, `others` and `scope` say what the first
 * check found. */
static xf_status check_abstract(check *k, const xf_rule *r, int max_dim, const xfb_domain *dom,
                                const char *how, int others, const char *scope, xf_bounded *out,
                                xf_error *err)
{
    xf_bounded one;
    xf_bounded_init(&one);
    char why[200] = "";
    int n_diff = 0;
    k->c.relu_abstract = 1;
    xf_status st = check_shape(k, r, 0, max_dim, 0, 1, &one, why, sizeof why, &n_diff, err);
    k->c.relu_abstract = 0;
    int valid = st == XF_OK && one.result == XF_BOUNDED_VALID;
    xf_bounded_free(&one);
    if (st != XF_OK) return st;
    out->proves = valid;
    if (valid) held_dims(r, dom, out);
    if (valid)
        snprintf(out->detail, sizeof out->detail,
                 "valid at the rule's own shapes (%s), and with its ReLUs abstract (%s), which "
                 "stand for every shape it applies to: %d input dim(s) fixed by the rule, %d an "
                 "index no operator mixes, %d summed over (%d before non-polynomial operators "
                 "read the sums); floats agree at %d other of %s",
                 how, n_diff ? "solver" : "normal forms", dom->n_fixed, dom->n_indexed,
                 dom->n_summed, dom->n_after, others, scope);
    else
        snprintf(out->detail, sizeof out->detail,
                 "valid at the rule's own shapes (%s), floats agree at %d other of %s; exact check "
                 "only at the own shapes as the axioms did not prove it, and not valid there with "
                 "its ReLUs abstract, which its sums read by non-polynomial operators need (%s)",
                 how, others, scope, why[0] ? why : "their normal forms differ");
    return XF_OK;
}

/* What check_plan runs (the three public forms below). */
typedef enum bounded_mode { BOUNDED_FULL, BOUNDED_REFUTE, BOUNDED_PROBE } bounded_mode;

/* Checks the plan's shapes and writes the verdict. A rule the axioms
 * proved (or any rule but refute_only) first gets the whole check at its
 * own shapes (a wrong axiom shows there as a disagreement), then the float
 * probe at every other shape, then the exact check at the other shapes the
 * plan marks exact until the budget is spent. A rule the axioms did not
 * prove (refute_only) can only end refuted or unknown: the float probe runs
 * at every shape first (a false rule is refuted in milliseconds at
 * whichever shape shows it, before the exact check spends its budget), then
 * the exact check at its own shapes alone. `probed`: the float probe
 * already agreed at every shape of this plan (xf_verify_bounded_probe,
 * the same shapes and seeds), so it is not run again where a shape keeps
 * its index (a plan reordered for the solver probes its others again). */
static xf_status check_plan(check *k, const xf_rule *r, xfb_shape_plan *plan, int max_dim,
                            bounded_mode mode, int probed, xf_bounded *out, xf_error *err)
{
    char scope[160];
    pass_tally t;
    memset(&t, 0, sizeof t);
    t.spent_at = -1;
    int refute_only = mode == BOUNDED_REFUTE;
    t.trim = !refute_only;
    scope_str(plan, scope, sizeof scope);
    out->result = XF_BOUNDED_VALID;
    out->n_admissible = plan->n_admissible;
    int done = 0;
    xf_status st;
    if (mode == BOUNDED_PROBE) {
        st = run_pass(k, r, plan, max_dim, 0, plan->n, 1, 0, out, &done, &t, scope, sizeof scope,
                      err);
        if (st == XF_OK && !done) {
            out->n_shapes = plan->n;
            snprintf(out->detail, sizeof out->detail,
                     "floats agree at all %d of %s (no exact check)", plan->n, scope);
        }
        return st;
    }
    if (refute_only) {
        st = probed ? XF_OK
                    : run_pass(k, r, plan, max_dim, 0, plan->n, 1, 0, out, &done, &t, scope,
                               sizeof scope, err);
        if (st == XF_OK && !done)
            st = run_pass(k, r, plan, max_dim, 0, 1, 0, 1, out, &done, &t, scope, sizeof scope,
                          err);
    } else {
        st = run_pass(k, r, plan, max_dim, 0, 1, !probed, 1, out, &done, &t, scope, sizeof scope,
                      err);
        if (st == XF_OK && !done && (!probed || t.trimmed))
            st = run_pass(k, r, plan, max_dim, 1, plan->n, 1, 0, out, &done, &t, scope,
                          sizeof scope, err);
        if (st == XF_OK && !done)
            st = run_pass(k, r, plan, max_dim, 1, plan->n, 0, 1, out, &done, &t, scope,
                          sizeof scope, err);
    }
    if (st != XF_OK || done) return st;
    out->n_shapes = plan->n;
    int others = plan->n - t.n_exact;
    if (t.spent_at >= 0) {
        out->result = XF_BOUNDED_UNKNOWN;
        out->why = t.spent_why;
        snprintf(out->detail, sizeof out->detail,
                 "%s budget spent after %d input shapes, none refuted; floats agree at the %d "
                 "others of %s",
                 t.spent_why == XF_WHY_RLIMIT ? "resource (rlimit)" : "time", t.spent_at, others,
                 scope);
    } else if (t.n_unknown) {
        out->result = XF_BOUNDED_UNKNOWN;
        out->why = t.first_class;
        snprintf(out->detail, sizeof out->detail, "unknown at %d of %s: %s", t.n_unknown, scope,
                 t.first_why);
    } else if (refute_only) {
        xfb_domain dom;
        st = vf_bounded_domain_of(r, &dom, err);
        if (st != XF_OK) return st;
        if (dom.by_edges) return check_edges(k, r, max_dim, &dom, out, err);
        int cased = 0;
        if (!dom.closed) st = check_cases(k, r, max_dim, &dom, out, &cased, err);
        if (st != XF_OK || cased) return st;
        if (dom.closed && dom.abstract)
            return check_abstract(k, r, max_dim, &dom, t.n_nf ? "normal forms" : "solver", others,
                                  scope, out, err);
        out->proves = dom.closed;
        if (dom.closed) held_dims(r, &dom, out);
        char blocks[128] = "";
        int at = 0;
        if (dom.n_blocked)
            at += snprintf(blocks + at, sizeof blocks - (size_t)at, "%s%d moved in whole blocks by "
                           "concat or split", at ? "; " : " (", dom.n_blocked);
        if (dom.n_joined)
            at += snprintf(blocks + at, sizeof blocks - (size_t)at, "%s%d joined with other "
                           "classes by a concat", at ? "; " : " (", dom.n_joined);
        if (dom.n_viewed)
            at += snprintf(blocks + at, sizeof blocks - (size_t)at, "%s%d reshape's merged "
                           "axis/axes of such", at ? "; " : " (", dom.n_viewed);
        if (at) snprintf(blocks + at, sizeof blocks - (size_t)at, ")");
        char joined[64] = "";
        if (dom.n_joined_summed)
            snprintf(joined, sizeof joined, " (%d joined with other classes by a concat)",
                     dom.n_joined_summed);
        if (dom.closed)
            snprintf(out->detail, sizeof out->detail,
                     "valid at the rule's own shapes (%s), which stand for every shape it applies "
                     "to: %d input dim(s) fixed by the rule, %d an index no operator mixes%s, %d "
                     "summed over%s %s; floats agree at %d other of %s",
                     t.n_nf ? "normal forms" : "solver", dom.n_fixed, dom.n_indexed, blocks,
                     dom.n_summed, joined,
                     dom.polynomial || !dom.n_summed ? "in a polynomial rule"
                                                     : "where no non-polynomial operator reads them",
                     others, scope);
        else
            snprintf(out->detail, sizeof out->detail,
                     "valid at the rule's own shapes (%s), floats agree at %d other of %s; exact "
                     "check only at the own shapes as the axioms did not prove it, and %s",
                     t.n_nf ? "normal forms" : "solver", others, scope, dom.why);
    } else if (!others) {
        if (t.n_nf == t.n_exact)
            snprintf(out->detail, sizeof out->detail, "outputs have equal normal forms at %s",
                     scope);
        else
            snprintf(out->detail, sizeof out->detail,
                     "valid at %s: %d by normal forms, %d needed the solver (unsat)", scope,
                     t.n_nf, t.n_solved - t.n_nf);
    } else {
        char at[48] = "the rule's own shapes";
        if (t.n_exact > 1) snprintf(at, sizeof at, "%d input shapes", t.n_exact);
        snprintf(out->detail, sizeof out->detail,
                 "valid at %s (%d by normal forms, %d needed the solver), floats agree at the %d "
                 "others of %s",
                 at, t.n_nf, t.n_solved - t.n_nf, others, scope);
    }
    return XF_OK;
}

/* BOUNDED_REFUTE: a rule the axioms did not prove; cross: one they proved;
 * BOUNDED_PROBE: the float probe alone. */
static xf_status bounded_run(xf_verifier *v, const xf_rule *r, bounded_mode mode, int cross,
                             int probed, xf_bounded *out, xf_error *err)
{
    xf_error local;
    xf_error_clear(&local);
    if (!err) err = &local;
    xf_bounded_free(out);
    double t0 = xf_clock_now_ms();
    const xf_verify_options *o = vf_verifier_options(v);
    int max_dim = o->bounded_max_dim > 0 ? o->bounded_max_dim : 4;
    int max_shapes = o->bounded_max_shapes > 0 ? o->bounded_max_shapes : 1;
    check k;
    memset(&k, 0, sizeof k);
    k.v = v;
    /* a forked worker keeps the operator patterns it reads (bounded_patterns.c):
     * their memory goes with the process, and the forking process collects
     * them; a longer-lived caller's checks allocate and free as before */
    k.c.patterns = v->exiting ? v->patterns : NULL;
    k.deadline = o->timeout_ms ? t0 + o->timeout_ms : 0;
    k.rl_budget = o->rlimit;
    if (cross && o->cross_rlimit && (!o->rlimit || o->cross_rlimit < o->rlimit))
        k.rl_budget = o->cross_rlimit;
    xfb_shape_plan plan;
    memset(&plan, 0, sizeof plan);
    xf_status st = xf_rule_validate(r, err);
    if (st == XF_OK) st = vf_bounded_shape_plan_make(r, max_dim, max_shapes, &plan, err);
    if (st == XF_OK && cross) /* floats at the others */
        plan.n_exact = o->cross_shapes < 1 ? 1 : o->cross_shapes < plan.n ? o->cross_shapes : plan.n;
    if (st == XF_OK) st = check_plan(&k, r, &plan, max_dim, mode, probed, out, err);
    if (st == XF_ERR_UNSUPPORTED) {
        xf_bounded_free(out);
        out->result = XF_BOUNDED_UNSUPPORTED;
        out->why = XF_WHY_UNSUPPORTED;
        snprintf(out->detail, sizeof out->detail, "%s", err->msg);
        xf_error_clear(err);
        st = XF_OK;
    }
    out->time_ms = xf_clock_now_ms() - t0;
    out->rlimit_used = k.rl_used;
    vf_bounded_shape_plan_free(&plan);
    check_free(&k);
    if (st != XF_OK) xf_bounded_free(out);
    return st;
}

xf_status xf_verify_bounded(xf_verifier *v, const xf_rule *r, xf_bounded *out, xf_error *err)
{
    return bounded_run(v, r, BOUNDED_FULL, 0, 0, out, err);
}

xf_status xf_verify_bounded_cross(xf_verifier *v, const xf_rule *r, xf_bounded *out, xf_error *err)
{
    return bounded_run(v, r, BOUNDED_FULL, 1, 0, out, err);
}

xf_status xf_verify_bounded_refute(xf_verifier *v, const xf_rule *r, xf_bounded *out, xf_error *err)
{
    return bounded_run(v, r, BOUNDED_REFUTE, 0, 0, out, err);
}

xf_status xf_verify_bounded_probe(xf_verifier *v, const xf_rule *r, xf_bounded *out, xf_error *err)
{
    return bounded_run(v, r, BOUNDED_PROBE, 0, 0, out, err);
}

xf_status xf_verify_bounded_after_probe(xf_verifier *v, const xf_rule *r, int proved,
                                        xf_bounded *out, xf_error *err)
{
    return bounded_run(v, r, proved ? BOUNDED_FULL : BOUNDED_REFUTE, proved, 1, out, err);
}
