/*
 * model_internal.h — the inside of an xf_cost_model, shared by the front-end files
 * (costmodel.c: costs and cache; exec.c: the executor wrapper). Not part of
 * the public API; backends see only backend_internal.h.
 */
#ifndef XF_COSTMODEL_MODEL_INTERNAL_H
#define XF_COSTMODEL_MODEL_INTERNAL_H

#include "backend_internal.h"
#include "cache_internal.h"

/* Measured costs by configuration key: one graph's measurements not yet
 * written to the cache, or a model's measurements never written to it. */
typedef struct xf_cost_list {
    int n, cap;
    char **config;
    xf_op_cost *cost;
    xf_htab index; /* hash of config -> position */
} xf_cost_list;

struct xf_cost_model {
    xf_cost_backend kind;
    const xf_backend *be;
    void *state; /* the backend's */
    void *state1; /* the backend at one thread (threads > 1 only, opened on
                   * the first disturbed measurement) */
    xf_backend_config cfg;
    xf_cost_options opt; /* as given (cache_path not kept) */
    xf_cost_cache *cache;
    int have_roofline; /* cfg.peak_gflops/bandwidth_gbps resolved */
    char identity[1024];
    int64_t measurements;
    int64_t disturbed; /* of those, preempted in every attempt (xf_cost_disturbed) */
    int64_t shared;    /* of those, timed beside other running tasks (xf_cost_shared) */
    /* measurements no clean attempt gave (the two above): looked up
     * before the cache, never written to it */
    xf_cost_list unkept;
};

#endif /* XF_COSTMODEL_MODEL_INTERNAL_H */
