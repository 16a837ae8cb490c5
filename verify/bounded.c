/*
 * bounded.c — the bounded element-wise check of a rule, independent of the
 * axioms (DESIGN.md §4 "Verification", docs/verify.md).
 *
 * Both sides are elaborated over one real Z3 constant per input element, at
 * the shapes the rule's graphs have (the enumerator keeps them within
 * 4x4x4x4), operator by operator (bounded_ops.c). Output elements whose
 * canonical polynomial forms (bounded_poly.c) are identical need no solving;
 * each of the others, deduplicated and cheapest first, is one query
 * "this element differs" in a fresh solver, sharing the rule's time budget:
 *  - unsat for every element: the rule holds at these shapes (valid);
 *  - sat (the first ends the search): the model's input values become
 *    float32 tensors and both graphs run in our interpreter. A difference there confirms the refutation. A
 *    model of a rule without abstract functions is a real counterexample
 *    even when float rounding hides it (still refuted). A model that relies
 *    on an abstract function (sigmoid, exp...) and that floats do not
 *    confirm shows only that the rule needs more than "any function", so it
 *    is unknown;
 *  - the solver's unknown (timeout, memory) is unknown.
 *
 * Each call builds its own non-reference-counted Z3 context (terms live
 * until it is deleted) with an error handler that records errors instead of
 * exiting; it reads only the verifier's options.
 */
#include "bounded_internal.h"
#include "verify/verify_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

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
    free(b->inputs);
    xf_bounded_init(b);
}

static void ignore_z3_error(Z3_context z, Z3_error_code e)
{
    (void)z;
    (void)e;
}

/* Everything one check owns. */
typedef struct check {
    xfb_ctx c;
    xfb_tensor *src, *dst; /* per value of each side */
    xfb_canon *canon;      /* normal forms of the output elements */
    struct diff *diff;     /* output elements that may differ */
    int n_diff;
    xf_verifier *v;
} check;

static void check_free(check *k, const xf_rule *r)
{
    for (int i = 0; k->src && i < r->src.n_values; i++) free(k->src[i].e);
    for (int i = 0; k->dst && i < r->dst.n_values; i++) free(k->dst[i].e);
    free(k->src);
    free(k->dst);
    free(k->diff);
    xfb_canon_free(k->canon);
    free(k->c.side);
    if (k->c.z) Z3_del_context(k->c.z);
}

static xf_status make_context(check *k, const xf_verify_options *o, xf_error *err)
{
    Z3_config cfg = Z3_mk_config();
    if (!cfg) return XF_FAIL(err, XF_ERR_INTERNAL, "bounded check: Z3 configuration failed");
    char buf[32];
    snprintf(buf, sizeof buf, "%u", o->timeout_ms);
    if (o->timeout_ms) Z3_set_param_value(cfg, "timeout", buf);
    k->c.z = Z3_mk_context(cfg);
    Z3_del_config(cfg);
    if (!k->c.z) return XF_FAIL(err, XF_ERR_INTERNAL, "bounded check: Z3 context creation failed");
    Z3_set_error_handler(k->c.z, ignore_z3_error);
    if (o->memory_mb) {
        snprintf(buf, sizeof buf, "%u", o->memory_mb);
        Z3_global_param_set("memory_max_size", buf);
    }
    k->c.real = Z3_mk_real_sort(k->c.z);
    return xfb_z3_check(&k->c, "creating the context", err);
}

/* One real constant per element of every rule input, shared by both sides. */
static xf_status make_inputs(check *k, const xf_rule *r, int max_dim, xf_error *err)
{
    k->src = calloc((size_t)r->src.n_values + 1, sizeof *k->src);
    k->dst = calloc((size_t)r->dst.n_values + 1, sizeof *k->dst);
    if (!k->src || !k->dst) return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory");
    for (int i = 0; i < r->src.n_inputs; i++) {
        xfb_tensor *a = &k->src[r->src.inputs[i]], *b = &k->dst[r->dst.inputs[i]];
        a->shape = r->src.values[r->src.inputs[i]].shape;
        for (int d = 0; d < a->shape.rank; d++)
            if (a->shape.dims[d] > max_dim) {
                char s[96];
                return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                               "bounded check: input %d is %s, beyond the bound %d per axis", i,
                               xf_shape_str(&a->shape, s, sizeof s), max_dim);
            }
        a->n = xf_shape_numel(&a->shape);
        a->e = malloc((size_t)a->n * sizeof *a->e + 1);
        if (!a->e) return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory");
        for (int64_t e = 0; e < a->n; e++) {
            char name[48];
            snprintf(name, sizeof name, "in%d_%lld", i, (long long)e);
            a->e[e] = Z3_mk_const(k->c.z, Z3_mk_string_symbol(k->c.z, name), k->c.real);
        }
        if (b->e) continue; /* the same value read twice */
        *b = *a;
        b->e = malloc((size_t)a->n * sizeof *b->e + 1);
        if (!b->e) return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory");
        memcpy(b->e, a->e, (size_t)a->n * sizeof *b->e);
    }
    return xfb_z3_check(&k->c, "declaring inputs", err);
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

