/*
 * model.h — private to target/: what an open target and a loaded model
 * hold, shared by target.c (open/close), model.c (sessions, runs,
 * outputs) and timing.c (alternating runs).
 */
#ifndef XF_TARGET_MODEL_H
#define XF_TARGET_MODEL_H

#include "target/ort.h"
#include "target/target.h"

struct xf_target {
    xf_ort ort;
    OrtEnv *env;
    OrtMemoryInfo *mem;  /* CPU memory: where our input buffers live */
    OrtAllocator *alloc; /* ONNX Runtime's default allocator (not owned) */
    int threads;
    int ort_level;       /* GraphOptimizationLevel value */
    char identity[192];
};

struct xf_target_model {
    xf_target *t;
    OrtSession *session;
    int n_in, n_out;
    xf_tensor *inputs;   /* graph-input order, from xf_graph_random_inputs */
    OrtValue **in_values; /* session-input order, over `inputs` */
    char **in_names, **out_names;
    OrtValue **outs;     /* the last run's outputs (NULL before a run) */
    int ran;
};

#endif /* XF_TARGET_MODEL_H */
