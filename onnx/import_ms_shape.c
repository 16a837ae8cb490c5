/*
 * import_ms_shape.c — output shapes of the com.microsoft operators that
 * ONNX Runtime's offline optimisation and its transformers optimizer write
 * (Attention, EmbedLayerNormalization, SkipLayerNormalization, FusedMatMul,
 * FusedGemm, Gelu, FastGelu, BiasGelu...), and of the standard quantised
 * MatMulInteger and QLinearMatMul, for models that carry no value_info for
 * them (ORT writes none), and of MatMul and Gemm, which stay opaque on
 * float16 and float64 data. rlflow keeps these nodes opaque, written back as
 * they came; only their shapes are needed. An operator not listed here
 * still needs value_info (the importer's error says how to record it).
 */
#include "import_internal.h"

#include <string.h>

static int is(const char *op, const char *const *list)
{
    for (int i = 0; list[i]; i++)
        if (strcmp(op, list[i]) == 0) return 1;
    return 0;
}

/* A [.., M, K] x B [.., K, N] (a rank-1 operand has no rule here) with the trailing two dims of each swapped
 * where asked, batch dims broadcast. 0: no rule (rank < 2, mismatch). */
static int matmul_shape(const xf_shape *a, const xf_shape *b, int ta, int tb, xf_shape *out)
{
    if (a->rank < 2 || b->rank < 2) return 0;
    int64_t m = a->dims[a->rank - (ta ? 1 : 2)], ka = a->dims[a->rank - (ta ? 2 : 1)];
    int64_t kb = b->dims[b->rank - (tb ? 1 : 2)], n = b->dims[b->rank - (tb ? 2 : 1)];
    if (ka != kb) return 0;
    xf_shape ba = *a, bb = *b, bo;
    ba.rank -= 2;
    bb.rank -= 2;
    if (xf_shape_broadcast(&ba, &bb, &bo, NULL) != XF_OK || bo.rank + 2 > XF_MAX_DIMS) return 0;
    *out = bo;
    out->dims[out->rank++] = m;
    out->dims[out->rank++] = n;
    return 1;
}

/* [d0, d1, .., dn-2, dn-1] -> [d1, .., dn-2, d0, dn-1]; 0 below rank 3. */
static int batch_first_moved(xf_shape *s)
{
    if (s->rank < 3) return 0;
    int64_t d0 = s->dims[0];
    for (int i = 0; i < s->rank - 2; i++) s->dims[i] = s->dims[i + 1];
    s->dims[s->rank - 2] = d0;
    return 1;
}

static int attention(imp_state *st, int k, xf_dtype *dt, xf_shape *sh, xf_error *err)
{
    xf_shape w;
    xf_dtype wdt;
    int64_t sizes[3];
    int n = 0;
    if (k != 0 || ox_in_info(st, 0, dt, sh, err) != XF_OK || ox_in_info(st, 1, &wdt, &w, err) != XF_OK ||
        ox_attr_ints(st, "qkv_hidden_sizes", sizes, 3, &n, err) != XF_OK)
        return -1;
    if (sh->rank != 3 || w.rank != 2) return 0;
    sh->dims[2] = n == 3 ? sizes[2] : w.dims[1] / 3;
    return 1;
}

/* EmbedLayerNormalization: output [B, S, H] (0, 2), mask_index [B] int32 (1). */
static int embed_ln(imp_state *st, int k, xf_dtype *dt, xf_shape *sh, xf_error *err)
{
    xf_shape ids, word;
    xf_dtype idt;
    if (ox_in_info(st, 0, &idt, &ids, err) != XF_OK || ox_in_info(st, 2, dt, &word, err) != XF_OK)
        return -1;
    if (ids.rank != 2 || word.rank != 2 || k > 2) return 0;
    if (k == 1) {
        *dt = XF_I32;
        *sh = xf_shape_make(1, ids.dims);
        return 1;
    }
    int64_t d[3] = {ids.dims[0], ids.dims[1], word.dims[1]};
    *sh = xf_shape_make(3, d);
    return 1;
}

