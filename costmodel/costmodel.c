/*
 * costmodel.c — the cost-model front end: opens a backend and the cache,
 * turns operator configurations into cache keys, measures only on a miss,
 * and sums node costs into a graph cost (TASO's model).
 *
 * Policy for nodes a backend cannot time:
 *  - constant generators (const_*, constant_of_shape) cost 0: in a deployed
 *    model they are folded into weights;
 *  - ops a measured backend has no kernel for (its measure returns
 *    XF_ERR_UNSUPPORTED) are timed with the float32 reference kernel;
 *  - an opaque If costs its costlier branch, costed node by node; other
 *    opaque nodes get the analytic roofline estimate of the bytes they
 *    read and write and (LSTM) their flops (the roofline is then loaded
 *    or measured on first use).
 * A graph's new measurements are written to the cache in one transaction;
 * a measurement no attempt of which ran clear of other processes, or whose
 * runs other running tasks shared the machine with (xf_cost_runs_summary),
 * is kept for the model's lifetime only.
 * A configuration whose tensors exceed the memory limit is not measured.
 */
#include "model_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DESC_MAX 4096

static void list_free(xf_cost_list *p)
{
    for (int i = 0; i < p->n; i++) xf_free(p->config[i]);
    xf_free(p->config);
    xf_free(p->cost);
    xf_htab_free(&p->index);
    memset(p, 0, sizeof *p);
}

static uint64_t config_hash(const char *config)
{
    return xf_htab_key(xf_hash_bytes(0, config, strlen(config)));
}

static const xf_op_cost *list_find(const xf_cost_list *p, const char *config)
{
    size_t pos = XF_HTAB_START;
    for (uint64_t *v; (v = xf_htab_next(&p->index, config_hash(config), &pos)) != NULL;)
        if (strcmp(p->config[*v], config) == 0) return &p->cost[*v];
    return NULL;
}

static xf_status list_add(xf_cost_list *p, const char *config, const xf_op_cost *c, xf_error *err)
{
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 32;
        char **nc = xf_realloc(p->config, (size_t)cap * sizeof *nc);
        if (nc) p->config = nc;
        xf_op_cost *nk = nc ? xf_realloc(p->cost, (size_t)cap * sizeof *nk) : NULL;
        if (nk) p->cost = nk;
        if (!nc || !nk) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory caching costs");
        p->cap = cap;
    }
    p->config[p->n] = xf_strdup(config);
    if (!p->config[p->n]) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory caching costs");
    xf_status st = xf_htab_add(&p->index, config_hash(config), (uint64_t)p->n, err);
    if (st) {
        xf_free(p->config[p->n]);
        return st;
    }
    p->cost[p->n++] = *c;
    return XF_OK;
}

static const char *const backend_names[XF_COST_BACKEND_COUNT] = {"analytic", "onednn", "cudnn"};

const char *xf_cost_backend_name(xf_cost_backend b)
{
    return (int)b >= 0 && b < XF_COST_BACKEND_COUNT ? backend_names[b] : "unknown";
}

xf_status xf_cost_backend_parse(const char *name, xf_cost_backend *out, xf_error *err)
{
    for (int i = 0; i < XF_COST_BACKEND_COUNT; i++)
        if (name && strcmp(name, backend_names[i]) == 0) {
            *out = (xf_cost_backend)i;
            return XF_OK;
        }
    *out = XF_COST_ANALYTIC;
    return XF_FAIL(err, XF_ERR_INVALID, "unknown backend '%s' (expected analytic, onednn or cudnn)",
                   name ? name : "(null)");
}

static xf_status backend_for(xf_cost_backend b, const xf_backend **out, xf_error *err)
{
    *out = NULL;
    switch (b) {
    case XF_COST_ANALYTIC: *out = &cm_backend_analytic; return XF_OK;
    case XF_COST_ONEDNN: *out = &cm_backend_onednn; return XF_OK;
    case XF_COST_CUDNN:
#ifdef XF_HAVE_CUDNN
        *out = &cm_backend_cudnn;
        return XF_OK;
#else
        return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                       "cudnn backend unavailable: rlflow was built without CUDA (CMake did not "
                       "find the CUDA toolkit, cuDNN and cuBLAS, or XF_CUDA=OFF); rebuild with them "
                       "installed");
#endif
    default: return XF_FAIL(err, XF_ERR_INVALID, "unknown backend %d", (int)b);
    }
}

