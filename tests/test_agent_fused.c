/*
 * test_agent_fused.c — the fusion-aware cost (agent/search: fused regions
 * timed in the target runtime).
 *
 * Regions (no runtime needed), on a transformer-like block of the suite's
 * own: the bias add joins its matmul, GELU joins its bias add, the residual
 * add and the layer norm after it join the matmul before them, each matmul
 * starts a region, a weight-only concat is in no region but is copied into
 * the region that reads it; a region cap splits a chain; the partition does
 * not depend on node numbering (the same block built in another order has
 * the same region graphs); a region extracted as a graph of its own shares
 * its initializers, reads the values other regions make as graph inputs,
 * and chained through the interpreter computes what the whole graph does.
 * Cost (skips without ONNX Runtime): positive, each distinct region timed
 * once and then remembered, kept in the cost model's cache for a second
 * cost object; in an environment the cost of a peeked action equals the
 * cost after that step, and the environment's cost is the fused cost.
 */
#include <math.h>
#include <string.h>

#include "agent/search/search.h"
#include "agent_fixture.h"
#include "testutil.h"

enum { S = 16, H = 64, F = 128 };

/* Node indices of the block, for checking regions. */
typedef struct block {
    int q, q_bias;                 /* matmul(x, Wq) + bq: an output */
    int h, h_bias, gelu;           /* gelu(matmul(x, W1) + b1) */
    int o, o_bias, residual, norm; /* layernorm(matmul(gelu, W2) + b2 + x): an output */
    int concat, m;                 /* matmul(x, concat(Wa, Wb)): an output */
} block;

static int node_of(const xf_graph *g, int v)
{
    return g->values[v].producer;
}

/* The block; `reverse` builds its three branches in the opposite order
 * (same structure and weights, other node numbers). */
static void build_block(xf_graph *g, block *b, int reverse)
{
    xf_graph_init(g);
    int x = xf_fx_input(g, "x", xf_fx_shape(2, S, H, 0, 0));
    int wq = xf_fx_weight(g, "wq", xf_fx_shape(2, H, H, 0, 0), 1);
    int bq = xf_fx_weight(g, "bq", xf_fx_shape(1, H, 0, 0, 0), 2);
    int w1 = xf_fx_weight(g, "w1", xf_fx_shape(2, H, F, 0, 0), 3);
    int b1 = xf_fx_weight(g, "b1", xf_fx_shape(1, F, 0, 0, 0), 4);
    int w2 = xf_fx_weight(g, "w2", xf_fx_shape(2, F, H, 0, 0), 5);
    int b2 = xf_fx_weight(g, "b2", xf_fx_shape(1, H, 0, 0, 0), 6);
    int gamma = xf_fx_weight(g, "gamma", xf_fx_shape(1, H, 0, 0, 0), 7);
    int beta = xf_fx_weight(g, "beta", xf_fx_shape(1, H, 0, 0, 0), 8);
    int wa = xf_fx_weight(g, "wa", xf_fx_shape(2, H, 8, 0, 0), 9);
    int wb = xf_fx_weight(g, "wb", xf_fx_shape(2, H, 8, 0, 0), 10);
    xf_params ln = xf_params_default();
    ln.axis = -1;
    ln.epsilon = 1e-5f;
    xf_params cat = xf_params_default();
    cat.axis = 1;
    int outs[3];
    for (int k = 0; k < 3; k++) {
        int branch = reverse ? 2 - k : k;
        if (branch == 0) {
            int q = xf_fx_op(g, XF_OP_MATMUL, NULL, x, wq);
            int qb = xf_fx_op(g, XF_OP_ADD, NULL, q, bq);
            b->q = node_of(g, q);
            b->q_bias = node_of(g, qb);
            outs[0] = qb;
        } else if (branch == 1) {
            int h = xf_fx_op(g, XF_OP_MATMUL, NULL, x, w1);
            int hb = xf_fx_op(g, XF_OP_ADD, NULL, h, b1);
            int ge = xf_fx_op(g, XF_OP_GELU, NULL, hb, -1);
            int o = xf_fx_op(g, XF_OP_MATMUL, NULL, ge, w2);
            int ob = xf_fx_op(g, XF_OP_ADD, NULL, o, b2);
            int r = xf_fx_op(g, XF_OP_ADD, NULL, ob, x);
            int ins[3] = {r, gamma, beta};
            xf_error err;
            int n = xf_graph_op(g, XF_OP_LAYERNORM, &ln, ins, 3, &err);
            ck_assert_msg(n >= 0, "%s", err.msg);
            b->h = node_of(g, h);
            b->h_bias = node_of(g, hb);
            b->gelu = node_of(g, ge);
            b->o = node_of(g, o);
            b->o_bias = node_of(g, ob);
            b->residual = node_of(g, r);
            b->norm = node_of(g, n);
            outs[1] = n;
        } else {
            int c = xf_fx_op(g, XF_OP_CONCAT, &cat, wa, wb);
            int m = xf_fx_op(g, XF_OP_MATMUL, NULL, x, c);
            b->concat = node_of(g, c);
            b->m = node_of(g, m);
            outs[2] = m;
        }
    }
    for (int k = 0; k < 3; k++) xf_fx_output(g, outs[k]);
}

