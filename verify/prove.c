/*
 * prove.c — the axiomatic proof of a rule: for every mapped output i, check
 * `axioms ∧ facts ∧ src_i ≠ dst_i` (facts: shape facts of the encoding,
 * prove_encode.c) with each enabled axiom switched on by its
 * assumption literal. Unsat for every output means proved, and the union of
 * the unsat cores names the axioms used; sat means the enabled axioms do
 * not imply the rule; unknown (timeout, resource limit, memory, incomplete
 * quantifier instantiation) is kept as unknown, with the class of Z3's reason
 * in out->why. Each query has the verifier's rlimit (Z3's deterministic work
 * count) besides its timeout, so the answer does not depend on the machine's
 * load. One solver per verifier holds the guarded axioms; each query runs
 * inside push/pop. A proved rule lists the dims its encoding read at their
 * own size (out->held): it is proved where they keep it (the worker narrows
 * the rule's domain to that, xf_domain_of_rule_held). The sizes the encoding
 * passes as parameters (a concat's parts, a slice's bounds) are Int terms
 * over the rule's dims, with the conditions of its domain among the facts
 * (domain_facts): the proof is one for every size the domain admits.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify/verify_internal.h"
#include "verify/prove_internal.h"

static xf_status prover(xf_verifier *v, xf_error *err)
{
    if (v->prover) return XF_OK;
    Z3_context c = v->ctx;
    v->prover = vf_verifier_solver(v);
    for (int i = 0; i < xf_verify_axiom_count(); i++)
        Z3_solver_assert(c, v->prover, Z3_mk_implies(c, v->lits[i], v->axioms[i]));
    if (vf_verifier_z3_error(v, "asserting the axioms", err)) return err ? err->code : XF_ERR_INTERNAL;
    return XF_OK;
}

static void hold(xf_proof *p, const xf_rule_dim_size *d)
{
    for (int i = 0; i < p->n_held; i++)
        if (p->held[i].side == d->side && p->held[i].value == d->value && p->held[i].axis == d->axis)
            return;
    if (p->n_held == XF_VERIFY_MAX_HELD) p->held_all = 1;
    else p->held[p->n_held++] = *d;
}

void vf_prove_hold(vf_held *h, const xf_graph *g, int value, int axis)
{
    if (!h || !h->proof) return;
    xf_rule_dim_size d = {h->side, value, axis, g->values[value].shape.dims[axis]};
    hold(h->proof, &d);
}

Z3_ast vf_prove_guarded(xf_verifier *v, vf_held *h, const xf_graph *g, int value, const int *axes,
                        int n, Z3_ast fact)
{
    if (!h || !h->proof) return fact;
    if (h->n_guards == VF_MAX_GUARDS || n > 2) {
        for (int i = 0; i < n; i++) vf_prove_hold(h, g, value, axes[i]);
        return fact;
    }
    vf_guard *q = &h->guard[h->n_guards++];
    q->lit = Z3_mk_fresh_const(v->ctx, "own", Z3_mk_bool_sort(v->ctx));
    q->n = n;
    for (int i = 0; i < n; i++)
        q->dim[i] = (xf_rule_dim_size){h->side, value, axes[i], g->values[value].shape.dims[axes[i]]};
    return Z3_mk_implies(v->ctx, q->lit, fact);
}

Z3_ast vf_form_term(xf_verifier *v, Z3_ast const *var, const xf_dim_form *f)
{
    Z3_context c = v->ctx;
    Z3_sort is = Z3_mk_int_sort(c);
    Z3_ast t[XF_DOMAIN_MAX_TERMS + 1];
    int n = 0;
    for (int i = 0; i < f->n; i++) {
        Z3_ast k[2] = {Z3_mk_int64(c, f->coef[i], is), var[f->var[i]]};
        t[n++] = f->coef[i] == 1 ? var[f->var[i]] : Z3_mk_mul(c, 2, k);
    }
    if (f->c || n == 0) t[n++] = Z3_mk_int64(c, f->c, is);
    Z3_ast sum = n == 1 ? t[0] : Z3_mk_add(c, (unsigned)n, t);
    return f->den == 1 ? sum : Z3_mk_div(c, sum, Z3_mk_int64(c, f->den, is));
}

/* The domain's conditions over the variables of `forms` (each an Int
 * constant in var, made here, at least 1: a dim of any tensor the matcher
 * meets, and of every shape the bounded check plans), conjoined to facts. */
