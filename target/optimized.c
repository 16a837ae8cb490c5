/*
 * optimized.c — xf_target_write_optimized: ONNX Runtime's own offline
 * optimisation of a model file (session option SetOptimizedModelFilePath),
 * at the target's optimisation level and threads. What ORT writes is what
 * users deploy after `onnxruntime.transformers` or Olive: its fused
 * operators (Attention, SkipLayerNormalization, FusedMatMul, BiasGelu...)
 * are com.microsoft nodes, which rlflow keeps as opaque nodes; so rlflow
 * can be measured after ORT's optimiser, not only before it.
 */
#include <stdio.h>

#include "target/model_internal.h"

xf_status xf_target_write_optimized(xf_target *t, const char *in, const char *out,
                                    xf_error *err)
{
    const xf_ort_api *a = &t->ort.api;
    OrtSessionOptions *so = NULL;
    OrtSession *session = NULL;
    xf_status s = target_ort_check(a, a->CreateSessionOptions(&so), err, "creating session options");
    if (s == XF_OK)
        s = target_ort_check(a, a->SetIntraOpNumThreads(so, t->threads), err, "setting threads");
    if (s == XF_OK)
        s = target_ort_check(a, a->SetSessionGraphOptimizationLevel(so, t->ort_level), err,
                             "setting the optimisation level");
    if (s == XF_OK)
        s = target_ort_check(a, a->SetOptimizedModelFilePath(so, out), err,
                             "setting the optimised model's path");
    if (s == XF_OK)
        s = target_ort_check(a, a->CreateSession(t->env, in, so, &session), err,
                             "optimising the model");
    if (s != XF_OK) xf_error_prefix(err, "%s", in);
    if (session) a->ReleaseSession(session);
    if (so) a->ReleaseSessionOptions(so);
    return s;
}