typedef struct parts {
    xf_graph_index *ix;
    int *region_of, *order, n;
    uint8_t *escapes;
} parts;

static void partition(const xf_graph *g, int max_nodes, parts *p)
{
    xf_error err;
    ck_assert_msg(xf_graph_index_build(g, &p->ix, &err) == XF_OK, "%s", err.msg);
    p->region_of = xf_malloc((size_t)g->n_nodes * sizeof(int));
    p->order = xf_malloc((size_t)g->n_nodes * sizeof(int));
    p->escapes = xf_malloc((size_t)g->n_values);
    ck_assert(p->region_of && p->order && p->escapes);
    ck_assert_msg(xf_regions_partition(g, p->ix, max_nodes, p->region_of, p->order, &p->n,
                                       &err) == XF_OK,
                  "%s", err.msg);
    xf_regions_escapes(g, p->region_of, p->escapes);
}

static void parts_free(parts *p)
{
    xf_graph_index_free(p->ix);
    xf_free(p->region_of);
    xf_free(p->order);
    xf_free(p->escapes);
}

static void extract(const xf_graph *g, const parts *p, int r, xf_graph *out)
{
    xf_error err;
    xf_graph_init(out);
    ck_assert_msg(xf_regions_extract(g, p->ix, p->region_of, p->order, p->escapes, r, out,
                                     &err) == XF_OK,
                  "region %d: %s", r, err.msg);
    ck_assert_msg(xf_graph_validate(out, &err) == XF_OK, "region %d: %s", r, err.msg);
}

START_TEST(regions_follow_the_fusions_of_a_transformer_block)
{
    xf_graph g;
    block b;
    build_block(&g, &b, 0);
    parts p;
    partition(&g, 24, &p);
    const int *r = p.region_of;
    ck_assert_int_eq(p.n, 4);
    ck_assert_int_eq(r[b.q_bias], r[b.q]);
    ck_assert_int_eq(r[b.h_bias], r[b.h]);
    ck_assert_int_eq(r[b.gelu], r[b.h]);
    ck_assert_int_eq(r[b.o_bias], r[b.o]);
    ck_assert_int_eq(r[b.residual], r[b.o]);
    ck_assert_int_eq(r[b.norm], r[b.o]);
    ck_assert_int_eq(r[b.concat], XF_REGION_FOLDED);
    int anchors[4] = {r[b.q], r[b.h], r[b.o], r[b.m]};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < i; j++) ck_assert_int_ne(anchors[i], anchors[j]);
    parts_free(&p);

    /* A cap of two nodes: gelu no longer fits with matmul + bias. */
    partition(&g, 2, &p);
    ck_assert_int_eq(p.region_of[b.h_bias], p.region_of[b.h]);
    ck_assert_int_ne(p.region_of[b.gelu], p.region_of[b.h]);
    ck_assert_int_ne(p.region_of[b.residual], p.region_of[b.o]);
    parts_free(&p);
    xf_graph_free(&g);
}
END_TEST