static Z3_ast domain_facts(xf_verifier *v, const xf_rule_forms *forms, Z3_ast *var, Z3_ast facts)
{
    Z3_context c = v->ctx;
    Z3_sort is = Z3_mk_int_sort(c);
    for (int k = 0; k < forms->n_vars; k++) { /* every size at least 1, as at any shape */
        char name[32];
        snprintf(name, sizeof name, "dim%d", k);
        var[k] = Z3_mk_const(c, Z3_mk_string_symbol(c, name), is);
        Z3_ast two[2] = {facts, Z3_mk_ge(c, var[k], Z3_mk_int64(c, 1, is))};
        facts = Z3_mk_and(c, 2, two);
    }
    for (int i = 0; i < forms->n_cond; i++) {
        const xf_dim_cond *a = &forms->cond[i];
        Z3_ast l = vf_form_term(v, var, &a->l), zero = Z3_mk_int64(c, 0, is), f;
        if (a->kind == XF_DOM_GE) f = Z3_mk_ge(c, l, zero);
        else if (a->kind == XF_DOM_MOD) f = Z3_mk_eq(c, Z3_mk_mod(c, l, Z3_mk_int64(c, a->m, is)), zero);
        else f = Z3_mk_eq(c, l, zero);
        Z3_ast two[2] = {facts, f};
        facts = Z3_mk_and(c, 2, two);
    }
    return facts;
}

/* A proof that read a size the matcher chooses (a generator's dim tied to
 * no input dim: a softmax over a ones constant's last axis of 1) at its own
 * value holds nowhere a domain can say: unknown, not proved. */
static void held_chosen(const xf_rule_forms *forms, xf_proof *out)
{
    for (int i = 0; i < out->n_held; i++) {
        const xf_rule_dim_size *h = &out->held[i];
        const xf_dim_form *f = &forms->dims[h->side][forms->off[h->side][h->value] + h->axis];
        for (int k = 0; k < f->n; k++) {
            if (!forms->chosen[f->var[k]]) continue;
            out->result = XF_PROOF_UNKNOWN;
            out->why = XF_WHY_INCOMPLETE;
            out->n_core = 0;
            out->core_names[0] = 0;
            snprintf(out->detail, sizeof out->detail,
                     "proved only at the own size %lld of dim %d of %s value %d, a size the matcher "
                     "chooses (no domain can hold it)",
                     (long long)h->size, h->axis, h->side ? "target" : "source", h->value);
            return;
        }
    }
}

static void proof_init(xf_proof *out)
{
    memset(out, 0, sizeof *out);
    out->result = XF_PROOF_PROVED;
    out->output = -1;
}

/* Adds the axioms of the solver's unsat core to out->core (kept ascending),
 * and holds the dims of the guarded facts it uses (held: NULL, none). */
static void add_core(xf_verifier *v, Z3_solver s, const vf_held *held, xf_proof *out)
{
    Z3_context c = v->ctx;
    Z3_ast_vector core = Z3_solver_get_unsat_core(c, s);
    Z3_ast_vector_inc_ref(c, core);
    unsigned n = Z3_ast_vector_size(c, core);
    for (unsigned j = 0; j < n; j++) {
        Z3_ast lit = Z3_ast_vector_get(c, core, j);
        for (int i = 0; held && i < held->n_guards; i++)
            if (Z3_is_eq_ast(c, lit, held->guard[i].lit))
                for (int k = 0; k < held->guard[i].n; k++) hold(out, &held->guard[i].dim[k]);
        for (int i = 0; i < xf_verify_axiom_count(); i++) {
            if (!Z3_is_eq_ast(c, lit, v->lits[i])) continue;
            int k = 0;
            while (k < out->n_core && out->core[k] < i) k++;
            if ((k < out->n_core && out->core[k] == i) || out->n_core == XF_VERIFY_MAX_CORE) break;
            memmove(&out->core[k + 1], &out->core[k], sizeof(int) * (size_t)(out->n_core - k));
            out->core[k] = i;
            out->n_core++;
            break;
        }
    }
    Z3_ast_vector_dec_ref(c, core);
}

/* One query: `goal` (a formula whose negation the axioms should refute) under
 * the enabled axioms except `skip` (-1: none) and the guarded facts' literals
 * (held: NULL, none). */
