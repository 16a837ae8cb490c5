/*
 * test_agent_arbiter.c — the candidates a search keeps for the final
 * arbiter, and the arbiter in the target runtime (ONNX Runtime).
 *
 * Candidates (no runtime needed), on the agent fixture's graph and rules:
 * at most K, cheapest first, pairwise distinct (also up to swapped operands
 * of adds: such graphs are one candidate), the start graph always
 * among them (even when K cheaper graphs exist), each with the path of rules
 * that makes it from the start graph, none kept when K is 0.
 * Arbiter (skips without ONNX Runtime): a candidate that computes the same
 * outputs with a large useless matmul on top (y + 0 * x·W) is raced, found
 * slower, and the input is written unchanged; the other way round (the
 * input is the slow one) the fast candidate is chosen with its ratio's
 * whole 95% interval below 1, again in a confirming run, and its outputs
 * in the target equal to the input's, with no closer look (that is for
 * candidates the race cannot tell from the input); the same verdicts
 * when one candidate at a time is raced (pairwise, the default at more
 * than one thread); a candidate that computes something else is dropped
 * untimed; a candidate finishing to the input itself is a duplicate. A
 * model with a symbolic batch is raced as written (batch kept symbolic)
 * against the user's file, and a candidate bound to the batch it was
 * optimised at is dropped untimed. The
 * budget is kept (a tiny one times nothing and says how many were left)
 * and the memory limit honoured (refused when the input's sessions alone
 * do not fit; the input's weights shared otherwise); with a most above it,
 * the budget grows to what the model needs (xf_arbiter_budget's plan, on
 * figures and in a run) and no further; the start graph and the cheapest
 * race first, then their unbatched layouts. The
 * environment's sparse target reward comes every k-th valid step with the
 * latency change since the previous measurement.
 */
#include <math.h>
#include <string.h>

#include "agent/search/search.h"
#include "agent_fixture.h"
#include "onnx.pb-c.h"
#include "testutil.h"

/* ------------------------------------------------------------ candidates */

static void run_search(xf_fx_env *f, xf_search_kind kind, int k, xf_search_result *res)
{
    xf_search_options so = xf_search_options_default();
    so.candidates = k;
    so.budget = 200;
    xf_search_result_init(res);
    xf_error err;
    ck_assert_msg(xf_search_run(f->e, kind, &so, res, &err) == XF_OK, "%s", err.msg);
}

static void check_candidates(const xf_search_result *res, int k)
{
    ck_assert_int_ge(res->n_candidates, 2);
    ck_assert_int_le(res->n_candidates, k);
    int starts = 0;
    for (int i = 0; i < res->n_candidates; i++) {
        const xf_search_candidate *c = &res->candidates[i];
        if (i > 0) ck_assert(res->candidates[i - 1].ms <= c->ms);
        starts += c->n_applied == 0;
        uint64_t hi, hj;
        /* distinct up to swapped operands of add, mul, min and max */
        ck_assert_int_eq(xf_graph_hash_checked(&c->g, XF_HASH_IDENTITY_UNORDERED, &hi, NULL),
                         XF_OK);
        for (int j = 0; j < i; j++) {
            ck_assert_int_eq(xf_graph_hash_checked(&res->candidates[j].g,
                                                   XF_HASH_IDENTITY_UNORDERED, &hj, NULL),
                             XF_OK);
            ck_assert_msg(hi != hj, "candidates %d and %d are the same graph", j, i);
        }
    }
    ck_assert_int_eq(starts, 1);
    ck_assert_double_eq_tol(res->candidates[0].ms, res->best_ms, 1e-9 * res->initial_ms);
}

START_TEST(searches_keep_cheapest_distinct_candidates_with_the_start)
{
    for (int kind = 0; kind < XF_SEARCH_KIND_COUNT; kind++) {
        xf_fx_env f;
        xf_fx_env_open(&f, xf_fx_search_graph, NULL);
        xf_search_result res;
        run_search(&f, (xf_search_kind)kind, 6, &res);
        check_candidates(&res, 6);
        const xf_search_candidate *start = NULL;
        for (int i = 0; i < res.n_candidates; i++)
            if (res.candidates[i].n_applied == 0) start = &res.candidates[i];
        ck_assert_ptr_nonnull(start);
        ck_assert_double_eq_tol(start->ms, res.initial_ms, 1e-9 * res.initial_ms);
        xf_search_result_free(&res);
        xf_fx_env_close(&f);
    }
}
END_TEST

START_TEST(the_start_graph_is_never_evicted)
{
    xf_fx_env f;
    xf_fx_env_open(&f, xf_fx_search_graph, NULL);
    xf_search_result res;
    run_search(&f, XF_SEARCH_TASO, 2, &res);
    ck_assert_int_eq(res.n_candidates, 2);
    ck_assert_int_gt(res.candidates[0].n_applied, 0); /* the cheapest seen */
    ck_assert_double_eq_tol(res.candidates[0].ms, res.best_ms, 1e-9 * res.initial_ms);
    ck_assert_int_eq(res.candidates[1].n_applied, 0); /* the start, pinned */
    xf_search_result_free(&res);
    run_search(&f, XF_SEARCH_TASO, 0, &res);
    ck_assert_int_eq(res.n_candidates, 0);
    ck_assert_ptr_null(res.candidates);
    xf_search_result_free(&res);
    xf_fx_env_close(&f);
}
END_TEST

/* Graphs that only swap the operands of adds are one candidate: with the
 * add commutation as its only rule, a TASO search over (a + b) + c sees
 * four graphs and keeps the start graph alone. */
