/*
 * fused_cost.c — the fusion-aware cost of a working graph (xf_fused_cost in
 * search.h): the sum of its fused regions (regions.c) as the target runtime
 * runs them, each timed once as a model of its own and remembered.
 *
 * Why: the operator cost model sums unfused kernels, while ONNX Runtime
 * fuses bias adds, activations, layer norms and MatMul+Add; a rewrite that
 * removes a kernel the runtime had fused away buys nothing there, and one
 * that breaks a fusion costs. Timing each region with the runtime's own
 * optimisations on makes the search compare what the runtime executes.
 *
 * A region counts its fastest round (the median of a few runs each, after
 * a warm-up of five rounds' time): other load on the machine only ever
 * slows a run, and a search comparing thousands of graphs by a few regions
 * each must not chase that noise. Shorter timing (5 rounds of 2 ms, 2 ms
 * of warm-up) gave bert_small's 30 regions totals 10.6-14.9 ms over four
 * fresh costings on this 2-core machine; 9 rounds of 5 ms gave 10.9-11.1.
 * A region model is timed with ONNX Runtime's per-run overhead (binding,
 * output allocation) subtracted: that of a one-node model, measured when
 * the cost is created. Regions are remembered by the identity hash of
 * their graph (initializers by address: every graph of a search shares the
 * model's weights), and kept in the cost model's cache by their content
 * hash under "fused-region|<target identity>|<timing>", so a later run on
 * the same model measures nothing again. A region the runtime cannot run on its own
 * is costed by the operator model (counted in the stats).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "agent/search/search.h"

struct xf_fused_cost {
    xf_target *t;
    xf_cost_model *cm;
    xf_fused_cost_options opt;
    xf_target_timing_options timing;
    char identity[512];
    xf_htab memo; /* region identity hash -> index into ms */
    double *ms;
    size_t n, cap;
    xf_fused_cost_stats stats;
};

xf_fused_cost_options xf_fused_cost_options_default(void)
{
    xf_fused_cost_options o;
    memset(&o, 0, sizeof o);
    o.max_region_nodes = 24;
    o.rounds = 7;
    o.round_ms = 3;
    o.seed = 1;
    return o;
}

/* The region's latency in the target, the per-run overhead not subtracted. */
static xf_status time_model(xf_fused_cost *fc, const xf_graph *g, double *ms, xf_error *err)
{
    double noise;
    double t0 = xf_clock_now();
    xf_status st = xf_target_latency(fc->t, g, &fc->timing, ms, &noise, err);
    fc->stats.measure_s += xf_clock_now() - t0;
    return st;
}

/* The overhead: one ReLU on one float. */
static xf_status calibrate(xf_fused_cost *fc, xf_error *err)
{
    xf_graph g;
    xf_graph_init(&g);
    int64_t one = 1;
    xf_shape s = xf_shape_make(1, &one);
    int x = xf_graph_add_input(&g, "x", XF_F32, &s, err);
    int y = x < 0 ? -1 : xf_graph_op(&g, XF_OP_RELU, NULL, &x, 1, err);
    xf_status st = y < 0 ? (err ? err->code : XF_ERR_NOMEM) : xf_graph_mark_output(&g, y, err);
    if (!st) st = time_model(fc, &g, &fc->stats.overhead_ms, err);
    xf_graph_free(&g);
    if (st) xf_error_prefix(err, "fusion-aware cost: timing a one-node model: ");
    return st;
}

xf_status xf_fused_cost_create(xf_target *t, xf_cost_model *cm, const xf_fused_cost_options *o,
                               xf_fused_cost **out, xf_error *err)
{
    *out = NULL;
    if (!t || !cm)
        return XF_FAIL(err, XF_ERR_INVALID, "fusion-aware cost: a target and a cost model are "
                                            "both required");
    xf_fused_cost_options opt = o ? *o : xf_fused_cost_options_default();
    if (opt.max_region_nodes < 1 || opt.rounds < 1 || !(opt.round_ms > 0))
        return XF_FAIL(err, XF_ERR_INVALID,
                       "fusion-aware cost: max_region_nodes (%d) and rounds (%d) must be >= 1 "
                       "and round_ms (%g) > 0",
                       opt.max_region_nodes, opt.rounds, opt.round_ms);
    xf_fused_cost *fc = xf_calloc(1, sizeof *fc);
    if (!fc) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory creating the fusion-aware cost");
    fc->t = t;
    fc->cm = cm;
    fc->opt = opt;
    fc->timing.seed = opt.seed;
    fc->timing.rounds = opt.rounds;
    fc->timing.round_ms = opt.round_ms;
    fc->timing.warmup_ms = 5 * opt.round_ms;
    fc->timing.fastest = 1;
    /* the timing is part of the identity: regions timed otherwise are not reused */
    snprintf(fc->identity, sizeof fc->identity, "fused-region|%s|rounds=%d,round_ms=%g",
             xf_target_identity(t), opt.rounds, opt.round_ms);
    xf_status st = calibrate(fc, err);
    if (st) {
        xf_fused_cost_free(fc);
        return st;
    }
    *out = fc;
    return XF_OK;
}