static xf_status query(xf_verifier *v, Z3_ast negated_goal, int skip, const vf_held *held,
                       xf_proof *out, int output, xf_error *err)
{
    Z3_context c = v->ctx;
    int n = xf_verify_axiom_count(), m = 0;
    Z3_ast *as = xf_malloc(sizeof *as * (size_t)(n + VF_MAX_GUARDS));
    if (!as) return XF_FAIL(err, XF_ERR_NOMEM, "verify: out of memory for assumptions");
    for (int i = 0; i < n; i++)
        if (v->enabled[i] && i != skip) as[m++] = v->lits[i];
    for (int i = 0; held && i < held->n_guards; i++) as[m++] = held->guard[i].lit;
    Z3_solver_push(c, v->prover);
    Z3_solver_assert(c, v->prover, negated_goal);
    uint64_t r0 = vf_rlimit_count(c, v->prover);
    Z3_lbool r = Z3_solver_check_assumptions(c, v->prover, (unsigned)m, as);
    uint64_t r1 = vf_rlimit_count(c, v->prover);
    out->rlimit_used += r1 > r0 ? r1 - r0 : 0;
    xf_free(as);
    xf_status st = XF_OK;
    if (vf_verifier_z3_error(v, "checking a rule", err)) {
        st = err ? err->code : XF_ERR_INTERNAL;
    } else if (r == Z3_L_FALSE) {
        add_core(v, v->prover, held, out);
    } else {
        out->result = r == Z3_L_TRUE ? XF_PROOF_FAILED : XF_PROOF_UNKNOWN;
        out->output = output;
        if (r == Z3_L_TRUE) {
            out->why = XF_WHY_INCOMPLETE;
            snprintf(out->detail, sizeof out->detail, "output %d: the axioms admit a model where the sides differ",
                     output);
        } else {
            Z3_string why = Z3_solver_get_reason_unknown(c, v->prover);
            unsigned limit = vf_proof_rlimit(&v->opt);
            int spent = limit && r1 > r0 && r1 - r0 >= limit;
            out->why = vf_why_of_reason(why, spent);
            snprintf(out->detail, sizeof out->detail, "output %d: solver gave up (%s)", output, why);
        }
    }
    Z3_solver_pop(c, v->prover, 1);
    return st;
}

static void core_names(xf_proof *out)
{
    xf_strbuf b = {out->core_names, sizeof out->core_names, 0, 0};
    for (int i = 0; i < out->n_core; i++)
        xf_strbuf_printf(&b, "%s%s", i ? "," : "", xf_verify_axiom(out->core[i])->name);
}