int ox_ms_infer(imp_state *st, int k, xf_dtype *dt, xf_shape *sh, xf_error *err)
{
    static const char *const same[] = {"Gelu", "FastGelu", "BiasGelu", "QuickGelu", "BiasAdd",
                                       "BiasDropout", NULL};
    static const char *const norm[] = {"SkipLayerNormalization", "SkipSimplifiedLayerNormalization",
                                       "SimplifiedLayerNormalization", "LayerNormalization", NULL};
    const char *domain = ox_str(st->node->domain), *op = ox_str(st->node->op_type);
    int ms = strcmp(domain, "com.microsoft") == 0;
    if (!ms && domain[0] && strcmp(domain, "ai.onnx") != 0) return 0;
    /* ORT registers SimplifiedLayerNormalization (RMS norm) in the ONNX domain */
    static const char *const onnx_ops[] = {"MatMul", "Gemm", "MatMulInteger", "QLinearMatMul",
                                           "SimplifiedLayerNormalization", NULL};
    if (!ms && !is(op, onnx_ops)) return 0;
    if (ox_in_sym(st, 0) < 0) return 0;
    if (ms && is(op, same)) {
        if (k != 0) return 0;
        return ox_in_info(st, 0, dt, sh, err) == XF_OK ? 1 : -1;
    }
    if (is(op, norm) && (ms || strcmp(op, "SimplifiedLayerNormalization") == 0)) {
        if (ox_in_info(st, 0, dt, sh, err) != XF_OK) return -1;
        /* outputs 1, 2: mean and inverse std dev, the last dim 1; 3: input + skip + bias */
        if (k == 1 || k == 2) {
            if (sh->rank < 1) return 0;
            sh->dims[sh->rank - 1] = 1;
            *dt = XF_F32;
        }
        return k <= 3 ? 1 : 0;
    }
    if (ms && strcmp(op, "Attention") == 0) return attention(st, k, dt, sh, err);
    if (ms && strcmp(op, "EmbedLayerNormalization") == 0) return embed_ln(st, k, dt, sh, err);
    /* A x B: FusedMatMul (transA/transB; transBatchA/B move dim 0 of a
     * rank >= 3 operand to just before its last: [d0, d1.., dn-1] is taken
     * as [d1.., d0, dn-1] first), FusedGemm
     * (transA/transB), MatMulInteger (int32), QLinearMatMul (a, a_scale,
     * a_zp, b, ...: B is input 3, the output y_zero_point's dtype) */
    int b_in = strcmp(op, "QLinearMatMul") == 0 ? 3 : 1;
    if (ms && strcmp(op, "FusedMatMul") != 0 && strcmp(op, "FusedGemm") != 0) return 0;
    if (k != 0 || ox_in_sym(st, b_in) < 0) return 0;
    int64_t ta = 0, tb = 0, tba = 0, tbb = 0;
    if (ox_attr_int(st, "transA", 0, &ta, err) != XF_OK ||
        ox_attr_int(st, "transB", 0, &tb, err) != XF_OK ||
        ox_attr_int(st, "transBatchA", 0, &tba, err) != XF_OK ||
        ox_attr_int(st, "transBatchB", 0, &tbb, err) != XF_OK)
        return -1;
    xf_shape a, b;
    xf_dtype bdt;
    if (ox_in_info(st, 0, dt, &a, err) != XF_OK || ox_in_info(st, b_in, &bdt, &b, err) != XF_OK)
        return -1;
    if ((tba && !batch_first_moved(&a)) || (tbb && !batch_first_moved(&b))) return 0;
    if (!matmul_shape(&a, &b, ta != 0, tb != 0, sh)) return 0;
    if (strcmp(op, "MatMulInteger") == 0) *dt = XF_I32;
    if (b_in == 3) {
        xf_shape z;
        if (ox_in_sym(st, 7) < 0) return 0;
        if (ox_in_info(st, 7, dt, &z, err) != XF_OK) return -1;
    }
    return 1;
}