xf_cost_options xf_cost_options_default(void)
{
    xf_cost_options o;
    memset(&o, 0, sizeof o);
    o.backend = XF_COST_ANALYTIC;
    o.threads = 1;
    o.warmup = 3;
    o.reps = 10;
    o.kernel_overhead_us = 2.0;
    return o;
}

xf_status xf_cost_backend_available(xf_cost_backend b, xf_error *err)
{
    const xf_backend *be;
    xf_status st = backend_for(b, &be, err);
    if (st || b == XF_COST_ANALYTIC) return st;
    xf_backend_config cfg = {.threads = 1, .warmup = 0, .reps = 1, .kernel_overhead_us = 0};
    void *state = NULL;
    st = be->init(&cfg, &state, err);
    if (!st) be->free(state);
    return st;
}

/* Fills cfg.peak_gflops/bandwidth_gbps: fixed by the options, else stored in
 * the cache for this CPU, else measured now and stored. */
static xf_status ensure_roofline(xf_cost_model *cm, xf_error *err)
{
    if (cm->have_roofline) return XF_OK;
    double peak = cm->opt.peak_gflops, bw = cm->opt.bandwidth_gbps;
    if (!(peak > 0) || !(bw > 0)) {
        char machine[256];
        cm_cpu_model(machine, sizeof machine);
        double cpeak, cbw;
        int found;
        xf_status st = cm_cache_get_roofline(cm->cache, machine, &cpeak, &cbw, &found, err);
        if (st) return st;
        if (!found) {
            cpeak = cbw = 0;
            st = cm_measure_roofline(&cpeak, &cbw, err);
            if (!st) st = cm_cache_put_roofline(cm->cache, machine, cpeak, cbw, err);
            if (st) return st;
            xf_log(XF_LOG_INFO, "costmodel: measured roofline of %s: %.1f GFLOP/s, %.1f GB/s",
                   machine, cpeak, cbw);
        }
        if (!(peak > 0)) peak = cpeak;
        if (!(bw > 0)) bw = cbw;
    }
    cm->cfg.peak_gflops = peak;
    cm->cfg.bandwidth_gbps = bw;
    cm->have_roofline = 1;
    return XF_OK;
}

xf_status xf_cost_open(const xf_cost_options *opt, xf_cost_model **out, xf_error *err)
{
    *out = NULL;
    xf_cost_options o = opt ? *opt : xf_cost_options_default();
    if (o.threads < 1 || o.reps < 1 || o.warmup < 0 || o.kernel_overhead_us < 0)
        return XF_FAIL(err, XF_ERR_INVALID,
                       "cost model options: threads (%d) and reps (%d) must be >= 1, warmup "
                       "(%d) and kernel overhead (%g us) >= 0",
                       o.threads, o.reps, o.warmup, o.kernel_overhead_us);
    const xf_backend *be;
    xf_status st = backend_for(o.backend, &be, err);
    if (st) return st;
    xf_cost_model *cm = xf_calloc(1, sizeof *cm);
    if (!cm) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory opening the cost model");
    cm->kind = o.backend;
    cm->be = be;
    cm->opt = o;
    cm->opt.cache_path = NULL;
    cm->cfg.threads = o.threads;
    cm->cfg.warmup = o.warmup;
    cm->cfg.reps = o.reps;
    cm->cfg.neighbours = o.neighbours;
    cm->cfg.kernel_overhead_us = o.kernel_overhead_us;
    st = cm_cache_open(o.cache_path, &cm->cache, err);
    if (!st && o.backend == XF_COST_ANALYTIC) st = ensure_roofline(cm, err);
    if (!st) st = be->init(&cm->cfg, &cm->state, err);
    if (st) {
        xf_cost_close(cm);
        return st;
    }
    char ident[sizeof cm->identity - 64];
    be->identity(cm->state, ident, sizeof ident);
    snprintf(cm->identity, sizeof cm->identity, "%s|%s|threads=%d", be->name, ident, o.threads);
    *out = cm;
    return XF_OK;
}

