/*
 * model_internal.h — private to target/: what an open target and a loaded model
 * hold, shared by target.c (open/close), model.c (sessions, runs,
 * outputs), share.c (weights shared by the sessions) and timing.c
 * (alternating runs).
 */
#ifndef XF_TARGET_MODEL_INTERNAL_H
#define XF_TARGET_MODEL_INTERNAL_H

#include "target/ort_internal.h"
#include "target/target.h"

typedef struct xf_target_share xf_target_share;

/* Models whose weights are over this are handed to onnxruntime as files
 * with external data (share.c), never as one serialised buffer. */
#define XF_TARGET_INLINE_MAX ((size_t)1 << 30)

struct xf_target {
    xf_ort ort;
    xf_target_share *share; /* share.c: scratch directory, shared weights (NULL: none) */
    OrtEnv *env;
    OrtMemoryInfo *mem;  /* CPU memory: where our input buffers live */
    OrtAllocator *alloc; /* ONNX Runtime's default allocator (not owned) */
    int threads;
    int ort_level;       /* GraphOptimizationLevel value */
    const xf_onnx_dynamic *dims; /* symbolic dims graphs are exported with (NULL: none) */
    int export_failed;   /* the last load failed exporting its graph (xf_target_export_failed) */
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
    OrtValue **shared_vals; /* initializers over rlflow's buffers (share.c), released
                               after the session */
    int n_shared;
    /* called once the model's files are written, before its session is
     * created (xf_target_race_add_then); NULL: none */
    void (*written)(void *ctx);
    void *written_ctx;
};

/* xf_target_model_load_file with m->written set before the session is
 * created (timing.c's races). */
xf_status target_model_load_then(xf_target *t, const char *path, const xf_graph *g,
                                    uint64_t seed, void (*written)(void *), void *ctx,
                                    xf_target_model **out, xf_error *err);

/* outputs.c: the largest difference of b's last outputs from a's (see
 * xf_target_outputs_diff); both must have run. *worst (may be NULL): the
 * output that differs most (0 when none differs). */
xf_status target_models_diff(xf_target_model *a, xf_target_model *b, double *max_rel,
                             int *worst, xf_error *err);
/* share.c: whether g goes to onnxruntime through a file in the scratch
 * directory (it uses shared weights, or it is too big for one buffer). */
int target_share_wanted(const xf_target *t, const xf_graph *g);
/* Writes g there and opens m->session over it with options so, its shared
 * weights as initializers over rlflow's buffers. */
xf_status target_share_session(xf_target_model *m, const xf_graph *g, OrtSessionOptions *so,
                                  xf_error *err);
/* Ends sharing and removes the scratch directory (target close). */
void target_share_free(xf_target *t);

/* scratch.c: makes the scratch directory dir (n bytes) under $TMPDIR (else
 * /tmp), with an owner file naming this process and host, after sweeping
 * the scratch directories there whose owner on this host has ended. */
xf_status target_scratch_make(char *dir, size_t n, xf_error *err);
/* Removes dir's regular files and dir ("" : nothing). */
void target_scratch_remove(const char *dir);

#endif /* XF_TARGET_MODEL_INTERNAL_H */