START_TEST(swapped_operands_are_one_candidate)
{
    xf_rule r;
    xf_rule_init(&r);
    xf_graph *side[2] = {&r.src, &r.dst};
    for (int k = 0; k < 2; k++) {
        int a = xf_fx_input(side[k], "x0", xf_fx_shape(2, 4, 4, 0, 0));
        int b = xf_fx_input(side[k], "x1", xf_fx_shape(2, 4, 4, 0, 0));
        xf_fx_output(side[k], xf_fx_op(side[k], XF_OP_ADD, NULL, k ? b : a, k ? a : b));
    }
    int64_t id = 1;
    xf_ruleset_options ro = xf_ruleset_options_default();
    xf_ruleset *rs = NULL;
    xf_error err;
    ck_assert_msg(xf_ruleset_from_rules(&r, &id, 1, &ro, &rs, &err) == XF_OK, "%s", err.msg);
    xf_rule_free(&r);
    xf_graph g;
    xf_fx_two_adds(&g);
    xf_cost_model *cm = xf_fx_cost_model();
    xf_env *e = NULL;
    ck_assert_msg(xf_env_create(rs, cm, &g, NULL, &e, &err) == XF_OK, "%s", err.msg);
    xf_search_options so = xf_search_options_default();
    so.candidates = 8;
    so.budget = 50;
    xf_search_result res;
    xf_search_result_init(&res);
    ck_assert_msg(xf_search_run(e, XF_SEARCH_TASO, &so, &res, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_ge(res.seen, 4); /* both adds swapped either way */
    ck_assert_int_eq(res.n_candidates, 1);
    ck_assert_int_eq(res.candidates[0].n_applied, 0);
    xf_search_result_free(&res);
    xf_env_free(e);
    xf_cost_close(cm);
    xf_graph_free(&g);
    xf_ruleset_free(rs);
}
END_TEST

/* Greedy search keeps every graph of its path: one candidate with 0, 1,
 * ... n rewrites, each naming valid actions. */
START_TEST(candidate_paths_have_their_rewrites)
{
    xf_fx_env f;
    xf_fx_env_open(&f, xf_fx_search_graph, NULL);
    xf_search_result res;
    run_search(&f, XF_SEARCH_GREEDY, 8, &res);
    int seen[16] = {0};
    for (int i = 0; i < res.n_candidates; i++) {
        ck_assert_int_lt(res.candidates[i].n_applied, 16);
        seen[res.candidates[i].n_applied]++;
        for (int s = 0; s < res.candidates[i].n_applied; s++) {
            ck_assert_int_ge(res.candidates[i].applied[s], 0);
            ck_assert_int_lt(res.candidates[i].applied[s], xf_env_num_xfers(f.e));
        }
    }
    for (int n = 0; n <= res.n_applied && n < 8; n++) ck_assert_int_eq(seen[n], 1);
    xf_search_result_free(&res);
    xf_fx_env_close(&f);
}
END_TEST

/* --------------------------------------------------------------- arbiter */

/* out = relu(x), x [256,256]; slow adds 0 * (x·W) with W [256,256]: the
 * same outputs, a large useless matmul on top. wrong adds 1 * (x·W).
 * extra 2: slow with the operands of its add swapped. */
static void model_graph(xf_graph *g, int extra, float scale)
{
    xf_graph_init(g);
    int x = xf_test_input(g, "x", 2, (int64_t[]){256, 256});
    int y = xf_test_op2(g, XF_OP_RELU, NULL, x, -1);
    if (extra) {
        int w = xf_test_weight(g, "w", 2, (int64_t[]){256, 256}, 5);
        xf_shape s1 = xf_shape_make(1, (int64_t[]){1});
        int z = xf_graph_add_const(g, "scale", XF_F32, &s1, &scale, NULL);
        ck_assert_int_ge(z, 0);
        int mm = xf_test_op2(g, XF_OP_MATMUL, NULL, x, w);
        int scaled = xf_test_op2(g, XF_OP_MUL, NULL, mm, z);
        y = extra == 2 ? xf_test_op2(g, XF_OP_ADD, NULL, scaled, y)
                       : xf_test_op2(g, XF_OP_ADD, NULL, y, scaled);
    }
    xf_test_out(g, y);
}

/* A search result whose candidates are the given graphs (copied). */
static void result_of(xf_search_result *r, const xf_graph *const *g, int n)
{
    xf_search_result_init(r);
    r->candidates = xf_calloc((size_t)n, sizeof *r->candidates);
    ck_assert_ptr_nonnull(r->candidates);
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(xf_graph_clone(g[i], &r->candidates[i].g, NULL), XF_OK);
        r->candidates[i].ms = i;
        r->candidates[i].n_applied = 1; /* not the start graph */
    }
    r->n_candidates = n;
    ck_assert_int_eq(xf_graph_clone(g[0], &r->best, NULL), XF_OK);
}

/* The arbiter on model with one search whose candidates are cands. */
static void arbitrate_with(xf_target *t, const xf_graph *model, const xf_graph *const *cands,
                           int n, const xf_arbiter_options *o, xf_graph *out,
                           xf_arbiter_result *ar)
{
    xf_search_result sr;
    result_of(&sr, cands, n);
    xf_error err;
    const xf_search_result *srs[1] = {&sr};
    ck_assert_msg(xf_agent_arbitrate(t, NULL, model, srs, 1, o, out, ar, &err) == XF_OK, "%s",
                  err.msg);
    xf_search_result_free(&sr);
    ck_assert_int_eq(ar->e[0].verdict, XF_ARBITER_INPUT);
    ck_assert_int_eq(ar->e[0].candidate, -1);
}

static void arbitrate_as(xf_target *t, const xf_graph *model, const xf_graph *const *cands,
                         int n, int pairwise, xf_graph *out, xf_arbiter_result *ar)
{
    xf_arbiter_options o = xf_arbiter_options_default();
    o.pairwise = pairwise;
    o.racing = 2; /* not pairwise: two candidates at a time */
    arbitrate_with(t, model, cands, n, &o, out, ar);
    ck_assert_int_gt(ar->e[0].t.runs, 0);
}

static void arbitrate(xf_target *t, const xf_graph *model, const xf_graph *const *cands, int n,
                      xf_graph *out, xf_arbiter_result *ar)
{
    arbitrate_as(t, model, cands, n, 0, out, ar);
}

/* The arbiter racing all candidates at once, with `file` as the input file
 * (closer looks and confirming runs against it). */
static void arbitrate_against_file(xf_target *t, const xf_graph *model,
                                   const xf_graph *const *cands, int n, const char *file,
                                   xf_graph *out, xf_arbiter_result *ar)
{
    xf_arbiter_options o = xf_arbiter_options_default();
    o.pairwise = 0;
    o.input_file = file;
    arbitrate_with(t, model, cands, n, &o, out, ar);
    ck_assert_int_eq(ar->against_file, 1);
}

/* Slower beyond the noise, in a run of all and (pairwise, the default at
 * more than one thread) in a run of its own judged against that run's self
 * check: never written. */
START_TEST(a_slower_candidate_is_never_written)
{
    xf_target *t = xf_fx_target();
    if (!t) XF_SKIP("ONNX Runtime is not installed (tools/setup.sh)");
    xf_graph fast, slow, out;
    model_graph(&fast, 0, 0.0f);
    model_graph(&slow, 1, 0.0f);
    const xf_graph *c[1] = {&slow};
    for (int pairwise = 0; pairwise < 2; pairwise++) {
        xf_arbiter_result ar;
        arbitrate_as(t, &fast, c, 1, pairwise, &out, &ar);
        ck_assert_int_eq(ar.n, 2);
        ck_assert_int_eq(ar.pairwise, pairwise);
        ck_assert_int_eq(ar.chosen, 0);
        ck_assert_int_eq(ar.e[1].verdict, XF_ARBITER_TIMED);
        ck_assert_msg(ar.e[1].t.ratio > 1.0, "a matmul on top timed x%.3f", ar.e[1].t.ratio);
        /* slower beyond the noise: nothing to look at closer */
        ck_assert_int_gt(ar.e[1].self.runs, 0);
        ck_assert_int_gt(xf_target_verdict(&ar.e[1].t, &ar.e[1].self), 0);
        ck_assert_int_eq(ar.e[1].closer.runs, 0);
        uint64_t h1, h2;
        ck_assert_int_eq(xf_graph_hash_checked(&out, XF_HASH_CONTENT, &h1, NULL), XF_OK);
        ck_assert_int_eq(xf_graph_hash_checked(&fast, XF_HASH_CONTENT, &h2, NULL), XF_OK);
        ck_assert(h1 == h2); /* the input, unchanged */
        xf_arbiter_result_free(&ar);
        xf_graph_free(&out);
    }
    xf_graph_free(&fast);
    xf_graph_free(&slow);
    xf_target_close(t);
}
END_TEST

/* The models of the cases below: relu alone (fast), the same outputs with a
 * useless matmul on top (slow), and other outputs (wrong). */
static void three_models(xf_graph *fast, xf_graph *slow, xf_graph *wrong)
{
    model_graph(fast, 0, 0.0f);
    model_graph(slow, 1, 0.0f);
    model_graph(wrong, 1, 1.0f);
}

START_TEST(a_faster_candidate_is_written_and_a_wrong_one_dropped)
{
    xf_target *t = xf_fx_target();
    if (!t) XF_SKIP("ONNX Runtime is not installed (tools/setup.sh)");
    xf_graph fast, slow, wrong, out;
    three_models(&fast, &slow, &wrong);
    const xf_graph *c[3] = {&wrong, &slow, &fast};
    xf_arbiter_result ar;
    arbitrate(t, &slow, c, 3, &out, &ar);
    ck_assert_int_eq(ar.n, 4);
    ck_assert_int_eq(ar.e[1].verdict, XF_ARBITER_TARGET_WRONG);
    ck_assert_int_eq(ar.e[1].t.runs, 0);
    /* the verdict says which check dropped it and by how much */
    ck_assert_msg(strstr(ar.e[1].why, "in the target differ") &&
                      strstr(ar.e[1].why, "output 0 (") && strstr(ar.e[1].why, "max |d| ") && strstr(ar.e[1].why, "(tolerance 0.0001)"),
                  "why: '%s'", ar.e[1].why);
    ck_assert_str_eq(ar.e[2].why, "");
    ck_assert_str_eq(ar.e[3].why, "");
    ck_assert_int_eq(ar.e[2].verdict, XF_ARBITER_DUPLICATE); /* finishes to the input */
    ck_assert_int_eq(ar.e[3].verdict, XF_ARBITER_CHOSEN);
    ck_assert_int_eq(ar.chosen, 3);
    ck_assert_msg(ar.e[3].t.hi < 1.0, "interval [%.3f, %.3f]", ar.e[3].t.lo, ar.e[3].t.hi);
    ck_assert_int_gt(ar.e[3].confirm.runs, 0); /* confirmed in a second run */
    ck_assert_int_eq(ar.e[3].closer.runs, 0);  /* faster in the run of all already */
    ck_assert_msg(ar.e[3].confirm.hi < 1.0, "confirming interval [%.3f, %.3f]",
                  ar.e[3].confirm.lo, ar.e[3].confirm.hi);
    ck_assert(ar.max_rel <= 1e-4);
    ck_assert_int_eq(out.n_nodes, fast.n_nodes);
    xf_arbiter_result_free(&ar);
    xf_graph_free(&out);
    /* the same choice when each candidate has a run of its own (pairwise) */
    arbitrate_as(t, &slow, c, 3, 1, &out, &ar);
    ck_assert_int_eq(ar.chosen, 3);
    ck_assert_int_gt(ar.e[3].self.runs, 0);
    ck_assert_int_lt(xf_target_verdict(&ar.e[3].t, &ar.e[3].self), 0);
    ck_assert_int_gt(ar.e[3].confirm.runs, 0);
    ck_assert_int_eq(out.n_nodes, fast.n_nodes);
    xf_arbiter_result_free(&ar);
    xf_graph_free(&out);
    xf_graph_free(&fast);
    xf_graph_free(&slow);
    xf_graph_free(&wrong);
    xf_target_close(t);
}
END_TEST

/* relu(x) + 0 * ((x @ w) @ w): the slow model with a second matmul. */
static void slower_graph(xf_graph *g)
{
    xf_graph_init(g);
    int x = xf_test_input(g, "x", 2, (int64_t[]){256, 256});
    int y = xf_test_op2(g, XF_OP_RELU, NULL, x, -1);
    int w = xf_test_weight(g, "w", 2, (int64_t[]){256, 256}, 5);
    float zero = 0.0f;
    xf_shape s1 = xf_shape_make(1, (int64_t[]){1});
    int z = xf_graph_add_const(g, "scale", XF_F32, &s1, &zero, NULL);
    ck_assert_int_ge(z, 0);
    int mm = xf_test_op2(g, XF_OP_MATMUL, NULL, xf_test_op2(g, XF_OP_MATMUL, NULL, x, w), w);
    xf_test_out(g, xf_test_op2(g, XF_OP_ADD, NULL, y, xf_test_op2(g, XF_OP_MUL, NULL, mm, z)));
}

/* The input as exported can run at another speed than the user's file
 * (onnxruntime fuses what an export's constant shapes allow): with
 * input_file the winner of the race is confirmed against the file. Here
 * the input graph has two useless matmuls, the candidate one and the
 * "file" none: the candidate wins the race against the graph and is slower
 * than the file, so it is not confirmed and the input is kept. */
START_TEST(the_winner_is_confirmed_against_the_input_file)
{
    xf_target *t = xf_fx_target();
    if (!t) XF_SKIP("ONNX Runtime is not installed (tools/setup.sh)");
    xf_graph fast, slow, wrong, slower, out;
    three_models(&fast, &slow, &wrong);
    slower_graph(&slower);
    char file[4096];
    snprintf(file, sizeof file, "%s", xf_test_tmp("arbiter_input_file.onnx"));
    xf_error err;
    ck_assert_msg(xf_onnx_save(&fast, file, &err) == XF_OK, "%s", err.msg);
    const xf_graph *c[1] = {&slow};
    xf_arbiter_result ar;
    arbitrate_against_file(t, &slower, c, 1, file, &out, &ar);
    ck_assert_msg(ar.e[1].t.hi < 1.0, "the race: [%.3f, %.3f]", ar.e[1].t.lo, ar.e[1].t.hi);
    ck_assert_int_gt(ar.e[1].confirm.runs, 0);
    ck_assert_msg(ar.e[1].confirm.lo > 1.0, "against the file: [%.3f, %.3f]", ar.e[1].confirm.lo,
                  ar.e[1].confirm.hi);
    ck_assert_int_eq(ar.e[1].verdict, XF_ARBITER_UNCONFIRMED);
    ck_assert_int_eq(ar.chosen, 0);
    ck_assert_int_eq(out.n_nodes, slower.n_nodes);
    xf_arbiter_result_free(&ar);
    xf_graph_free(&out);
    xf_graph_free(&fast);
    xf_graph_free(&slow);
    xf_graph_free(&slower);
    xf_graph_free(&wrong);
    xf_target_close(t);
}
END_TEST

/* y + 0 * (x·W·W...): y's values with `matmuls` useless matmuls by W
 * [256,256] (of `seed`) on top. */
static int plus_useless_matmuls(xf_graph *g, int x, int y, uint64_t seed, int matmuls)
{
    int w = xf_test_weight(g, "w", 2, (int64_t[]){256, 256}, seed);
    float zero = 0.0f;
    xf_shape s1 = xf_shape_make(1, (int64_t[]){1});
    int z = xf_graph_add_const(g, "scale", XF_F32, &s1, &zero, NULL);
    ck_assert_int_ge(z, 0);
    int mm = x;
    for (int k = 0; k < matmuls; k++) mm = xf_test_op2(g, XF_OP_MATMUL, NULL, mm, w);
    return xf_test_op2(g, XF_OP_ADD, NULL, y, xf_test_op2(g, XF_OP_MUL, NULL, mm, z));
}

/* relu(x) + c with x [n,256]; c [1,256], or with `tiled` [n,256], every row
 * the same (the same outputs at batch n, but bound to it: it cannot be
 * written with a symbolic batch); then `matmuls` useless matmuls on top
 * (y + 0 * x·W·W...). */
static void batch_graph(xf_graph *g, int64_t n, int tiled, int matmuls)
{
    xf_graph_init(g);
    int x = xf_test_input(g, "x", 2, (int64_t[]){n, 256});
    static float c[4 * 256];
    ck_assert_int_le(n, 4);
    for (int i = 0; i < 4 * 256; i++) c[i] = 0.01f * (float)(i % 256);
    xf_shape cs = xf_shape_make(2, (int64_t[]){tiled ? n : 1, 256});
    int cv = xf_graph_add_const(g, "c", XF_F32, &cs, c, NULL);
    ck_assert_int_ge(cv, 0);
    int y = xf_test_op2(g, XF_OP_ADD, NULL, xf_test_op2(g, XF_OP_RELU, NULL, x, -1), cv);
    if (matmuls) y = plus_useless_matmuls(g, x, y, 5, matmuls);
    xf_test_out(g, y);
}

/* g written to `path` with the leading dim of its input and output a
 * dim_param "N" (a model file with a symbolic batch). */
static void save_symbolic_batch(const xf_graph *g, const char *path)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    xf_error err;
    ck_assert_msg(xf_onnx_save_buffer(g, &buf, &len, &err) == XF_OK, "%s", err.msg);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, buf);
    ck_assert_ptr_nonnull(mp);
    xf_free(buf);
    Onnx__ValueInfoProto *io[2] = {mp->graph->input[0], mp->graph->output[0]};
    Onnx__TensorShapeProto__Dimension saved[2];
    static char name[] = "N";
    for (int k = 0; k < 2; k++) {
        Onnx__TensorShapeProto__Dimension *d = io[k]->type->tensor_type->shape->dim[0];
        saved[k] = *d;
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
        d->dim_param = name;
    }
    len = onnx__model_proto__get_packed_size(mp);
    buf = xf_malloc(len);
    ck_assert_ptr_nonnull(buf);
    onnx__model_proto__pack(mp, buf);
    for (int k = 0; k < 2; k++) *io[k]->type->tensor_type->shape->dim[0] = saved[k];
    onnx__model_proto__free_unpacked(mp, NULL);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(fwrite(buf, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
    xf_free(buf);
}

/* A model with a symbolic batch is timed as it would be written: with the
 * target keeping its dims (xf_target_keep_dims), every candidate is handed
 * to onnxruntime with the batch symbolic and the race itself runs against
 * the user's file, not against rlflow's export of the input. Here the input
 * graph has two useless matmuls and the file none: a candidate with one is
 * faster than the graph but slower than the file, and the race says so
 * (the other way round when the race is against the graph:
 * the_winner_is_confirmed_against_the_input_file); a candidate bound to
 * batch 2 (a constant tiled to it) cannot be written with the batch
 * symbolic and is dropped untimed. The input is kept. */
START_TEST(a_symbolic_model_is_timed_as_written_against_its_file)
{
    xf_target *t = xf_fx_target();
    if (!t) XF_SKIP("ONNX Runtime is not installed (tools/setup.sh)");
    xf_graph fast, slow, slower, baked, out;
    batch_graph(&fast, 2, 0, 0);
    batch_graph(&slow, 2, 0, 1);
    batch_graph(&slower, 2, 0, 2);
    batch_graph(&baked, 2, 1, 0);
    char file[4096];
    snprintf(file, sizeof file, "%s", xf_test_tmp("arbiter_symbolic.onnx"));
    save_symbolic_batch(&fast, file);
    static const char *const names[1] = {"N"};
    static const int64_t sizes[1] = {2};
    xf_onnx_options io = xf_onnx_default_options();
    io.n_dim_overrides = 1;
    io.dim_names = names;
    io.dim_values = sizes;
    xf_onnx_dynamic *d = NULL;
    xf_error err;
    ck_assert_msg(xf_onnx_dynamic_open_file(file, &io, &d, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(xf_onnx_dynamic_points(d), XF_ONNX_POINTS);
    xf_target_keep_dims(t, d);
    ck_assert_ptr_eq(xf_target_kept_dims(t), d);
    const xf_graph *c[2] = {&slow, &baked};
    xf_arbiter_result ar;
    arbitrate_against_file(t, &slower, c, 2, file, &out, &ar);
    ck_assert_int_eq(ar.n, 3);
    ck_assert_int_gt(ar.e[1].t.runs, 0);
    ck_assert_msg(ar.e[1].t.lo > 1.0, "one matmul against the file without: [%.3f, %.3f]",
                  ar.e[1].t.lo, ar.e[1].t.hi);
    ck_assert_int_eq(ar.e[1].verdict, XF_ARBITER_TIMED);
    ck_assert_int_eq(ar.e[2].verdict, XF_ARBITER_NOT_WRITABLE);
    ck_assert_int_eq(ar.e[2].t.runs, 0);
    ck_assert_int_eq(ar.chosen, 0);
    ck_assert_int_eq(out.n_nodes, slower.n_nodes);
    xf_arbiter_result_free(&ar);
    xf_graph_free(&out);
    /* without the dims kept, the tiled constant is just a constant */
    xf_target_keep_dims(t, NULL);
    ck_assert_ptr_null(xf_target_kept_dims(t));
    const xf_graph *b[1] = {&baked};
    arbitrate_against_file(t, &fast, b, 1, file, &out, &ar);
    ck_assert_int_gt(ar.e[1].t.runs, 0);
    ck_assert_int_ne(ar.e[1].verdict, XF_ARBITER_NOT_WRITABLE);
    xf_arbiter_result_free(&ar);
    xf_graph_free(&out);
    xf_onnx_dynamic_free(d);
    xf_graph_free(&fast);
    xf_graph_free(&slow);
    xf_graph_free(&slower);
    xf_graph_free(&baked);
    xf_target_close(t);
}
END_TEST

/* Two searches of the model (e.g. its scalings moved and kept): each brings
 * up to max_models candidates of its own, a model already listed is a
 * duplicate (also when it only swaps the operands of an add: the same
 * model to the target), and the fastest is written whichever search found
 * it; entries name their search. */
START_TEST(the_candidates_of_every_search_are_weighed)
{
    xf_target *t = xf_fx_target();
    if (!t) XF_SKIP("ONNX Runtime is not installed (tools/setup.sh)");
    xf_graph fast, slow, wrong, out;
    three_models(&fast, &slow, &wrong);
    xf_graph swapped;
    model_graph(&swapped, 2, 0.0f);
    const xf_graph *first[2] = {&wrong, &slow}, *second[2] = {&swapped, &fast};
    xf_search_result sr[2];
    result_of(&sr[0], first, 2);
    result_of(&sr[1], second, 2);
    const xf_search_result *srs[2] = {&sr[0], &sr[1]};
    xf_arbiter_options o = xf_arbiter_options_default();
    o.max_models = 1; /* per search: the first has no model to time at all */
    o.pairwise = 0;
    xf_arbiter_result ar;
    xf_error err;
    ck_assert_msg(xf_agent_arbitrate(t, NULL, &slow, srs, 2, &o, &out, &ar, &err) == XF_OK, "%s",
                  err.msg);
    ck_assert_int_eq(ar.n, 5);
    const int search[5] = {0, 0, 0, 1, 1}, cand[5] = {-1, 0, 1, 0, 1};
    const xf_arbiter_verdict v[5] = {XF_ARBITER_INPUT, XF_ARBITER_TARGET_WRONG, XF_ARBITER_DUPLICATE,
                                     XF_ARBITER_DUPLICATE, XF_ARBITER_CHOSEN};
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(ar.e[i].search, search[i]);
        ck_assert_int_eq(ar.e[i].candidate, cand[i]);
        ck_assert_int_eq(ar.e[i].verdict, v[i]);
    }
    ck_assert_int_eq(ar.chosen, 4);
    ck_assert_int_eq(out.n_nodes, fast.n_nodes);
    char name[32];
    xf_arbiter_entry_name(&ar.e[4], name, sizeof name);
    ck_assert_str_eq(name, "cand 1:1");
    xf_arbiter_entry_name(&ar.e[1], name, sizeof name);
    ck_assert_str_eq(name, "cand 0");
    xf_arbiter_entry_name(&ar.e[0], name, sizeof name);
    ck_assert_str_eq(name, "input");
    xf_arbiter_result_free(&ar);
    xf_graph_free(&out);
    for (int i = 0; i < 2; i++) xf_search_result_free(&sr[i]);
    xf_graph_free(&fast);
    xf_graph_free(&slow);
    xf_graph_free(&wrong);
    xf_graph_free(&swapped);
    xf_target_close(t);
}
END_TEST

/* The budget is kept: when what is left would not even confirm a winner,
 * no candidate is timed, the input is written, and the result says how
 * many were left (deterministic: a budget of 10 ms). With a most above
 * it (budget_max_s) the budget grows, before any candidate joins, to the
 * plan (xf_arbiter_budget: over a second for any model) and the first
 * candidate is raced; with a most of 20 ms it grows to that and
 * still times nothing. The memory limit:
 * when the input's two sessions alone would not fit, the arbiter times
 * nothing, says why, and keeps the input; within a generous limit the
 * input's weights are shared with every session and the sessions'
 * estimate is reported. */
START_TEST(the_budget_is_kept_and_the_memory_limit_honoured)
{
    xf_target *t = xf_fx_target();
    if (!t) XF_SKIP("ONNX Runtime is not installed (tools/setup.sh)");
    xf_graph fast, slow, wrong, out;
    three_models(&fast, &slow, &wrong);
    const xf_graph *c[2] = {&fast, &wrong};
    xf_arbiter_options o = xf_arbiter_options_default();
    xf_arbiter_result ar;
    o.budget_s = 0.01;
    arbitrate_with(t, &slow, c, 2, &o, &out, &ar);
    ck_assert_int_eq(ar.chosen, 0);
    ck_assert_int_eq(ar.n_untimed, 2);
    ck_assert_int_eq(ar.budget_hit, 1);
    ck_assert(ar.budget_s == 0.01);
    ck_assert_int_eq(out.n_nodes, slow.n_nodes);
    xf_arbiter_result_free(&ar);
    xf_graph_free(&out);
    /* with a most above it, the budget grows to the plan before any
     * candidate joins: the first candidate is raced */
    o.budget_max_s = 600;
    arbitrate_with(t, &slow, c, 2, &o, &out, &ar);
    ck_assert(ar.budget_given_s == 0.01);
    ck_assert_msg(ar.budget_s > 1 && ar.budget_s <= 600, "budget %.3f s", ar.budget_s);
    ck_assert(ar.budget_share_ms > 0);
    ck_assert_int_gt(ar.e[1].t.runs, 0);
    xf_arbiter_result_free(&ar);
    xf_graph_free(&out);
    /* and no further than the most: 20 ms still times nothing */
    o.budget_max_s = 0.02;
    arbitrate_with(t, &slow, c, 2, &o, &out, &ar);
    ck_assert(ar.budget_s == 0.02);
    ck_assert_int_eq(ar.n_untimed, 2);
    ck_assert_int_eq(ar.chosen, 0);
    xf_arbiter_result_free(&ar);
    xf_graph_free(&out);
    o = xf_arbiter_options_default();
    o.mem_limit = 4096;
    arbitrate_with(t, &slow, c, 1, &o, &out, &ar);
    ck_assert_int_eq(ar.chosen, 0);
    xf_test_expect_contains(ar.refused, "over the memory limit of 4.0 KiB");
    ck_assert_int_eq(ar.e[0].t.runs, 0);
    ck_assert_int_eq(ar.n, 1);
    xf_arbiter_result_free(&ar);
    xf_graph_free(&out);
    o.mem_limit = (size_t)1 << 30;
    arbitrate_with(t, &slow, c, 1, &o, &out, &ar);
    ck_assert_str_eq(ar.refused, "");
    ck_assert_uint_eq(ar.shared_bytes, 256 * 256 * 4); /* the slow model's weight */
    ck_assert(ar.mem_estimate > (double)ar.shared_bytes);
    ck_assert_int_eq(ar.racing, 1); /* one candidate at a time by default */
    xf_arbiter_result_free(&ar);
    xf_graph_free(&out);
    xf_graph_free(&fast);
    xf_graph_free(&slow);
    xf_graph_free(&wrong);
    xf_target_close(t);
}
END_TEST

/* The sparse reward: every 2nd valid step the graph is timed in the target
 * and the reward is the cost model's term plus the latency change since
 * the previous measurement (the prepared model's at first), in percent of
 * the prepared model's latency; the steps between get the dense term only. */
START_TEST(the_environment_rewards_target_latency_every_k_steps)
{
    xf_target *t = xf_fx_target();
    if (!t) XF_SKIP("ONNX Runtime is not installed (tools/setup.sh)");
    xf_env_options eo = xf_env_options_default();
    eo.target = t;
    eo.target_every = 2;
    eo.reward_target = 0.5;
    xf_fx_env f;
    xf_fx_env_open(&f, xf_fx_search_graph, &eo);
    double init = xf_env_target_initial_ms(f.e), last = init;
    ck_assert(init > 0);
    for (int k = 1; k <= 4; k++) {
        const uint8_t *mask = xf_env_xfer_mask(f.e);
        int r = 0;
        while (r < xf_env_num_xfers(f.e) && !mask[r]) r++;
        ck_assert_int_lt(r, xf_env_num_xfers(f.e));
        double prev = xf_env_cost(f.e);
        xf_env_step_result sr;
        xf_error err;
        ck_assert_msg(xf_env_step(f.e, r, 0, &sr, &err) == XF_OK, "%s", err.msg);
        ck_assert(sr.valid);
        double dense = (prev - sr.cost_ms) / xf_env_initial_cost(f.e) * 100.0;
        if (k % 2) {
            ck_assert(sr.target_ms == 0);
            ck_assert_double_eq_tol(sr.reward, dense, 1e-9);
        } else {
            ck_assert(sr.target_ms > 0);
            ck_assert_double_eq_tol(sr.reward, dense + 0.5 * (last - sr.target_ms) / init * 100.0,
                                    1e-9);
            last = sr.target_ms;
        }
    }
    xf_env_profile p;
    xf_env_profile_get(f.e, &p);
    ck_assert_int_eq(p.target_runs, 3); /* the prepared model, steps 2 and 4 */
    ck_assert(p.target > 0);
    xf_fx_env_close(&f);
    xf_target_close(t);
}
END_TEST

/* ----------------------------------------------------------------- final */

/* A timing of ratio r with interval [lo, hi] over 84 rounds. */
static xf_target_timing timing(double r, double lo, double hi)
{
    xf_target_timing t;
    memset(&t, 0, sizeof t);
    t.ratio = r;
    t.lo = lo;
    t.hi = hi;
    t.noise = hi - r > r - lo ? hi - r : r - lo;
    t.runs = 84;
    return t;
}

/* The final's choice on injected timings (no runtime): of the finalists
 * faster than the input beyond the noise, the cheapest by the cost model
 * among the fastest and those whose interval reaches its interval; never
 * one told apart from the fastest (slower), one the run cannot tell from
 * the input, or one not eligible (the interpreter check failed). With the
 * smallest ratio as the rule (before: the minimum of noisy draws) the first
 * case would choose finalist 0. */
START_TEST(the_final_writes_the_cheapest_of_those_it_cannot_tell_apart)
{
    xf_target_timing self[4];
    for (int i = 0; i < 4; i++) self[i] = timing(1.0, 0.98, 1.02);
    /* three near-equal finalists: the fastest costs most */
    xf_target_timing t[4] = {timing(0.885, 0.879, 0.894), timing(0.890, 0.883, 0.896),
                             timing(0.891, 0.885, 0.897), timing(0.95, 0.93, 0.97)};
    double cost[4] = {0.1741, 0.1739, 0.1740, 0.1000};
    /* the cheapest (finalist 3) is told apart from the fastest: not chosen */
    ck_assert_int_eq(xf_arbiter_pick(t, self, cost, NULL, 4), 1);
    /* the same when the cheapest of the three may not be chosen */
    int eligible[4] = {1, 0, 1, 1};
    ck_assert_int_eq(xf_arbiter_pick(t, self, cost, eligible, 4), 2);
    /* equal costs: the smaller ratio */
    double same[4] = {0.2, 0.2, 0.2, 0.2};
    ck_assert_int_eq(xf_arbiter_pick(t, self, same, NULL, 3), 0);
    /* a finalist the run cannot tell from the input (its interval reaches
     * the self check's) is not chosen, however cheap */
    t[1] = timing(0.96, 0.93, 0.99);
    cost[1] = 0.01;
    ck_assert_int_eq(xf_arbiter_pick(t, self, cost, NULL, 3), 2);
    /* told apart: the fastest, though it costs most */
    t[2] = timing(0.93, 0.91, 0.95);
    ck_assert_int_eq(xf_arbiter_pick(t, self, cost, NULL, 3), 0);
    /* without a self check the interval must lie below 1 */
    ck_assert_int_eq(xf_arbiter_pick(t, NULL, cost, NULL, 2), 0);
    /* none faster, or none eligible: -1 */
    xf_target_timing slow[2] = {timing(1.01, 0.99, 1.03), timing(0.99, 0.97, 1.01)};
    ck_assert_int_eq(xf_arbiter_pick(slow, self, cost, NULL, 2), -1);
    int none[3] = {0, 0, 0};
    ck_assert_int_eq(xf_arbiter_pick(t, self, cost, none, 3), -1);
    /* a finalist with no runs is not chosen */
    t[0].runs = 0;
    ck_assert_int_eq(xf_arbiter_pick(t, self, cost, NULL, 1), -1);
}
END_TEST

/* relu(relu(x)): the fast model's outputs by another, as fast, graph. */
static void fast_twice(xf_graph *g)
{
    xf_graph_init(g);
    int x = xf_test_input(g, "x", 2, (int64_t[]){256, 256});
    int y = xf_test_op2(g, XF_OP_RELU, NULL, x, -1);
    xf_test_out(g, xf_test_op2(g, XF_OP_RELU, NULL, y, -1));
}

/* Three candidates faster than the input (two useless matmuls): the
 * relu alone, the relu twice and one useless matmul. The race finds them
 * faster, and the three run a final against the input: every finalist has
 * its final timing, the one matmul leaves it slower than the relus (or is
 * a runner-up), a relu is written, faster beyond the noise in the final,
 * and the others are runners-up or not confirmed. With finalists 1 there
 * is no final: the race's fastest is confirmed alone. */
START_TEST(two_or_more_faster_candidates_run_a_final)
{
    xf_target *t = xf_fx_target();
    if (!t) XF_SKIP("ONNX Runtime is not installed (tools/setup.sh)");
    xf_graph fast, twice, slow, slower, out;
    model_graph(&fast, 0, 0.0f);
    fast_twice(&twice);
    model_graph(&slow, 1, 0.0f);
    slower_graph(&slower);
    const xf_graph *c[3] = {&slow, &twice, &fast};
    xf_arbiter_options o = xf_arbiter_options_default();
    o.pairwise = 1;
    o.close_rounds = 42; /* the final's rounds: enough to tell the matmul from a relu */
    xf_arbiter_result ar;
    arbitrate_with(t, &slower, c, 3, &o, &out, &ar);
    ck_assert_int_eq(ar.n, 4);
    ck_assert_int_eq(ar.finalists, 3);
    ck_assert_int_ge(ar.final_rounds, o.min_rounds);
    int chosen = ar.chosen;
    ck_assert_msg(chosen == 2 || chosen == 3, "chose entry %d", chosen);
    ck_assert_int_eq(ar.e[chosen].verdict, XF_ARBITER_CHOSEN);
    ck_assert_int_eq(ar.e[chosen].final, 1);
    ck_assert_msg(ar.e[chosen].confirm.hi < 1.0, "final interval [%.3f, %.3f]",
                  ar.e[chosen].confirm.lo, ar.e[chosen].confirm.hi);
    for (int i = 1; i < 4; i++) {
        ck_assert_msg(ar.e[i].final == 1 || ar.e[i].final == 2, "entry %d final %d", i,
                      ar.e[i].final);
        ck_assert_int_gt(ar.e[i].confirm.runs, 0);
        if (i != chosen)
            ck_assert_msg(ar.e[i].verdict == XF_ARBITER_RUNNER_UP ||
                              ar.e[i].verdict == XF_ARBITER_UNCONFIRMED,
                          "entry %d verdict %d", i, ar.e[i].verdict);
    }
    /* the matmul is never written over a relu */
    ck_assert_int_ne(chosen, 1);
    ck_assert_int_lt(out.n_nodes, slow.n_nodes);
    xf_arbiter_result_free(&ar);
    xf_graph_free(&out);
    /* no final: the fastest of the race confirmed alone */
    o.finalists = 1;
    arbitrate_with(t, &slower, c, 3, &o, &out, &ar);
    ck_assert_int_eq(ar.finalists, 0);
    ck_assert_int_gt(ar.chosen, 0);
    ck_assert_int_eq(ar.e[ar.chosen].final, 0);
    ck_assert_int_gt(ar.e[ar.chosen].confirm.runs, 0);
    xf_arbiter_result_free(&ar);
    xf_graph_free(&out);
    xf_graph_free(&fast);
    xf_graph_free(&twice);
    xf_graph_free(&slow);
    xf_graph_free(&slower);
    xf_target_close(t);
}
END_TEST

/* The budget planned for the model (no runtime): fixed without a most
 * above it; a small model keeps the budget given; a BERT-base's run of
 * 324 ms gets what 4 models raced for 21 rounds beside the input and its
 * self check take, with their loads, and a confirming run of 21 rounds and
 * one of 84 (the figures of the formula, not a timing); a slower model is
 * bounded by the most; no limit stays none. */
START_TEST(the_budget_grows_with_the_model_within_its_most)
{
    xf_arbiter_options o = xf_arbiter_options_default();
    o.budget_s = 90;
    ck_assert(xf_arbiter_budget(&o, 324, 2, 5) == 90);
    o.budget_max_s = 300;
    ck_assert(xf_arbiter_budget(&o, 2, 0.05, 0.5) == 90);
    double want = 5 + 4 * (2 + 63 * 0.324) + 3 * (2 + 21 * 0.324) + 3 * (2 + 84 * 0.324);
    ck_assert(want > 90 && want < 300);
    ck_assert_double_eq_tol(xf_arbiter_budget(&o, 324, 2, 5), want, 1e-9);
    ck_assert(xf_arbiter_budget(&o, 2000, 2, 5) == 300);
    o.budget_models = 2;
    ck_assert_double_eq_tol(xf_arbiter_budget(&o, 324, 2, 5), want - 2 * (2 + 63 * 0.324), 1e-9);
    o.budget_s = 0;
    ck_assert(xf_arbiter_budget(&o, 324, 2, 5) == 0);
}
END_TEST

/* relu(x) + 0 * (x·W...) with x [1,4,256], W of the given seed, `matmuls`
 * useless matmuls: a batch-1 model with an unbatched layout from two
 * matmuls on (each by a 2-D weight saves two Reshapes in onnxruntime, the
 * input's and the output's adapters cost one each). */
static void batch1_graph(xf_graph *g, uint64_t seed, int matmuls)
{
    xf_graph_init(g);
    int x = xf_test_input(g, "x", 3, (int64_t[]){1, 4, 256});
    int y = xf_test_op2(g, XF_OP_RELU, NULL, x, -1);
    xf_test_out(g, plus_useless_matmuls(g, x, y, seed, matmuls));
}

/* The order of the race: the start graph, the search's cheapest, then
 * their unbatched layouts (before: the start graph's layout took the
 * second place, and at a BERT-base's size the budget reached the
 * cheapest third). Entries are listed as they are queued, and the queue
 * races in its order. */
START_TEST(the_start_graph_and_the_cheapest_race_first_then_their_layouts)
{
    xf_target *t = xf_fx_target();
    if (!t) XF_SKIP("ONNX Runtime is not installed (tools/setup.sh)");
    xf_graph input, start, cheapest, out;
    batch1_graph(&input, 5, 3);
    batch1_graph(&start, 5, 2);
    batch1_graph(&cheapest, 6, 2);
    const xf_graph *c[2] = {&cheapest, &start};
    xf_search_result sr;
    result_of(&sr, c, 2);
    sr.candidates[1].n_applied = 0; /* the start graph, the dearer */
    const xf_search_result *srs[1] = {&sr};
    xf_arbiter_options o = xf_arbiter_options_default();
    xf_arbiter_result ar;
    xf_error err;
    ck_assert_msg(xf_agent_arbitrate(t, NULL, &input, srs, 1, &o, &out, &ar, &err) == XF_OK, "%s",
                  err.msg);
    ck_assert_int_eq(ar.n, 5);
    const int cand[5] = {-1, 1, 0, 1, 0}, unbatched[5] = {0, 0, 0, 1, 1};
    for (int i = 1; i < 5; i++) {
        ck_assert_int_eq(ar.e[i].candidate, cand[i]);
        ck_assert_int_eq(ar.e[i].unbatched, unbatched[i]);
        ck_assert_msg(ar.e[i].t.runs > 0, "entry %d verdict %d: %s", i, ar.e[i].verdict,
                      ar.e[i].why);
    }
    xf_arbiter_result_free(&ar);
    xf_graph_free(&out);
    xf_search_result_free(&sr);
    xf_graph_free(&input);
    xf_graph_free(&start);
    xf_graph_free(&cheapest);
    xf_target_close(t);
}
END_TEST

/* relu(x) + 0 * (x·W·W...) with x [256,256] (no unbatched layout), W of
 * the given seed: models of one family (the same nodes and cost) for each
 * count of matmuls, distinct for each seed. */
static void family_graph(xf_graph *g, uint64_t seed, int matmuls)
{
    xf_graph_init(g);
    int x = xf_test_input(g, "x", 2, (int64_t[]){256, 256});
    int y = xf_test_op2(g, XF_OP_RELU, NULL, x, -1);
    xf_test_out(g, plus_useless_matmuls(g, x, y, seed, matmuls));
}

/* Repeats race after every distinct model: of the cheapest first a1, a2
 * (a1's family: the same nodes and cost as written, other weights) and
 * b, the race takes a1, b, then a2, the repeat of a1 (before: a1, a2, b;
 * at a BERT-base's size on a slower machine four of one family took the
 * race's time, 2026-11-30). Only with a cost model: without one every
 * model is its own family and the race keeps the cheapest-first order. */
START_TEST(repeats_race_after_the_distinct_models)
{
    xf_target *t = xf_fx_target();
    if (!t) XF_SKIP("ONNX Runtime is not installed (tools/setup.sh)");
    xf_cost_model *cm = xf_fx_cost_model();
    xf_graph input, a1, a2, b, out;
    family_graph(&input, 5, 3);
    family_graph(&a1, 6, 1);
    family_graph(&a2, 7, 1);
    family_graph(&b, 8, 2);
    const xf_graph *c[3] = {&a1, &a2, &b};
    xf_search_result sr;
    result_of(&sr, c, 3);
    const xf_search_result *srs[1] = {&sr};
    for (int with_cost = 1; with_cost >= 0; with_cost--) {
        xf_arbiter_options o = xf_arbiter_options_default();
        /* the order alone is asserted: short races, no longer runs (under load the
         * default lengths took the case past its timeout) */
        o.timing.rounds = 8;
        o.min_rounds = 3;
        o.close_rounds = 0;
        o.finalists = 1;
        xf_arbiter_result ar;
        xf_error err;
        ck_assert_msg(xf_agent_arbitrate(t, with_cost ? cm : NULL, &input, srs, 1, &o, &out, &ar,
                                         &err) == XF_OK,
                      "%s", err.msg);
        ck_assert_int_eq(ar.n, 4); /* entries as offered: the input, a1, a2, b */
        const int cand[4] = {-1, 0, 1, 2};
        const int raced[2][4] = {{0, 1, 2, 3}, {0, 1, 3, 2}};
        const int like[2][4] = {{0, 0, 0, 0}, {0, 0, 1, 0}};
        for (int i = 0; i < 4; i++) {
            ck_assert_int_eq(ar.e[i].candidate, cand[i]);
            ck_assert_msg(ar.e[i].raced == raced[with_cost][i],
                          "with_cost %d: entry %d raced %d-th, not %d-th (verdict %d: %s)",
                          with_cost, i, ar.e[i].raced, raced[with_cost][i], ar.e[i].verdict,
                          ar.e[i].why);
            ck_assert_int_eq(ar.e[i].like, like[with_cost][i]);
        }
        xf_arbiter_result_free(&ar);
        xf_graph_free(&out);
    }
    xf_search_result_free(&sr);
    xf_cost_close(cm);
    xf_graph_free(&input);
    xf_graph_free(&a1);
    xf_graph_free(&a2);
    xf_graph_free(&b);
    xf_target_close(t);
}
END_TEST

/* A repeat joins the race only while the confirmation in full still fits
 * after it: its reserve holds the close_rounds run too (or a final as
 * long), a distinct model's the default run alone. On figures, no clock:
 * a BERT-base's 300 ms share of a round and 1 s loads. */
START_TEST(a_repeat_keeps_room_for_the_whole_confirmation)
{
    xf_arbiter_options o = xf_arbiter_options_default();
    double pair21 = 3 * (1 + 21 * 0.3), pair84 = 3 * (1 + 84 * 0.3);
    ck_assert_double_eq_tol(xf_arbiter_reserve(&o, 300, 1, 0, 0), pair21, 1e-9);
    ck_assert_double_eq_tol(xf_arbiter_reserve(&o, 300, 1, 0, 1), pair21 + pair84, 1e-9);
    /* one found faster: the next makes a final of two, as long as the race or in full */
    ck_assert_double_eq_tol(xf_arbiter_reserve(&o, 300, 1, 1, 0),
                            fmax(2 * pair21, 4 * (1 + 21 * 0.3)), 1e-9);
    ck_assert_double_eq_tol(xf_arbiter_reserve(&o, 300, 1, 1, 1),
                            fmax(2 * pair21 + pair84, 4 * (1 + 84 * 0.3)), 1e-9);
    o.close_rounds = 0; /* no longer run: the same reserve */
    ck_assert_double_eq_tol(xf_arbiter_reserve(&o, 300, 1, 0, 1), pair21, 1e-9);
}
END_TEST

START_TEST(bad_options_are_refused)
{
    xf_graph g, out;
    model_graph(&g, 0, 0.0f);
    const xf_graph *c[1] = {&g};
    xf_search_result sr;
    result_of(&sr, c, 1);
    xf_arbiter_options o = xf_arbiter_options_default();
    o.max_models = 0;
    xf_arbiter_result ar;
    xf_error err;
    const xf_search_result *srs[1] = {&sr};
    ck_assert_int_eq(xf_agent_arbitrate(NULL, NULL, &g, srs, 1, &o, &out, &ar, &err),
                     XF_ERR_INVALID);
    xf_test_expect_contains(err.msg, "max_models");
    ck_assert_ptr_null(ar.e);
    o.max_models = 1;
    ck_assert_int_eq(xf_agent_arbitrate(NULL, NULL, &g, srs, 0, &o, &out, &ar, &err),
                     XF_ERR_INVALID);
    xf_test_expect_contains(err.msg, "no search");
    ck_assert_ptr_null(ar.e);
    o.finalists = XF_ARBITER_FINALISTS_MAX + 1;
    ck_assert_int_eq(xf_agent_arbitrate(NULL, NULL, &g, srs, 1, &o, &out, &ar, &err),
                     XF_ERR_INVALID);
    xf_test_expect_contains(err.msg, "finalists");
    ck_assert_ptr_null(ar.e);
    xf_search_result_free(&sr);
    xf_graph_free(&g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("agent_arbiter");
    TCase *tc = tcase_create("candidates");
    tcase_add_test(tc, searches_keep_cheapest_distinct_candidates_with_the_start);
    tcase_add_test(tc, the_start_graph_is_never_evicted);
    tcase_add_test(tc, swapped_operands_are_one_candidate);
    tcase_add_test(tc, candidate_paths_have_their_rewrites);
    tcase_add_test(tc, the_final_writes_the_cheapest_of_those_it_cannot_tell_apart);
    tcase_add_test(tc, the_budget_grows_with_the_model_within_its_most);
    tcase_add_test(tc, a_repeat_keeps_room_for_the_whole_confirmation);
    suite_add_tcase(s, tc);
    tc = tcase_create("arbiter");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, a_slower_candidate_is_never_written);
    tcase_add_test(tc, a_faster_candidate_is_written_and_a_wrong_one_dropped);
    tcase_add_test(tc, the_winner_is_confirmed_against_the_input_file);
    tcase_add_test(tc, a_symbolic_model_is_timed_as_written_against_its_file);
    tcase_add_test(tc, the_candidates_of_every_search_are_weighed);
    tcase_add_test(tc, two_or_more_faster_candidates_run_a_final);
    tcase_add_test(tc, the_budget_is_kept_and_the_memory_limit_honoured);
    tcase_add_test(tc, the_start_graph_and_the_cheapest_race_first_then_their_layouts);
    tcase_add_test(tc, repeats_race_after_the_distinct_models);
    tcase_add_test(tc, bad_options_are_refused);
    tcase_add_test(tc, the_environment_rewards_target_latency_every_k_steps);
    suite_add_tcase(s, tc);
    return xf_test_run(s);
}