void xf_cost_close(xf_cost_model *cm)
{
    if (!cm) return;
    if (cm->be && cm->state) cm->be->free(cm->state);
    if (cm->be && cm->state1) cm->be->free(cm->state1);
    cm_cache_close(cm->cache);
    list_free(&cm->unkept);
    xf_free(cm);
}

const char *xf_cost_identity(const xf_cost_model *cm)
{
    return cm->identity;
}

void xf_cost_roofline(const xf_cost_model *cm, double *peak_gflops, double *bandwidth_gbps)
{
    *peak_gflops = cm->have_roofline ? cm->cfg.peak_gflops : 0;
    *bandwidth_gbps = cm->have_roofline ? cm->cfg.bandwidth_gbps : 0;
}

int64_t xf_cost_measurements(const xf_cost_model *cm)
{
    return cm->measurements;
}

int64_t xf_cost_disturbed(const xf_cost_model *cm)
{
    return cm->disturbed;
}

int64_t xf_cost_shared(const xf_cost_model *cm)
{
    return cm->shared;
}

static int is_generator(xf_op op)
{
    return op == XF_OP_CONSTANT_OF_SHAPE || op == XF_OP_CONST_IDENTITY_CONV ||
           op == XF_OP_CONST_IDENTITY_MATRIX || op == XF_OP_CONST_ONES || op == XF_OP_CONST_POOL;
}

static xf_status write_pending(xf_cost_model *cm, const xf_cost_list *p, xf_error *err)
{
    if (p->n == 0) return XF_OK;
    xf_status st = cm_cache_begin(cm->cache, err);
    for (int i = 0; !st && i < p->n; i++)
        st = cm_cache_put(cm->cache, cm->identity, p->config[i], &p->cost[i], err);
    if (!st) st = cm_cache_commit(cm->cache, err);
    if (st) cm_cache_rollback(cm->cache);
    return st;
}

/* Cost of one configuration; new measurements go to `pend` (written later)
 * or straight to the cache when pend is NULL. */
/* 1 when shape a sorts after shape b (more elements first, then rank, then
 * dims), the order commutative operands are costed in. */
static int shape_after(const xf_shape *a, const xf_shape *b)
{
    int64_t na = xf_shape_numel(a), nb = xf_shape_numel(b);
    if (na != nb) return na < nb;
    if (a->rank != b->rank) return a->rank < b->rank;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return a->dims[i] > b->dims[i];
    return 0;
}

/* Add, mul and equal cost the same whichever operand comes first: cost them
 * in one canonical operand order, so that swapping operands (a rewrite the
 * optimiser can make) is never mistaken for a speed-up or slow-down by
 * measurement noise between two separately timed configurations. */
static int swap_commutative(xf_op op, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh)
{
    if ((op != XF_OP_ADD && op != XF_OP_MUL && op != XF_OP_EQUAL) || n_in != 2) return 0;
    return in_dt[0] == in_dt[1] && shape_after(&in_sh[0], &in_sh[1]);
}

/* A measuring backend allocates the configuration's inputs and outputs
 * (the reference timing too): they must fit the memory limit. The
 * analytic backend only computes. */
static xf_status measured_tensors_fit(const xf_cost_model *cm, const xf_backend_op *bop,
                                      const char *key, xf_error *err)
{
    if (cm->be == &cm_backend_analytic) return XF_OK;
    size_t total = 0;
    for (int i = 0; i < bop->n_inputs + bop->n_outputs; i++) {
        int out = i >= bop->n_inputs;
        xf_dtype dt = out ? bop->out_dtypes[i - bop->n_inputs] : bop->in_dtypes[i];
        const xf_shape *sh = out ? &bop->out_shapes[i - bop->n_inputs] : &bop->in_shapes[i];
        size_t bytes;
        if (dt == XF_DTYPE_INVALID) continue; /* an omitted optional input */
        xf_status st = xf_shape_check(sh, dt, NULL, &bytes, err);
        if (st) return st;
        total = total > SIZE_MAX - bytes ? SIZE_MAX : total + bytes;
    }
    char what[256];
    snprintf(what, sizeof what, "measuring %.200s", key);
    return xf_mem_limit_check(total, what, err);
}

/* Times bop on the backend state `state` (configured as cfg), or on the
 * reference kernel when the backend has none for it (kernels = 1). */