/* Side of one element: its normal form, else the simplified raw term. */
static Z3_ast element(check *k, Z3_ast t, int32_t *id, double *size)
{
    Z3_ast n = xfb_canon_term(k->canon, t, id);
    if (n) {
        *size += (double)xfb_canon_size(k->canon, *id);
        return n;
    }
    *size += 1e9;
    return Z3_simplify(k->c.z, t);
}

/* Collects the output elements whose normal forms differ, each pair once,
 * cheapest first. */
static xf_status collect_diffs(check *k, const xf_rule *r, xf_error *err)
{
    int64_t total = 0;
    for (int o = 0; o < r->src.n_outputs; o++) total += k->src[r->src.outputs[o]].n;
    k->diff = malloc((size_t)total * sizeof *k->diff + 1);
    k->canon = xfb_canon_new(k->c.z, k->c.real);
    if (!k->diff || !k->canon) return XF_FAIL(err, XF_ERR_NOMEM, "bounded check: out of memory");
    for (int o = 0; o < r->src.n_outputs; o++) {
        const xfb_tensor *a = &k->src[r->src.outputs[o]], *b = &k->dst[r->dst.outputs[o]];
        if (!xf_shape_equal(&a->shape, &b->shape))
            return XF_FAIL(err, XF_ERR_SHAPE, "bounded check: output %d has different shapes", o);
        for (int64_t e = 0; e < a->n; e++) {
            int32_t ia, ib;
            diff d = {NULL, NULL, 0};
            d.x = element(k, a->e[e], &ia, &d.size);
            d.y = element(k, b->e[e], &ib, &d.size);
            if (!d.x || !d.y) return xfb_z3_check(&k->c, "simplifying outputs", err);
            if ((ia >= 0 && ia == ib) || Z3_is_eq_ast(k->c.z, d.x, d.y)) continue;
            int seen = 0;
            for (int i = 0; i < k->n_diff && !seen; i++)
                seen = Z3_is_eq_ast(k->c.z, k->diff[i].x, d.x) &&
                       Z3_is_eq_ast(k->c.z, k->diff[i].y, d.y);
            if (!seen) k->diff[k->n_diff++] = d;
        }
    }
    qsort(k->diff, (size_t)k->n_diff, sizeof *k->diff, diff_cmp);
    return xfb_z3_check(&k->c, "comparing outputs", err);
}

/* Model values of the inputs as float32 tensors into out->inputs. */
static xf_status model_inputs(check *k, const xf_rule *r, Z3_model m, xf_bounded *out,
                              xf_error *err)
{
    out->inputs = calloc((size_t)r->src.n_inputs + 1, sizeof *out->inputs);
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
            if (!s) return xfb_z3_check(&k->c, "reading a model value", err);
            d[e] = strtof(s, NULL);
        }
    }
    return XF_OK;
}

/* Runs both sides on out->inputs; out->output = first differing output
 * (-1: none). */
static xf_status confirm(const xf_rule *r, xf_bounded *out, double *max_diff, xf_error *err)
{
    int n = r->src.n_outputs;
    xf_tensor *a = calloc((size_t)n + 1, sizeof *a), *b = calloc((size_t)n + 1, sizeof *b);
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
            if (isnan(x[e]) != isnan(y[e])) d = INFINITY;
            if (d > *max_diff) *max_diff = d;
            if (d > 1e-4 * (1.0 + fabs((double)y[e])) && out->output < 0) out->output = o;
        }
    }
    for (int o = 0; o < n && a && b; o++) xf_tensor_free(&a[o]), xf_tensor_free(&b[o]);
    free(a);
    free(b);
    return st;
}

/* Decides "element i differs" in a fresh (non-incremental) solver, so Z3
 * picks its tactic for the logic at hand (nlsat for polynomial queries);
 * the query gets what is left of the check's time budget. *m: the model
 * when sat (reference held). */
