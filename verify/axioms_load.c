/*
 * axioms_load.c — declares the axiomatic encoding in a verifier's Z3
 * context: the uninterpreted tensor sort T, one uninterpreted function per
 * operator (Int parameters first, tensors last; see xf_ax_fn in
 * verify_internal.h), the shape predicates hw1 and scalar and the shape
 * functions shp, rnk and lastd (prove_encode.c states their values), and parses every axiom of the table (axioms.c) against
 * those declarations, each paired with a fresh Boolean assumption literal
 * so an unsat core names the axioms a proof used.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verify/verify_internal.h"

typedef struct fn_sig {
    const char *name;
    int n_int, n_tensor; /* Int parameters, then tensor arguments */
    int predicate;       /* 1: Bool-valued (a shape fact), 2: Int-valued (a shape id), else a tensor */
} fn_sig;

static const fn_sig sigs[XF_AX_FN_COUNT] = {
    [XF_AX_EWADD] = {"ewadd", 0, 2},     [XF_AX_EWMUL] = {"ewmul", 0, 2},
    [XF_AX_SMUL] = {"smul", 0, 2},       [XF_AX_MATMUL] = {"matmul", 0, 2},
    [XF_AX_RELU] = {"relu", 0, 1},       [XF_AX_SIGMOID] = {"sigmoid", 0, 1},
    [XF_AX_TANH] = {"tanh", 0, 1},       [XF_AX_GELU] = {"gelu", 0, 1},
    [XF_AX_ERF] = {"erf", 0, 1},         [XF_AX_EXP] = {"exp", 0, 1},
    [XF_AX_TRANS] = {"trans", 0, 1},     [XF_AX_CONV] = {"conv", 5, 2},
    [XF_AX_AVGPOOL] = {"avgpool", 5, 1}, [XF_AX_MAXPOOL] = {"maxpool", 5, 1},
    [XF_AX_CONCAT] = {"concat", 3, 2},   [XF_AX_SLICE] = {"slice", 4, 1},
    [XF_AX_ENLARGE] = {"enlarge", 2, 1}, [XF_AX_ICONV] = {"iconv", 2, 0},
    [XF_AX_IMAT] = {"imat", 0, 0},       [XF_AX_ONES] = {"ones", 0, 0},
    [XF_AX_POOL] = {"pool", 2, 0},       [XF_AX_ZEROS] = {"zeros", 0, 0},
    [XF_AX_SOFTMAX] = {"softmax", 1, 1}, [XF_AX_LAYERNORM] = {"layernorm", 1, 3},
    [XF_AX_MEAN] = {"mean", 1, 1},       [XF_AX_LNORM] = {"lnorm", 1, 1},       [XF_AX_HW1] = {"hw1", 0, 1, 1},
    [XF_AX_ZT] = {"zt", 1 + XF_MAX_DIMS, 0},   [XF_AX_PSCALE] = {"pscale", 2, 0},
    [XF_AX_SCALAR] = {"scalar", 0, 1, 1},
    [XF_AX_FLAT] = {"flat", 0, 1},       [XF_AX_UNFLAT] = {"unflat", 1, 1},
    [XF_AX_HSPLIT] = {"hsplit", 1, 1},   [XF_AX_HMERGE] = {"hmerge", 0, 1},
    [XF_AX_VIEW] = {"view", 1, 1},       [XF_AX_SHP] = {"shp", 0, 1, 2},
    [XF_AX_RNK] = {"rnk", 0, 1, 2},      [XF_AX_LASTD] = {"lastd", 1, 0, 2},
    [XF_AX_POW] = {"pow", 0, 2},         [XF_AX_TSWAP] = {"tswap", 1, 1},
    [XF_AX_HNUM] = {"hnum", 1, 0, 2},
};

static xf_status declare(xf_verifier *v, xf_error *err)
{
    Z3_context c = v->ctx;
    Z3_sort int_sort = Z3_mk_int_sort(c);
    v->tensor = Z3_mk_uninterpreted_sort(c, Z3_mk_string_symbol(c, "T"));
    for (int f = 0; f < XF_AX_FN_COUNT; f++) {
        Z3_sort dom[8];
        unsigned n = 0;
        for (int i = 0; i < sigs[f].n_int; i++) dom[n++] = int_sort;
        for (int i = 0; i < sigs[f].n_tensor; i++) dom[n++] = v->tensor;
        Z3_sort range = sigs[f].predicate == 1 ? Z3_mk_bool_sort(c)
                        : sigs[f].predicate == 2 ? int_sort
                                                 : v->tensor;
        v->fns[f] = Z3_mk_func_decl(c, Z3_mk_string_symbol(c, sigs[f].name), n, dom, range);
    }
    if (vf_verifier_z3_error(v, "declaring the operator functions", err)) return err ? err->code : XF_ERR_INTERNAL;
    return XF_OK;
}

xf_status vf_axioms_load(xf_verifier *v, xf_error *err)
{
    Z3_context c = v->ctx;
    int n = xf_verify_axiom_count();
    xf_status st = declare(v, err);
    if (st != XF_OK) return st;
    v->axioms = xf_calloc((size_t)n, sizeof *v->axioms);
    v->lits = xf_calloc((size_t)n, sizeof *v->lits);
    v->enabled = xf_malloc((size_t)n);
    if (!v->axioms || !v->lits || !v->enabled)
        return XF_FAIL(err, XF_ERR_NOMEM, "verify: out of memory loading %d axioms", n);
    Z3_symbol sort_name = Z3_mk_string_symbol(c, "T");
    Z3_symbol names[XF_AX_FN_COUNT];
    for (int f = 0; f < XF_AX_FN_COUNT; f++) names[f] = Z3_get_decl_name(c, v->fns[f]);
    for (int i = 0; i < n; i++) {
        const xf_axiom_info *ax = xf_verify_axiom(i);
        size_t len = strlen(ax->formula) + 16;
        char *text = xf_malloc(len);
        if (!text) return XF_FAIL(err, XF_ERR_NOMEM, "verify: out of memory parsing axiom %s", ax->name);
        snprintf(text, len, "(assert %s)", ax->formula);
        Z3_ast_vector vec = Z3_parse_smtlib2_string(c, text, 1, &sort_name, &v->tensor,
                                                    XF_AX_FN_COUNT, names, v->fns);
        xf_free(text);
        if (vf_verifier_z3_error(v, "parsing an axiom", err)) {
            xf_error_prefix(err, "axiom %s", ax->name);
            return err ? err->code : XF_ERR_INTERNAL;
        }
        Z3_ast_vector_inc_ref(c, vec);
        if (Z3_ast_vector_size(c, vec) != 1) {
            Z3_ast_vector_dec_ref(c, vec);
            return XF_FAIL(err, XF_ERR_INTERNAL, "axiom %s: expected one formula", ax->name);
        }
        v->axioms[i] = Z3_ast_vector_get(c, vec, 0);
        Z3_inc_ref(c, v->axioms[i]);
        Z3_ast_vector_dec_ref(c, vec);
        v->lits[i] = Z3_mk_const(c, Z3_mk_string_symbol(c, ax->name), Z3_mk_bool_sort(c));
        Z3_inc_ref(c, v->lits[i]);
        v->enabled[i] = 1;
    }
    return XF_OK;
}
