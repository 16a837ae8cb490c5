/*
 * test_transfer.c — one agent trained over several models and loaded on a
 * model it never saw (optimize.h xf_train_agent, agent/rl/rl.h
 * xf_rl_train_many, xf_rl_ckpt_actions; `rlflow-agent train` and --load).
 *
 * Rules: the agent fixture's two (id 1: relu(conv(x0, w0)) => conv[relu];
 * id 2: two matmuls of one matrix merged), stored as proved. Models: A, a
 * conv with its relu (fused on import; the rule's reverse applies); B, two products of one matrix; C
 * (never trained on), two products of another matrix at other sizes and
 * no conv at all, so the conv rule cannot match it. Cost: the analytic
 * backend, roofline fixed, no cache file: nothing measured, the same on
 * every machine; budgets in steps, so training is deterministic.
 *
 * Checked: training over A and B saves a checkpoint whose action set is the
 * union of the rules offered on both (the conv rule's and the merge's ids,
 * in id order), which reads back through xf_rl_ckpt_actions id for id;
 * loaded on C, the agent runs without training, its conv actions counted
 * unavailable (their rule cannot match C), and the model written computes
 * what C does; a directory of models trains like the files in it; the
 * errors name their cause: a truncated checkpoint, one that is not a
 * checkpoint, a rule id the rules database lacks, a checkpoint of another
 * location width, a model that does not exist, a directory without models.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_fixture.h"
#include "optimize/optimize.h"
#include "rulesdb/rulesdb.h"
#include "testutil.h"

static char db_path[4096], dir_path[4096], a_path[4096], b_path[4096], c_path[4096];

static void save(const xf_graph *g, const char *path)
{
    xf_error err;
    ck_assert_msg(xf_onnx_save(g, path, &err) == XF_OK, "%s: %s", path, err.msg);
}

/* x [1,4,8,8] -> 3x3 conv -> relu (the importer fuses them: the conv
 * rule's reverse unfuses, then the rule fuses again). */
static void write_a(const char *path)
{
    xf_graph g;
    xf_graph_init(&g);
    int x = xf_fx_input(&g, "x", xf_fx_shape(4, 1, 4, 8, 8));
    int w = xf_fx_weight(&g, "w", xf_fx_shape(4, 4, 4, 3, 3), 11);
    xf_params p = xf_fx_conv3x3(XF_ACT_NONE);
    xf_fx_output(&g, xf_fx_op(&g, XF_OP_RELU, NULL, xf_fx_op(&g, XF_OP_CONV, &p, x, w), -1));
    save(&g, path);
    xf_graph_free(&g);
}

/* A [rows, cols] input times two [cols, 1] weights, each an output. */
static void write_products(const char *path, int64_t rows, int64_t cols, uint64_t seed)
{
    xf_graph g;
    xf_graph_init(&g);
    int a = xf_fx_input(&g, "a", xf_fx_shape(2, rows, cols, 0, 0));
    for (int j = 0; j < 2; j++) {
        int m = xf_fx_weight(&g, j ? "m2" : "m1", xf_fx_shape(2, cols, 1, 0, 0), seed + (uint64_t)j);
        xf_fx_output(&g, xf_fx_op(&g, XF_OP_MATMUL, NULL, a, m));
    }
    save(&g, path);
    xf_graph_free(&g);
}

static void setup(void)
{
    snprintf(db_path, sizeof db_path, "%s", xf_test_tmp("rules.db"));
    snprintf(dir_path, sizeof dir_path, "%s", xf_test_tmp("train"));
    mkdir(dir_path, 0755);
    snprintf(a_path, sizeof a_path, "%s/a.onnx", dir_path);
    snprintf(b_path, sizeof b_path, "%s/b.onnx", dir_path);
    snprintf(c_path, sizeof c_path, "%s", xf_test_tmp("c.onnx"));
    xf_fx_write_rules_db(db_path, XF_RULE_PROVED);
    write_a(a_path);
    write_products(b_path, 256, 1024, 20);
    write_products(c_path, 128, 512, 40);
}

static xf_train_options train_options(const char *ckpt)
{
    xf_train_options t = xf_train_options_default();
    t.rules = db_path;
    t.save = ckpt;
    t.backend = XF_COST_ANALYTIC;
    t.peak_gflops = 100;
    t.bandwidth_gbps = 10;
    t.cache = XF_COST_CACHE_NONE;
    t.seconds = 0;
    t.steps = 400;
    t.warmup_steps = 10;
    t.slice_steps = 100;
    return t;
}