xf_status xf_verify_prove(xf_verifier *v, const xf_rule *r, xf_proof *out, xf_error *err)
{
    double t0 = xf_clock_now_ms();
    proof_init(out);
    xf_status st = prover(v, err);
    if (st != XF_OK) return st;
    int n = r->src.n_outputs;
    if (n != r->dst.n_outputs || n < 1)
        return XF_FAIL(err, XF_ERR_INVALID, "verify: rule sides have %d and %d outputs", n, r->dst.n_outputs);
    Z3_ast *so = xf_malloc(sizeof *so * (size_t)n * 2);
    if (!so) return XF_FAIL(err, XF_ERR_NOMEM, "verify: out of memory proving a rule");
    Z3_ast *dout = so + n;
    xf_error e2;
    Z3_ast facts = Z3_mk_true(v->ctx);
    xf_rule_dims dims;
    xf_prove_dims *pd = NULL;
    vf_held *held = xf_calloc(1, sizeof *held);
    int have_dims = 0;
    memset(&dims, 0, sizeof dims);
    if (!held) {
        xf_free(so);
        return XF_FAIL(err, XF_ERR_NOMEM, "verify: out of memory proving a rule");
    }
    held->proof = out;
    xf_rule_forms forms;
    vf_sizes sizes = {&forms, NULL, 0};
    st = xf_rule_forms_infer(r, &forms, &e2);
    if (st == XF_OK) {
        sizes.var = xf_malloc(sizeof *sizes.var * ((size_t)forms.n_vars + 1));
        if (!sizes.var) {
            xf_rule_forms_free(&forms);
            st = XF_FAIL(&e2, XF_ERR_NOMEM, "verify: out of memory proving a rule");
        }
    }
    if (st != XF_OK) {
        xf_free(so);
        xf_free(held);
        if (st != XF_ERR_UNSUPPORTED) {
            if (err) *err = e2;
            return st;
        }
        out->result = XF_PROOF_UNSUPPORTED;
        out->why = XF_WHY_UNSUPPORTED;
        snprintf(out->detail, sizeof out->detail, "%s", e2.msg);
        out->time_ms = xf_clock_now_ms() - t0;
        return XF_OK;
    }
    facts = domain_facts(v, &forms, sizes.var, facts);
    if (xf_rule_has_views(r)) {
        pd = xf_calloc(1, sizeof *pd);
        st = pd ? xf_rule_dims_infer(r, &dims, err)
                : XF_FAIL(err, XF_ERR_NOMEM, "verify: out of memory proving a rule");
        if (st != XF_OK) {
            xf_free(pd);
            xf_free(so);
            xf_free(held);
            xf_free(sizes.var);
            xf_rule_forms_free(&forms);
            return st;
        }
        have_dims = 1;
        pd->dims = &dims;
    }
    if (pd && !dims.ok)
        st = XF_FAIL(&e2, XF_ERR_UNSUPPORTED, "its reshapes' sizes do not follow its dims: %s",
                     dims.why ? dims.why : "?");
    else
        st = vf_prove_encode(v, &r->src, pd, held, &sizes, so, &facts, &e2);
    if (pd) pd->side = 1;
    held->side = sizes.side = 1;
    if (st == XF_OK) st = vf_prove_encode(v, &r->dst, pd, held, &sizes, dout, &facts, &e2);
    if (st == XF_ERR_UNSUPPORTED) {
        out->result = XF_PROOF_UNSUPPORTED;
        out->why = XF_WHY_UNSUPPORTED;
        snprintf(out->detail, sizeof out->detail, "%s", e2.msg);
        st = XF_OK;
    } else if (st != XF_OK) {
        if (err) *err = e2;
    } else {
        for (int i = 0; i < n && st == XF_OK && out->result == XF_PROOF_PROVED; i++) {
            if (Z3_is_eq_ast(v->ctx, so[i], dout[i])) continue;
            Z3_ast goal[2] = {facts, Z3_mk_not(v->ctx, Z3_mk_eq(v->ctx, so[i], dout[i]))};
            st = query(v, Z3_mk_and(v->ctx, 2, goal), -1, held, out, i, err);
        }
        if (out->result == XF_PROOF_PROVED) core_names(out);
        else out->n_core = 0;
    }
    if (out->result == XF_PROOF_PROVED) held_chosen(&forms, out);
    if (out->result != XF_PROOF_PROVED) out->n_held = out->held_all = 0;
    xf_free(so);
    xf_free(held);
    xf_free(sizes.var);
    xf_rule_forms_free(&forms);
    if (have_dims) xf_rule_dims_free(&dims);
    xf_free(pd);
    out->time_ms = xf_clock_now_ms() - t0;
    return st;
}

xf_status xf_verifier_prepare(xf_verifier *v, xf_error *err)
{
    xf_status st = prover(v, err);
    if (st == XF_OK) st = vf_bounded_context_ahead(v, err);
    if (st != XF_OK) return st;
    Z3_context c = v->ctx;
    Z3_ast a = Z3_mk_const(c, Z3_mk_string_symbol(c, "prepare_a"), v->tensor);
    Z3_ast b = Z3_mk_const(c, Z3_mk_string_symbol(c, "prepare_b"), v->tensor);
    Z3_ast ab[2] = {a, b}, ba[2] = {b, a};
    Z3_ast goal = Z3_mk_not(c, Z3_mk_eq(c, Z3_mk_app(c, v->fns[XF_AX_EWADD], 2, ab),
                                         Z3_mk_app(c, v->fns[XF_AX_EWADD], 2, ba)));
    xf_proof p;
    proof_init(&p);
    return query(v, goal, -1, NULL, &p, 0, err);
}

xf_status xf_verify_axiom_redundant(xf_verifier *v, int i, xf_proof *out, xf_error *err)
{
    double t0 = xf_clock_now_ms();
    proof_init(out);
    if (i < 0 || i >= xf_verify_axiom_count())
        return XF_FAIL(err, XF_ERR_INVALID, "verify: no axiom number %d (there are %d)", i,
                       xf_verify_axiom_count());
    xf_status st = prover(v, err);
    if (st == XF_OK) st = query(v, Z3_mk_not(v->ctx, v->axioms[i]), i, NULL, out, 0, err);
    if (st == XF_OK && out->result == XF_PROOF_PROVED) core_names(out);
    else out->n_core = 0;
    out->time_ms = xf_clock_now_ms() - t0;
    return st;
}
