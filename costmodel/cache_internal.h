/*
 * cache_internal.h — private SQLite store of measured operator costs and of the
 * machine roofline (see cache.c for the schema). Not part of the public API.
 */
#ifndef XF_COSTMODEL_CACHE_INTERNAL_H
#define XF_COSTMODEL_CACHE_INTERNAL_H

#include "costmodel.h"

typedef struct xf_cost_cache xf_cost_cache;

/* path NULL: an in-memory database. Fails with XF_ERR_IO/XF_ERR_PARSE naming
 * the file when it is not an rlflow cost cache or has a newer schema. */
xf_status cm_cache_open(const char *path, xf_cost_cache **out, xf_error *err);
void cm_cache_close(xf_cost_cache *c);

/* *found = 1 and *out filled (from_cache = 1) on a hit, 0 on a miss. */
xf_status cm_cache_get(xf_cost_cache *c, const char *identity, const char *config,
                            xf_op_cost *out, int *found, xf_error *err);
xf_status cm_cache_put(xf_cost_cache *c, const char *identity, const char *config,
                            const xf_op_cost *cost, xf_error *err);

xf_status cm_cache_get_roofline(xf_cost_cache *c, const char *machine, double *peak_gflops,
                                     double *bandwidth_gbps, int *found, xf_error *err);
xf_status cm_cache_put_roofline(xf_cost_cache *c, const char *machine, double peak_gflops,
                                     double bandwidth_gbps, xf_error *err);

/* Groups many puts into one transaction (graph costing). */
xf_status cm_cache_begin(xf_cost_cache *c, xf_error *err);
xf_status cm_cache_commit(xf_cost_cache *c, xf_error *err);
void cm_cache_rollback(xf_cost_cache *c);

#endif /* XF_COSTMODEL_CACHE_INTERNAL_H */