static xf_status measure_on(const xf_cost_model *cm, void *state, const xf_backend_config *cfg,
                            const xf_backend_op *bop, double *ms, int *kernels,
                            xf_cost_runs_verdict *verdict, xf_error *err)
{
    xf_status st = cm->be->measure(state, bop, ms, kernels, verdict, err);
    if (st == XF_ERR_UNSUPPORTED) {
        xf_error_clear(err);
        st = cm_time_reference(cfg, bop, ms, verdict, err);
        *kernels = 1;
    }
    return st;
}

/* A kernel timed at cm's threads preempted in every attempt: on a machine whose
 * cores other processes hold, a parallel kernel waits a time slice for a
 * core in every run (2-thread microsecond kernels read 8-16 ms), and its
 * fastest run says only that. One thread needs one core and runs as fast
 * as the kernel itself on a quiet machine when its run fits a time slice,
 * and N threads on a quiet machine are not slower than one: the cost is
 * capped by the same configuration timed at one thread. */
static xf_status measure_one_thread(xf_cost_model *cm, const xf_backend_op *bop, double *ms,
                                    xf_error *err)
{
    xf_backend_config one = cm->cfg;
    one.threads = 1;
    if (!cm->state1) {
        xf_status st = cm->be->init(&one, &cm->state1, err);
        if (st) return st;
    }
    int kernels;
    xf_cost_runs_verdict verdict;
    return measure_on(cm, cm->state1, &one, bop, ms, &kernels, &verdict, err);
}

static xf_status cost_config(xf_cost_model *cm, xf_op op, const xf_params *params, int n_in,
                             const xf_dtype *in_dt, const xf_shape *in_sh, xf_cost_list *pend,
                             xf_op_cost *out, xf_error *err)
{
    xf_dtype sw_dt[2];
    xf_shape sw_sh[2];
    if (swap_commutative(op, n_in, in_dt, in_sh)) {
        sw_dt[0] = in_dt[1], sw_dt[1] = in_dt[0];
        sw_sh[0] = in_sh[1], sw_sh[1] = in_sh[0];
        in_dt = sw_dt;
        in_sh = sw_sh;
    }
    memset(out, 0, sizeof *out);
    xf_params def = xf_params_default();
    if (!params) params = &def;
    const xf_op_info *info = xf_op_get(op);
    if (!info || op == XF_OP_OPAQUE)
        return XF_FAIL(err, XF_ERR_INVALID,
                       "cost of op %d: not a table operator (opaque nodes are costed per node)",
                       (int)op);
    int n_out = xf_op_default_outputs(op, params);
    xf_dtype out_dt[XF_MAX_SPLIT];
    xf_shape out_sh[XF_MAX_SPLIT];
    if (n_out < 1 || n_out > XF_MAX_SPLIT)
        return XF_FAIL(err, XF_ERR_INVALID, "%s: %d outputs are not supported", info->name, n_out);
    xf_status st = xf_op_infer(op, params, n_in, in_dt, in_sh, n_out, out_dt, out_sh, err);
    if (st) return st;

    xf_backend_op bop = {op, params, n_in, in_dt, in_sh, n_out, out_dt, out_sh, 0, 0};
    xf_cost_flops_bytes(op, params, n_in, in_dt, in_sh, n_out, out_dt, out_sh, &bop.flops,
                        &bop.bytes);
    out->flops = bop.flops;
    out->bytes = bop.bytes;
    if (is_generator(op)) return XF_OK; /* folded into weights: free */

    char *key = xf_malloc(DESC_MAX);
    if (!key) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory costing %s", info->name);
    st = xf_cost_describe(op, params, n_in, in_dt, in_sh, key, DESC_MAX, err);
    if (st) goto out;
    const xf_op_cost *seen = pend ? list_find(pend, key) : NULL;
    if (seen) {
        *out = *seen;
        goto out;
    }
    const xf_op_cost *unkept = list_find(&cm->unkept, key);
    if (unkept) {
        *out = *unkept;
        goto out;
    }
    int found;
    st = cm_cache_get(cm->cache, cm->identity, key, out, &found, err);
    if (st || found) goto out;

    double ms = 0;
    int kernels = 0;
    xf_cost_runs_verdict verdict = XF_COST_RUNS_CLEAN;
    st = measured_tensors_fit(cm, &bop, key, err);
    if (st) goto out;
    st = measure_on(cm, cm->state, &cm->cfg, &bop, &ms, &kernels, &verdict, err);
    if (st) {
        xf_error_prefix(err, "measuring %s on %s", info->name, cm->be->name);
        goto out;
    }
    cm->measurements++;
    *out = (xf_op_cost){ms, bop.flops, bop.bytes, kernels, 0};
    if (verdict == XF_COST_RUNS_PREEMPTED && cm->cfg.threads > 1) {
        double ms1;
        st = measure_one_thread(cm, &bop, &ms1, err);
        if (st) goto out;
        if (ms1 < out->ms) out->ms = ms1;
    }
    cm->disturbed += verdict == XF_COST_RUNS_PREEMPTED;
    cm->shared += verdict == XF_COST_RUNS_SHARED;
    if (verdict != XF_COST_RUNS_CLEAN) st = list_add(&cm->unkept, key, out, err);
    else st = pend ? list_add(pend, key, out, err)
                   : cm_cache_put(cm->cache, cm->identity, key, out, err);
out:
    xf_free(key);
    return st;
}