/* Sorted content hashes of every region of g. */
static void region_hashes(const xf_graph *g, uint64_t *h, int *n)
{
    parts p;
    partition(g, 24, &p);
    *n = p.n;
    for (int r = 0; r < p.n; r++) {
        xf_graph rg;
        extract(g, &p, r, &rg);
        h[r] = xf_graph_hash(&rg);
        xf_graph_free(&rg);
    }
    for (int i = 1; i < *n; i++)
        for (int j = i; j > 0 && h[j - 1] > h[j]; j--) {
            uint64_t t = h[j];
            h[j] = h[j - 1];
            h[j - 1] = t;
        }
    parts_free(&p);
}

START_TEST(regions_do_not_depend_on_node_numbering)
{
    xf_graph a, c;
    block ba, bc;
    build_block(&a, &ba, 0);
    build_block(&c, &bc, 1);
    ck_assert_int_ne(ba.q, bc.q); /* the numbering differs */
    uint64_t ha[8], hc[8];
    int na, nc;
    region_hashes(&a, ha, &na);
    region_hashes(&c, hc, &nc);
    ck_assert_int_eq(na, nc);
    for (int i = 0; i < na; i++) ck_assert_uint_eq(ha[i], hc[i]);
    xf_graph_free(&a);
    xf_graph_free(&c);
}
END_TEST

/* The input of rg with this shape (the regions here read inputs of
 * distinct shapes). */
static int input_with_shape(const xf_graph *rg, const xf_shape *s)
{
    for (int i = 0; i < rg->n_inputs; i++)
        if (xf_shape_equal(&rg->values[rg->inputs[i]].shape, s)) return i;
    ck_abort_msg("no region input of that shape");
    return -1;
}