/* One agent trained over the n models for `steps` steps, saved to ckpt;
 * *r (initialised here) its report, for the caller to free. */
static void train_on(const char *ckpt, const char **models, int n, int64_t steps,
                     xf_train_report *r)
{
    xf_train_options t = train_options(ckpt);
    t.models = models;
    t.n_models = n;
    t.steps = steps;
    xf_train_report_init(r);
    xf_error err = {0};
    ck_assert_msg(xf_train_agent(&t, r, &err) == XF_OK, "%s", err.msg);
}

/* One agent trained over A and B for `steps` steps, saved to ckpt. */
static void train_ab(const char *ckpt, int64_t steps)
{
    const char *models[] = {a_path, b_path};
    xf_train_report r;
    train_on(ckpt, models, 2, steps, &r);
    xf_train_report_free(&r);
}

static xf_optimize_options load_options(const char *ckpt)
{
    xf_optimize_options o = xf_fx_quiet_options(db_path, XF_SEARCH_GREEDY);
    o.agent = XF_OPTIMIZE_PPO;
    o.load = ckpt;
    o.samples = 2;
    return o;
}

/* The file written reads back and computes what the input does. */
static void expect_same_function(const char *in_path, const char *out_path)
{
    xf_graph in, out;
    xf_error err;
    xf_graph_init(&in);
    xf_graph_init(&out);
    ck_assert_msg(xf_onnx_load(in_path, NULL, &in, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_onnx_load(out_path, NULL, &out, &err) == XF_OK, "%s", err.msg);
    xf_check_result chk;
    ck_assert_msg(xf_interp_check(&in, &out, 7, 1e-4, 1e-4, &chk, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(chk.bad_output < 0, "%s: output %d differs by %g", out_path, chk.bad_output,
                  chk.bad_abs);
    xf_graph_free(&in);
    xf_graph_free(&out);
}

static int has_id(const xf_actions *a, int64_t id)
{
    for (int j = 0; j < a->M; j++)
        if (a->ids[j] == id) return 1;
    return 0;
}

START_TEST(trains_over_models_and_transfers)
{
    char ckpt[4096], out[4096];
    snprintf(ckpt, sizeof ckpt, "%s", xf_test_tmp("agent.ckpt"));
    snprintf(out, sizeof out, "%s", xf_test_tmp("c.opt.onnx"));
    unlink(ckpt);
    const char *models[] = {a_path, b_path};
    xf_train_report r;
    train_on(ckpt, models, 2, train_options(ckpt).steps, &r);
    ck_assert_int_eq(r.n_models, 2);
    ck_assert_int_eq(r.stats.steps, 400);
    ck_assert_int_ge(r.stats.passes, 1);
    /* the union: the conv rule (offered on A only) and the merge (on B
     * only), in id order */
    const xf_actions *u = &r.stats.act;
    ck_assert_msg(has_id(u, 1) && has_id(u, 2), "M %d", u->M);
    for (int j = 1; j < u->M; j++) ck_assert(u->ids[j - 1] < u->ids[j]);
    /* each model's best is no worse than its start; B's merge is found */
    for (int i = 0; i < 2; i++) ck_assert(r.stats.best_ms[i] <= r.stats.initial_ms[i]);
    ck_assert(r.stats.best_ms[1] < r.stats.initial_ms[1]);
    /* on B the conv rule's actions are unavailable (B has no conv) */
    ck_assert_int_ge(r.stats.unavailable[1], 1);

    /* the checkpoint's action set reads back id for id */
    xf_actions back;
    xf_actions_init(&back);
    int wm = -1;
    xf_error err = {0};
    ck_assert_msg(xf_rl_ckpt_actions(ckpt, &wm, &back, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(wm, 0);
    ck_assert_int_eq(back.M, u->M);
    ck_assert(memcmp(back.ids, u->ids, (size_t)u->M * sizeof *u->ids) == 0);
    xf_actions_free(&back);

    /* on C, never seen: no training, the conv actions unavailable, the
     * model written computes what C does */
    xf_optimize_options o = load_options(ckpt);
    o.agent = XF_OPTIMIZE_WM; /* the checkpoint decides: PPO */
    xf_optimize_report rep;
    xf_optimize_report_init(&rep);
    ck_assert_msg(xf_optimize_file(c_path, out, &o, &rep, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(rep.agent, XF_OPTIMIZE_PPO);
    ck_assert_int_eq(rep.learned.loaded, 1);
    ck_assert_int_eq(rep.learned.actions, u->M);
    ck_assert_int_eq(rep.learned.episodes, 4); /* guided, greedy, 2 sampled */
    ck_assert_int_eq(rep.learned.guided, 1);
    ck_assert_int_ge(rep.learned.unavailable, 1);
    ck_assert_int_eq(rep.learned.outside, 0);
    ck_assert(rep.search[0].best_ms <= rep.search[0].initial_ms);
    expect_same_function(c_path, out);
    xf_optimize_report_free(&rep);
    xf_train_report_free(&r);
}
END_TEST

/* The search the loaded policy guides (--guide K): on C it takes the
 * merge as soon as it is among the policy's K likeliest rules, in one
 * step, whatever the policy would have sampled; with --guide 0 the
 * policy's episodes run alone. */
START_TEST(a_guided_search_on_a_model_never_seen)
{
    char ckpt[4096], out[4096];
    snprintf(ckpt, sizeof ckpt, "%s", xf_test_tmp("guide.ckpt"));
    snprintf(out, sizeof out, "%s", xf_test_tmp("c.guided.onnx"));
    train_ab(ckpt, 40); /* barely trained: the pricing, not the policy, finds the merge */
    xf_error err = {0};
    xf_optimize_options o = load_options(ckpt);
    o.samples = 0;
    o.guide = XF_PPO_GUIDE_MAX; /* every rule of the agent's is priced */
    xf_optimize_report rep;
    xf_optimize_report_init(&rep);
    ck_assert_msg(xf_optimize_file(c_path, out, &o, &rep, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(rep.learned.guided, 1);
    ck_assert_int_eq(rep.learned.episodes, 2);
    ck_assert_msg(rep.search[0].best_ms < rep.search[0].initial_ms, "best %g, start %g",
                  rep.search[0].best_ms, rep.search[0].initial_ms);
    expect_same_function(c_path, out);
    xf_optimize_report_free(&rep);

    o.guide = 0;
    xf_optimize_report_init(&rep);
    ck_assert_msg(xf_optimize_file(c_path, out, &o, &rep, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(rep.learned.guided, 0);
    ck_assert_int_eq(rep.learned.episodes, 1);
    xf_optimize_report_free(&rep);
}
END_TEST

/* An agent trained on A alone has no action for the merge (A never
 * offers it); on C, where the merge is the only rewrite, its policy cannot
 * rank it: the guided search prices every rule the model offers outside
 * the agent's actions as well, and takes the merge. */
START_TEST(a_guided_search_prices_rules_the_agent_never_saw)
{
    char ckpt[4096], out[4096];
    snprintf(ckpt, sizeof ckpt, "%s", xf_test_tmp("a_only.ckpt"));
    snprintf(out, sizeof out, "%s", xf_test_tmp("c.outside.onnx"));
    unlink(ckpt);
    const char *models[] = {a_path};
    xf_train_report r;
    train_on(ckpt, models, 1, 40, &r);
    ck_assert(!has_id(&r.stats.act, 2) && !has_id(&r.stats.act, -2));
    xf_train_report_free(&r);
    xf_error err = {0};
    xf_optimize_options o = load_options(ckpt);
    o.samples = 0;
    o.guide = 1;
    xf_optimize_report rep;
    xf_optimize_report_init(&rep);
    ck_assert_msg(xf_optimize_file(c_path, out, &o, &rep, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(rep.learned.guided, 1);
    ck_assert_int_ge(rep.learned.outside, 1);
    ck_assert_msg(rep.search[0].best_ms < rep.search[0].initial_ms, "best %g, start %g",
                  rep.search[0].best_ms, rep.search[0].initial_ms);
    expect_same_function(c_path, out);
    xf_optimize_report_free(&rep);
}
END_TEST

/* A directory trains like the files in it (found in name order). */
START_TEST(a_directory_of_models)
{
    char ckpt[4096];
    snprintf(ckpt, sizeof ckpt, "%s", xf_test_tmp("dir.ckpt"));
    const char *models[] = {dir_path};
    xf_train_report r;
    train_on(ckpt, models, 1, 100, &r);
    ck_assert_int_eq(r.n_models, 2);
    ck_assert_str_eq(r.models[0], a_path);
    ck_assert_str_eq(r.models[1], b_path);
    ck_assert_msg(access(ckpt, R_OK) == 0, "no checkpoint at %s", ckpt);
    xf_train_report_free(&r);
}
END_TEST

/* A copy of file src with n bytes at offset off replaced (or, with bytes
 * NULL, cut there), into dst. */
static void doctor(const char *src, const char *dst, long off, const void *bytes, size_t n)
{
    FILE *f = fopen(src, "rb");
    ck_assert_ptr_nonnull(f);
    static unsigned char buf[1 << 22];
    size_t len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    ck_assert((size_t)off + n <= len);
    if (bytes) memcpy(buf + off, bytes, n);
    else len = (size_t)off;
    f = fopen(dst, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert(fwrite(buf, 1, len, f) == len);
    fclose(f);
}

static void expect_load_error(const char *ckpt, const xf_optimize_options *o, const char *needle)
{
    char out[4096];
    snprintf(out, sizeof out, "%s", xf_test_tmp("err.onnx"));
    xf_optimize_report rep;
    xf_optimize_report_init(&rep);
    xf_error err = {0};
    ck_assert_int_ne(xf_optimize_file(c_path, out, o, &rep, &err), XF_OK);
    ck_assert_int_eq(rep.input_error, 1);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "'%s' not in: %s", needle, err.msg);
    ck_assert_msg(strstr(err.msg, ckpt) != NULL, "the file is not named: %s", err.msg);
    xf_optimize_report_free(&rep);
}

START_TEST(bad_checkpoints_name_the_cause)
{
    char ckpt[4096], bad[4096];
    snprintf(ckpt, sizeof ckpt, "%s", xf_test_tmp("good.ckpt"));
    snprintf(bad, sizeof bad, "%s", xf_test_tmp("bad.ckpt"));
    train_ab(ckpt, 100);
    xf_optimize_options o = load_options(bad);

    /* PPO header: magic 8, version 4, count 4, 8 sizes of 4, then M 4 and
     * the ids (8 each) */
    const long ids_at = 8 + 4 + 4 + 8 * 4 + 4;
    doctor(ckpt, bad, ids_at + 4, NULL, 0);
    expect_load_error(bad, &o, "truncated");
    doctor(ckpt, bad, 0, "NOTACKPT", 8);
    expect_load_error(bad, &o, "not an agent checkpoint");
    unsigned char id999[8] = {0xe7, 0x03, 0, 0, 0, 0, 0, 0}; /* rule 999 */
    doctor(ckpt, bad, ids_at, id999, 8);
    expect_load_error(bad, &o, "rule id 999 (agent action 0) is not in the rules database");
    /* the networks of another location width */
    o = load_options(ckpt);
    o.locations = 7;
    expect_load_error(ckpt, &o, "max locations");
}
END_TEST

START_TEST(missing_models_are_named)
{
    char ckpt[4096], empty[4096];
    snprintf(ckpt, sizeof ckpt, "%s", xf_test_tmp("none.ckpt"));
    snprintf(empty, sizeof empty, "%s", xf_test_tmp("empty"));
    mkdir(empty, 0755);
    xf_train_options t = train_options(ckpt);
    const char *missing[] = {a_path, "/nonexistent/model.onnx"};
    t.models = missing;
    t.n_models = 2;
    xf_train_report r;
    xf_train_report_init(&r);
    xf_error err = {0};
    ck_assert_int_eq(xf_train_agent(&t, &r, &err), XF_ERR_IO);
    ck_assert_msg(strstr(err.msg, "/nonexistent/model.onnx"), "%s", err.msg);
    const char *none[] = {empty};
    t.models = none;
    t.n_models = 1;
    ck_assert_int_eq(xf_train_agent(&t, &r, &err), XF_ERR_IO);
    ck_assert_msg(strstr(err.msg, "no ONNX model") && strstr(err.msg, empty), "%s", err.msg);
    ck_assert_msg(access(ckpt, F_OK) != 0, "a checkpoint was written");
    xf_train_report_free(&r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("transfer");
    TCase *t = tcase_create("transfer");
    tcase_add_unchecked_fixture(t, setup, NULL);
    tcase_set_timeout(t, 600);
    tcase_add_test(t, trains_over_models_and_transfers);
    tcase_add_test(t, a_guided_search_on_a_model_never_seen);
    tcase_add_test(t, a_guided_search_prices_rules_the_agent_never_saw);
    tcase_add_test(t, a_directory_of_models);
    tcase_add_test(t, bad_checkpoints_name_the_cause);
    tcase_add_test(t, missing_models_are_named);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