xf_status xf_cost_op(xf_cost_model *cm, xf_op op, const xf_params *params, int n_inputs,
                     const xf_dtype *in_dtypes, const xf_shape *in_shapes, xf_op_cost *out,
                     xf_error *err)
{
    return cost_config(cm, op, params, n_inputs, in_dtypes, in_shapes, NULL, out, err);
}

/* LSTM's flops: per step, direction and batch entry the 4 gate rows over
 * [x, h] (a multiply-add is 2 flops) and about 10 element-wise flops per
 * hidden unit (activations, cell and state updates). */
static double lstm_flops(const xf_graph *g, const xf_node *nd)
{
    const xf_lstm_attrs *a = &nd->opaque->lstm;
    if (nd->n_inputs < 1 || nd->inputs[0] < 0) return 0;
    const xf_shape *x = &g->values[nd->inputs[0]].shape;
    if (x->rank != 3) return 0;
    double steps = (double)x->dims[0] * (double)x->dims[1] * (a->direction == 2 ? 2.0 : 1.0);
    double h = (double)a->hidden_size, in = (double)x->dims[2];
    return steps * (2.0 * 4.0 * h * (in + h) + 10.0 * h);
}

static xf_status cost_node(xf_cost_model *cm, const xf_graph *g, int node, xf_cost_list *pend,
                           xf_op_cost *out, xf_error *err);

/* If: the cost of its costlier branch (which one runs is known only at run
 * time), each branch costed node by node like a graph. */
static xf_status cost_if(xf_cost_model *cm, const xf_node *nd, xf_cost_list *pend, xf_op_cost *out,
                         xf_error *err)
{
    memset(out, 0, sizeof *out);
    for (int b = 0; b < nd->opaque->n_branches; b++) {
        const xf_graph *br = &nd->opaque->branches[b];
        xf_op_cost sum, c;
        memset(&sum, 0, sizeof sum);
        for (int i = 0; i < br->n_nodes; i++) {
            xf_status st = cost_node(cm, br, i, pend, &c, err);
            if (st) {
                xf_error_prefix(err, "in the %s branch", b ? "else" : "then");
                return st;
            }
            sum.ms += c.ms;
            sum.flops += c.flops;
            sum.bytes += c.bytes;
            sum.kernels += c.kernels;
        }
        if (b == 0 || sum.ms > out->ms) *out = sum;
    }
    return XF_OK;
}

/* Opaque node: an If costs its costlier branch; others the roofline
 * estimate of their bytes and (LSTM) flops. */