void xf_fused_cost_free(xf_fused_cost *fc)
{
    if (!fc) return;
    xf_htab_free(&fc->memo);
    xf_free(fc->ms);
    xf_free(fc);
}

void xf_fused_cost_get_stats(const xf_fused_cost *fc, xf_fused_cost_stats *out)
{
    *out = fc->stats;
}

static xf_status remember(xf_fused_cost *fc, uint64_t key, double ms, xf_error *err)
{
    if (fc->n == fc->cap) {
        size_t cap = fc->cap ? 2 * fc->cap : 64;
        double *m = xf_realloc(fc->ms, cap * sizeof *m);
        if (!m) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory remembering a region cost");
        fc->ms = m;
        fc->cap = cap;
    }
    uint64_t *slot;
    xf_status st = xf_htab_put(&fc->memo, key, &slot, NULL, err);
    if (st) return st;
    *slot = fc->n;
    fc->ms[fc->n++] = ms;
    return XF_OK;
}

/* Operator-model cost of region r's nodes: for a region the target cannot
 * run on its own. */
static xf_status operator_cost(xf_fused_cost *fc, const xf_graph *g, const int *region_of, int r,
                               double *ms, xf_error *err)
{
    *ms = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        if (region_of[i] != r) continue;
        xf_op_cost c;
        xf_status st = xf_cost_node(fc->cm, g, i, &c, err);
        if (st) return st;
        *ms += c.ms;
    }
    return XF_OK;
}

/* Region rg (of g, index r) measured, or found in the cost cache. */
static xf_status measure_region(xf_fused_cost *fc, const xf_graph *g, const int *region_of,
                                int r, const xf_graph *rg, double *ms, xf_error *err)
{
    uint64_t content;
    xf_status st = xf_graph_hash_checked(rg, XF_HASH_CONTENT, &content, err);
    if (st) return st;
    char key[64];
    snprintf(key, sizeof key, "region|%016" PRIx64 "|%d", content, rg->n_nodes);
    int found = 0;
    st = xf_cost_stored_get(fc->cm, fc->identity, key, ms, &found, err);
    if (st || found) {
        if (found) fc->stats.from_cache++;
        return st;
    }
    xf_error terr;
    xf_error_clear(&terr);
    double raw;
    if (time_model(fc, rg, &raw, &terr) != XF_OK) {
        fc->stats.fallbacks++;
        snprintf(fc->stats.last_fallback, sizeof fc->stats.last_fallback, "%.250s", terr.msg);
        return operator_cost(fc, g, region_of, r, ms, err);
    }
    fc->stats.measured++;
    *ms = raw > fc->stats.overhead_ms ? raw - fc->stats.overhead_ms : 0;
    return xf_cost_stored_put(fc->cm, fc->identity, key, *ms, err);
}

/* Scratch of one costing: the partition and its escape marks. */
typedef struct scratch {
    int *region_of, *order;
    uint8_t *escapes;
} scratch;

static void scratch_free(scratch *s)
{
    xf_free(s->region_of);
    xf_free(s->order);
    xf_free(s->escapes);
}

xf_status xf_fused_cost_graph(xf_fused_cost *fc, const xf_graph *g, const xf_graph_index *ix,
                              double *ms, xf_error *err)
{
    *ms = 0;
    scratch s = {xf_malloc(((size_t)g->n_nodes + 1) * sizeof(int)),
                 xf_malloc(((size_t)g->n_nodes + 1) * sizeof(int)),
                 xf_malloc((size_t)g->n_values + 1)};
    if (!s.region_of || !s.order || !s.escapes) {
        scratch_free(&s);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory costing fused regions");
    }
    int n_regions;
    xf_status st = xf_regions_partition(g, ix, fc->opt.max_region_nodes, s.region_of, s.order,
                                        &n_regions, err);
    if (!st) xf_regions_escapes(g, s.region_of, s.escapes);
    double total = 0;
    for (int r = 0; r < n_regions && !st; r++) {
        xf_graph rg;
        xf_graph_init(&rg);
        st = xf_regions_extract(g, ix, s.region_of, s.order, s.escapes, r, &rg, err);
        uint64_t id = 0;
        if (!st) st = xf_graph_hash_checked(&rg, XF_HASH_IDENTITY, &id, err);
        uint64_t key = xf_htab_key(id);
        const uint64_t *hit = st ? NULL : xf_htab_get(&fc->memo, key);
        fc->stats.lookups++;
        double c = 0;
        if (!st && hit) {
            c = fc->ms[*hit];
        } else if (!st) {
            st = measure_region(fc, g, s.region_of, r, &rg, &c, err);
            if (!st) st = remember(fc, key, c, err);
        }
        xf_graph_free(&rg);
        total += c;
    }
    for (int i = 0; i < g->n_nodes && !st; i++) {
        if (s.region_of[i] != XF_REGION_OPAQUE) continue;
        xf_op_cost c;
        st = xf_cost_node(fc->cm, g, i, &c, err);
        total += c.ms;
    }
    scratch_free(&s);
    if (st) {
        xf_error_prefix(err, "fusion-aware cost: ");
        return st;
    }
    *ms = total;
    return XF_OK;
}