static Z3_lbool query(check *k, int i, double deadline, Z3_model *m, char *why, size_t why_len)
{
    Z3_context z = k->c.z;
    Z3_solver s = Z3_mk_solver(z);
    if (!s) return Z3_L_UNDEF;
    Z3_solver_inc_ref(z, s);
    if (deadline > 0) {
        double left = deadline - now_ms();
        Z3_params p = Z3_mk_params(z);
        Z3_params_inc_ref(z, p);
        Z3_params_set_uint(z, p, Z3_mk_string_symbol(z, "timeout"),
                           left > 1 ? (unsigned)left : 1);
        Z3_solver_set_params(z, s, p);
        Z3_params_dec_ref(z, p);
    }
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
    Z3_solver_dec_ref(z, s);
    return res;
}

/* Queries the differing elements one by one, cheapest first; the first sat
 * ends the search (refutation), an unknown leaves the rule unknown unless a
 * later element is sat. */
static xf_status solve(check *k, const xf_rule *r, double t0, xf_bounded *out, xf_error *err)
{
    if (k->n_diff == 0) {
        out->result = XF_BOUNDED_VALID;
        snprintf(out->detail, sizeof out->detail, "outputs have equal normal forms");
        return XF_OK;
    }
    unsigned budget = xf_verifier_options(k->v)->timeout_ms;
    double deadline = budget ? t0 + budget : 0;
    Z3_model m = NULL;
    int n_unknown = 0;
    char why[128] = "";
    for (int i = 0; i < k->n_diff && !m; i++) {
        Z3_model mi = NULL;
        Z3_lbool res = query(k, i, deadline, &mi, why, sizeof why);
        if (res == Z3_L_TRUE) m = mi;
        else if (res == Z3_L_UNDEF) n_unknown++;
        if (res == Z3_L_UNDEF && deadline > 0 && now_ms() >= deadline) break;
    }
    if (!m && n_unknown == 0) {
        out->result = XF_BOUNDED_VALID;
        snprintf(out->detail, sizeof out->detail, "unsat for each of %d differing output elements",
                 k->n_diff);
        return XF_OK;
    }
    if (!m) {
        out->result = XF_BOUNDED_UNKNOWN;
        snprintf(out->detail, sizeof out->detail,
                 "solver gave up on %d of %d differing output elements: %s", n_unknown, k->n_diff,
                 why);
        return XF_OK;
    }
    xf_status st = model_inputs(k, r, m, out, err);
    Z3_model_dec_ref(k->c.z, m);
    double d = 0;
    if (st == XF_OK) st = confirm(r, out, &d, err);
    if (st != XF_OK) return st;
    if (out->output >= 0) {
        out->result = XF_BOUNDED_REFUTED;
        snprintf(out->detail, sizeof out->detail,
                 "counterexample: output %d differs by %.6g in the float interpreter",
                 out->output, d);
    } else if (!k->c.uses_uf) {
        out->result = XF_BOUNDED_REFUTED;
        out->output = 0;
        snprintf(out->detail, sizeof out->detail,
                 "counterexample in exact arithmetic (float32 differs by only %.3g)", d);
    } else {
        out->result = XF_BOUNDED_UNKNOWN;
        snprintf(out->detail, sizeof out->detail,
                 "differs only for some abstract non-polynomial function; floats agree");
    }
    return XF_OK;
}

xf_status xf_verify_bounded(xf_verifier *v, const xf_rule *r, xf_bounded *out, xf_error *err)
{
    xf_error local;
    xf_error_clear(&local);
    if (!err) err = &local;
    xf_bounded_free(out);
    double t0 = now_ms();
    const xf_verify_options *o = xf_verifier_options(v);
    check k;
    memset(&k, 0, sizeof k);
    k.v = v;
    xf_status st = xf_rule_validate(r, err);
    if (st == XF_OK) st = make_context(&k, o, err);
    if (st == XF_OK) st = make_inputs(&k, r, o->bounded_max_dim > 0 ? o->bounded_max_dim : 4, err);
    if (st == XF_OK) st = xfb_elaborate(&k.c, &r->src, k.src, err);
    if (st == XF_OK) st = xfb_elaborate(&k.c, &r->dst, k.dst, err);
    if (st == XF_OK) st = collect_diffs(&k, r, err);
    if (st == XF_OK) st = solve(&k, r, t0, out, err);
    if (st == XF_ERR_UNSUPPORTED) {
        xf_bounded_free(out);
        out->result = XF_BOUNDED_UNSUPPORTED;
        snprintf(out->detail, sizeof out->detail, "%s", err->msg);
        xf_error_clear(err);
        st = XF_OK;
    }
    out->n_shapes = st == XF_OK && out->result != XF_BOUNDED_UNSUPPORTED;
    out->time_ms = now_ms() - t0;
    check_free(&k, r);
    if (st != XF_OK) xf_bounded_free(out);
    return st;
}
