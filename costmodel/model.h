/*
 * model.h — the inside of an xf_cost_model, shared by the front-end files
 * (costmodel.c: costs and cache; exec.c: the executor wrapper). Not part of
 * the public API; backends see only backend.h.
 */
#ifndef XF_COSTMODEL_MODEL_H
#define XF_COSTMODEL_MODEL_H

#include "backend.h"
#include "cache.h"

struct xf_cost_model {
    xf_cost_backend kind;
    const xf_backend *be;
    void *state; /* the backend's */
    xf_backend_config cfg;
    xf_cost_options opt; /* as given (cache_path not kept) */
    xf_cost_cache *cache;
    int have_roofline; /* cfg.peak_gflops/bandwidth_gbps resolved */
    char identity[1024];
    int64_t measurements;
};

#endif /* XF_COSTMODEL_MODEL_H */