static xf_status cost_opaque(xf_cost_model *cm, const xf_graph *g, const xf_node *nd,
                             xf_cost_list *pend, xf_op_cost *out, xf_error *err)
{
    if (nd->opaque && nd->opaque->kernel == XF_OPAQUE_IF) return cost_if(cm, nd, pend, out, err);
    memset(out, 0, sizeof *out);
    xf_status st = ensure_roofline(cm, err);
    if (st) return st;
    for (int i = 0; i < nd->n_inputs; i++)
        if (nd->inputs[i] >= 0) {
            const xf_value *v = &g->values[nd->inputs[i]];
            out->bytes += (double)xf_shape_numel(&v->shape) * (double)xf_dtype_size(v->dtype);
        }
    for (int i = 0; i < nd->n_outputs; i++) {
        const xf_value *v = &g->values[nd->outputs[i]];
        out->bytes += (double)xf_shape_numel(&v->shape) * (double)xf_dtype_size(v->dtype);
    }
    if (nd->opaque && nd->opaque->kernel == XF_OPAQUE_LSTM) out->flops = lstm_flops(g, nd);
    out->kernels = 1;
    double mem_ms = out->bytes / (cm->cfg.bandwidth_gbps * 1e6);
    double flop_ms = out->flops / (cm->cfg.peak_gflops * 1e6);
    out->ms = (mem_ms > flop_ms ? mem_ms : flop_ms) + cm->cfg.kernel_overhead_us * 1e-3;
    return XF_OK;
}

static xf_status cost_node(xf_cost_model *cm, const xf_graph *g, int node, xf_cost_list *pend,
                           xf_op_cost *out, xf_error *err)
{
    const xf_node *nd = &g->nodes[node];
    xf_status st;
    if (nd->op == XF_OP_OPAQUE) {
        st = cost_opaque(cm, g, nd, pend, out, err);
    } else {
        xf_dtype *dt = xf_calloc((size_t)(nd->n_inputs > 0 ? nd->n_inputs : 1), sizeof *dt);
        xf_shape *sh = xf_calloc((size_t)(nd->n_inputs > 0 ? nd->n_inputs : 1), sizeof *sh);
        if (!dt || !sh) {
            st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory costing a node");
        } else {
            for (int i = 0; i < nd->n_inputs; i++) {
                if (nd->inputs[i] < 0) continue; /* dtype stays INVALID */
                dt[i] = g->values[nd->inputs[i]].dtype;
                sh[i] = g->values[nd->inputs[i]].shape;
            }
            st = cost_config(cm, nd->op, &nd->params, nd->n_inputs, dt, sh, pend, out, err);
        }
        xf_free(dt);
        xf_free(sh);
    }
    if (st) {
        char d[256];
        xf_error_prefix(err, "%s", xf_node_describe(g, node, d, sizeof d));
    }
    return st;
}

xf_status xf_cost_node(xf_cost_model *cm, const xf_graph *g, int node, xf_op_cost *out,
                       xf_error *err)
{
    if (node < 0 || node >= g->n_nodes) {
        memset(out, 0, sizeof *out);
        return XF_FAIL(err, XF_ERR_INVALID, "node %d out of range (graph has %d nodes)", node,
                       g->n_nodes);
    }
    return cost_node(cm, g, node, NULL, out, err);
}

xf_status xf_cost_graph(xf_cost_model *cm, const xf_graph *g, xf_op_cost *total,
                        xf_op_cost *per_node, xf_error *err)
{
    memset(total, 0, sizeof *total);
    xf_cost_list pend = {0};
    xf_status st = XF_OK;
    int64_t measured_before = cm->measurements;
    for (int i = 0; i < g->n_nodes && !st; i++) {
        xf_op_cost c;
        st = cost_node(cm, g, i, &pend, &c, err);
        if (st) break;
        if (per_node) per_node[i] = c;
        total->ms += c.ms;
        total->flops += c.flops;
        total->bytes += c.bytes;
        total->kernels += c.kernels;
    }
    total->from_cache = cm->measurements == measured_before;
    /* keep what was measured even when a later node failed */
    xf_status wst = write_pending(cm, &pend, st ? NULL : err);
    if (!st) st = wst;
    list_free(&pend);
    return st;
}

xf_status xf_cost_stored_get(xf_cost_model *cm, const char *identity, const char *key,
                             double *ms, int *found, xf_error *err)
{
    xf_op_cost c;
    memset(&c, 0, sizeof c);
    xf_status st = cm_cache_get(cm->cache, identity, key, &c, found, err);
    *ms = st == XF_OK && *found ? c.ms : 0;
    return st;
}

xf_status xf_cost_stored_put(xf_cost_model *cm, const char *identity, const char *key,
                             double ms, xf_error *err)
{
    xf_op_cost c;
    memset(&c, 0, sizeof c);
    c.ms = ms;
    c.kernels = 1;
    return cm_cache_put(cm->cache, identity, key, &c, err);
}
