/*
 * verifier.c — the verifier object: options, one Z3 context (its error
 * handler records errors instead of exiting the process), solver parameters
 * (timeout, resource limit, memory limit, seed), the axiom switches and the
 * bounded check's kept operator patterns (bounded_patterns.c), and the
 * reading of Z3's reasons and resource counter shared by both checks.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify/verify_internal.h"

void xf_verify_options_init(xf_verify_options *o)
{
    o->timeout_ms = XF_VERIFY_TIMEOUT_MS;
    o->rlimit = XF_VERIFY_RLIMIT;
    o->proof_rlimit = XF_VERIFY_PROOF_RLIMIT;
    o->cross_rlimit = XF_VERIFY_CROSS_RLIMIT;
    o->cross_shapes = 1;
    o->memory_mb = 0;
    o->bounded_max_dim = 4;
    o->bounded_max_shapes = 64;
    o->seed = 0;
    o->probe_first = 1;
}

unsigned vf_proof_rlimit(const xf_verify_options *o)
{
    if (!o->rlimit || !o->proof_rlimit) return o->rlimit ? o->rlimit : o->proof_rlimit;
    return o->rlimit < o->proof_rlimit ? o->rlimit : o->proof_rlimit;
}

/* Z3 calls this instead of exiting; the code stays readable with
 * Z3_get_error_code until the next API call. */
static void on_z3_error(Z3_context c, Z3_error_code e)
{
    (void)c;
    (void)e;
}

int vf_verifier_z3_error(xf_verifier *v, const char *what, xf_error *err)
{
    Z3_error_code e = Z3_get_error_code(v->ctx);
    if (e == Z3_OK) return 0;
    XF_FAIL(err, XF_ERR_INTERNAL, "Z3 failed while %s: %s", what, Z3_get_error_msg(v->ctx, e));
    return 1;
}

xf_status xf_verifier_new(const xf_verify_options *o, xf_verifier **out, xf_error *err)
{
    *out = NULL;
    xf_verifier *v = xf_calloc(1, sizeof *v);
    if (!v) return XF_FAIL(err, XF_ERR_NOMEM, "verify: out of memory creating a verifier");
    if (o) v->opt = *o;
    else xf_verify_options_init(&v->opt);
    v->patterns = vf_patterns_new();
    if (!v->patterns) {
        xf_free(v);
        return XF_FAIL(err, XF_ERR_NOMEM, "verify: out of memory creating a verifier");
    }
    Z3_config cfg = Z3_mk_config();
    v->ctx = Z3_mk_context(cfg);
    Z3_del_config(cfg);
    if (!v->ctx) {
        vf_patterns_free(v->patterns);
        xf_free(v);
        return XF_FAIL(err, XF_ERR_INTERNAL, "verify: Z3 could not create a context");
    }
    Z3_set_error_handler(v->ctx, on_z3_error);
    Z3_context c = v->ctx;
    v->params = Z3_mk_params(c);
    Z3_params_inc_ref(c, v->params);
    if (v->opt.timeout_ms)
        Z3_params_set_uint(c, v->params, Z3_mk_string_symbol(c, "timeout"), v->opt.timeout_ms);
    /* Per check call: Z3 counts its work from the call's start. These
     * parameters are the proof's (prove.c); the bounded check sets its own. */
    unsigned proof_rlimit = vf_proof_rlimit(&v->opt);
    if (proof_rlimit)
        Z3_params_set_uint(c, v->params, Z3_mk_string_symbol(c, "rlimit"), proof_rlimit);
    Z3_params_set_uint(c, v->params, Z3_mk_string_symbol(c, "random_seed"), v->opt.seed);
    /* Proofs need E-matching only; model-based instantiation would spend the
     * whole timeout on rules the axioms cannot prove. */
    Z3_params_set_bool(c, v->params, Z3_mk_string_symbol(c, "smt.mbqi"), false);
    if (v->opt.memory_mb) {
        char mb[32];
        snprintf(mb, sizeof mb, "%u", v->opt.memory_mb);
        Z3_global_param_set("memory_max_size", mb);
    }
    xf_status st = vf_axioms_load(v, err);
    if (st != XF_OK) {
        xf_verifier_free(v);
        return st;
    }
    *out = v;
    return XF_OK;
}

void xf_verifier_free(xf_verifier *v)
{
    if (!v) return;
    xf_free(v->axioms);
    xf_free(v->lits);
    xf_free(v->enabled);
    if (v->prover) Z3_solver_dec_ref(v->ctx, v->prover);
    if (v->bounded_ctx) Z3_del_context(v->bounded_ctx);
    if (v->params) Z3_params_dec_ref(v->ctx, v->params);
    Z3_del_context(v->ctx);
    vf_patterns_free(v->patterns);
    xf_free(v);
}

const xf_verify_options *vf_verifier_options(const xf_verifier *v)
{
    return &v->opt;
}

xf_status xf_verifier_set_axiom(xf_verifier *v, int i, int enabled, xf_error *err)
{
    if (i < 0 || i >= xf_verify_axiom_count())
        return XF_FAIL(err, XF_ERR_INVALID, "verify: no axiom number %d (there are %d)", i,
                       xf_verify_axiom_count());
    v->enabled[i] = enabled ? 1 : 0;
    return XF_OK;
}

Z3_solver vf_verifier_solver(xf_verifier *v)
{
    Z3_solver s = Z3_mk_solver(v->ctx);
    Z3_solver_inc_ref(v->ctx, s);
    Z3_solver_set_params(v->ctx, s, v->params);
    return s;
}

const char *xf_verify_why_name(xf_verify_why w)
{
    switch (w) {
    case XF_WHY_NONE: return "-";
    case XF_WHY_TIMEOUT: return "timeout";
    case XF_WHY_RLIMIT: return "rlimit";
    case XF_WHY_MEMORY: return "memory";
    case XF_WHY_INCOMPLETE: return "incomplete";
    case XF_WHY_UNSUPPORTED: return "unsupported";
    }
    return "?";
}

xf_verify_why vf_why_of_reason(const char *reason, int rlimit_spent)
{
    if (!reason) return XF_WHY_INCOMPLETE;
    if (strstr(reason, "resource limit") || rlimit_spent) return XF_WHY_RLIMIT;
    if (strstr(reason, "memory")) return XF_WHY_MEMORY;
    if (strstr(reason, "timeout") || strstr(reason, "canceled")) return XF_WHY_TIMEOUT;
    return XF_WHY_INCOMPLETE;
}

uint64_t vf_rlimit_count(Z3_context c, Z3_solver s)
{
    Z3_stats st = Z3_solver_get_statistics(c, s);
    if (!st) return 0;
    Z3_stats_inc_ref(c, st);
    uint64_t n = 0;
    unsigned size = Z3_stats_size(c, st);
    for (unsigned i = 0; i < size; i++)
        if (strcmp(Z3_stats_get_key(c, st, i), "rlimit count") == 0)
            n = Z3_stats_is_uint(c, st, i) ? Z3_stats_get_uint_value(c, st, i)
                                           : (uint64_t)Z3_stats_get_double_value(c, st, i);
    Z3_stats_dec_ref(c, st);
    return n;
}

const char *xf_proof_result_name(xf_proof_result r)
{
    switch (r) {
    case XF_PROOF_PROVED: return "proved";
    case XF_PROOF_FAILED: return "failed";
    case XF_PROOF_UNKNOWN: return "unknown";
    case XF_PROOF_UNSUPPORTED: return "unsupported";
    }
    return "?";
}