START_TEST(regions_extracted_compute_what_the_graph_computes)
{
    xf_graph g;
    block b;
    build_block(&g, &b, 0);
    parts p;
    partition(&g, 24, &p);
    xf_graph ffn_in, ffn_out, folded;
    extract(&g, &p, p.region_of[b.h], &ffn_in);
    extract(&g, &p, p.region_of[b.o], &ffn_out);
    extract(&g, &p, p.region_of[b.m], &folded);

    /* Interfaces: x -> gelu; (gelu, x) -> the layer norm, a graph output. */
    ck_assert_int_eq(ffn_in.n_inputs, 1);
    ck_assert_int_eq(ffn_in.n_outputs, 1);
    ck_assert_int_eq(ffn_in.n_nodes, 3);
    ck_assert_int_eq(ffn_out.n_inputs, 2);
    ck_assert_int_eq(ffn_out.n_outputs, 1);
    ck_assert_int_eq(ffn_out.n_nodes, 4);
    /* The weight-only concat is copied in, its weights shared. */
    ck_assert_int_eq(folded.n_nodes, 2);
    ck_assert_int_eq(xf_test_count_op(&folded, XF_OP_CONCAT), 1);
    int shared = 0;
    for (int v = 0; v < folded.n_values; v++) {
        if (folded.values[v].kind != XF_VALUE_CONST) continue;
        ck_assert(folded.values[v].borrowed);
        for (int w = 0; w < g.n_values; w++) shared += g.values[w].data == folded.values[v].data;
    }
    ck_assert_int_eq(shared, 2);

    /* Chained through the interpreter: the same layer norm as the graph. */
    xf_error err;
    xf_tensor in[1], whole[3], mid[1], last[1];
    ck_assert_msg(xf_graph_random_inputs(&g, 3, in, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_interp_run(&g, in, 1, whole, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_interp_run(&ffn_in, in, 1, mid, &err) == XF_OK, "%s", err.msg);
    xf_tensor feed[2];
    xf_shape gelu_shape = xf_fx_shape(2, S, F, 0, 0);
    int gi = input_with_shape(&ffn_out, &gelu_shape);
    feed[gi] = mid[0];
    feed[1 - gi] = in[0];
    ck_assert_msg(xf_interp_run(&ffn_out, feed, 2, last, &err) == XF_OK, "%s", err.msg);
    ck_assert(xf_tensor_close(&last[0], &whole[1], 1e-6, 1e-6));
    xf_tensor_free(&last[0]);
    xf_tensor_free(&mid[0]);
    for (int i = 0; i < 3; i++) xf_tensor_free(&whole[i]);
    xf_tensor_free(&in[0]);
    xf_graph_free(&ffn_in);
    xf_graph_free(&ffn_out);
    xf_graph_free(&folded);
    parts_free(&p);
    xf_graph_free(&g);
}
END_TEST

START_TEST(partition_rejects_a_cap_below_one)
{
    xf_graph g;
    block b;
    build_block(&g, &b, 0);
    xf_graph_index *ix;
    ck_assert_int_eq(xf_graph_index_build(&g, &ix, NULL), XF_OK);
    int region_of[64], order[64], n;
    xf_error err;
    ck_assert_int_eq(xf_regions_partition(&g, ix, 0, region_of, order, &n, &err), XF_ERR_INVALID);
    xf_test_expect_contains(err.msg, "max_nodes 0 must be >= 1");
    xf_graph_index_free(ix);
    xf_graph_free(&g);
}
END_TEST

/* ----------------------------------------------------- in the target */

static xf_fused_cost *fused(xf_target *t, xf_cost_model *cm)
{
    xf_fused_cost_options o = xf_fused_cost_options_default();
    o.rounds = 3;
    o.round_ms = 1;
    xf_fused_cost *fc = NULL;
    xf_error err;
    ck_assert_msg(xf_fused_cost_create(t, cm, &o, &fc, &err) == XF_OK, "%s", err.msg);
    return fc;
}

START_TEST(fused_cost_times_each_region_once_and_keeps_it)
{
    xf_target *t = xf_fx_target();
    if (!t) XF_SKIP("ONNX Runtime is not installed (tools/setup.sh)");
    xf_cost_model *cm = xf_fx_cost_model();
    xf_graph g;
    block b;
    build_block(&g, &b, 0);
    xf_graph_index *ix;
    ck_assert_int_eq(xf_graph_index_build(&g, &ix, NULL), XF_OK);
    xf_error err;

    xf_fused_cost *fc = fused(t, cm);
    double ms1, ms2;
    ck_assert_msg(xf_fused_cost_graph(fc, &g, ix, &ms1, &err) == XF_OK, "%s", err.msg);
    xf_fused_cost_stats st;
    xf_fused_cost_get_stats(fc, &st);
    ck_assert(ms1 > 0 && isfinite(ms1));
    ck_assert(st.overhead_ms > 0);
    ck_assert_int_eq(st.lookups, 4);
    ck_assert_int_eq(st.measured, 4);
    ck_assert_int_eq(st.fallbacks, 0);
    ck_assert_msg(xf_fused_cost_graph(fc, &g, ix, &ms2, &err) == XF_OK, "%s", err.msg);
    xf_fused_cost_get_stats(fc, &st);
    ck_assert_int_eq(st.lookups, 8);
    ck_assert_int_eq(st.measured, 4);
    ck_assert_double_eq(ms2, ms1);
    xf_fused_cost_free(fc);

    /* A second cost on the same cost model finds every region in its cache. */
    fc = fused(t, cm);
    ck_assert_msg(xf_fused_cost_graph(fc, &g, ix, &ms2, &err) == XF_OK, "%s", err.msg);
    xf_fused_cost_get_stats(fc, &st);
    ck_assert_int_eq(st.measured, 0);
    ck_assert_int_eq(st.from_cache, 4);
    ck_assert_double_eq(ms2, ms1);
    xf_fused_cost_free(fc);

    xf_graph_index_free(ix);
    xf_graph_free(&g);
    xf_cost_close(cm);
    xf_target_close(t);
}
END_TEST

START_TEST(environment_peeks_and_steps_on_the_fused_cost)
{
    xf_target *t = xf_fx_target();
    if (!t) XF_SKIP("ONNX Runtime is not installed (tools/setup.sh)");
    xf_cost_model *cm = xf_fx_cost_model();
    xf_fused_cost *fc = fused(t, cm);
    xf_ruleset *rs = xf_fx_rules();
    xf_graph g;
    xf_fx_search_graph(&g);
    xf_env_options eo = xf_env_options_default();
    eo.fused = fc;
    xf_env *e;
    xf_error err;
    ck_assert_msg(xf_env_create(rs, cm, &g, &eo, &e, &err) == XF_OK, "%s", err.msg);

    double direct;
    xf_graph_index *ix;
    ck_assert_int_eq(xf_graph_index_build(xf_env_graph(e), &ix, NULL), XF_OK);
    ck_assert_msg(xf_fused_cost_graph(fc, xf_env_graph(e), ix, &direct, &err) == XF_OK, "%s",
                  err.msg);
    xf_graph_index_free(ix);
    ck_assert_double_eq(xf_env_cost(e), direct);

    int stepped = 0;
    for (int r = 0; r < xf_env_num_xfers(e); r++) {
        if (!xf_env_xfer_mask(e)[r]) continue;
        double ms, bytes;
        ck_assert_msg(xf_env_peek(e, r, 0, &ms, &bytes, &err) == XF_OK, "%s", err.msg);
        xf_env_step_result sr;
        ck_assert_msg(xf_env_step(e, r, 0, &sr, &err) == XF_OK, "%s", err.msg);
        ck_assert(sr.valid);
        ck_assert_double_eq(sr.cost_ms, ms);
        ck_assert_msg(xf_env_reset(e, &err) == XF_OK, "%s", err.msg);
        stepped++;
    }
    ck_assert_int_ge(stepped, 2);
    xf_env_free(e);
    xf_graph_free(&g);
    xf_ruleset_free(rs);
    xf_fused_cost_free(fc);
    xf_cost_close(cm);
    xf_target_close(t);
}
END_TEST

START_TEST(fused_cost_needs_a_target_and_a_cost_model)
{
    xf_cost_model *cm = xf_fx_cost_model();
    xf_fused_cost *fc = (xf_fused_cost *)1;
    xf_error err;
    ck_assert_int_eq(xf_fused_cost_create(NULL, cm, NULL, &fc, &err), XF_ERR_INVALID);
    ck_assert_ptr_null(fc);
    xf_test_expect_contains(err.msg, "a target and a cost model are both required");
    xf_cost_close(cm);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("agent_fused");
    TCase *regions = tcase_create("regions");
    tcase_add_test(regions, regions_follow_the_fusions_of_a_transformer_block);
    tcase_add_test(regions, regions_do_not_depend_on_node_numbering);
    tcase_add_test(regions, regions_extracted_compute_what_the_graph_computes);
    tcase_add_test(regions, partition_rejects_a_cap_below_one);
    suite_add_tcase(s, regions);
    TCase *cost = tcase_create("cost");
    tcase_set_timeout(cost, 120);
    tcase_add_test(cost, fused_cost_times_each_region_once_and_keeps_it);
    tcase_add_test(cost, environment_peeks_and_steps_on_the_fused_cost);
    tcase_add_test(cost, fused_cost_needs_a_target_and_a_cost_model);
    suite_add_tcase(s, cost);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
