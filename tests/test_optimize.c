/*
 * test_optimize.c — the library call that optimises a model
 * (optimize/optimize.h), called in-process.
 *
 * Rules: the agent fixture's two (id 1: relu(conv(x0, w0)) => conv[relu];
 * id 2: two matmuls of one matrix merged), stored as proved. The model: the
 * fixture's unfused conv and relu (two transposes between them, which no
 * rule here removes: the fusion cannot match) and two
 * matrix-vector products sharing their matrix. Cost: the analytic backend
 * with its roofline fixed, no cache file, no latency measurement: nothing
 * measured, the same result on every machine.
 *
 * Checked: a greedy search writes a model that reads back, computes what the
 * input does, with the matmuls merged, and the report says so (rules
 * applied, cost down, nodes, the numerical check, what was written); the
 * bytes-to-bytes call hands back the very bytes the file call writes; the
 * same call twice writes the same bytes (same options, same seed); from
 * bytes with external data, the data file comes back too; the PPO agent
 * trains, saves, and a second call loads its checkpoint; a model
 * no rule can improve is written byte for byte as it was; --passes expert
 * reads no rules database and applies no rule where --passes rules merges
 * the matmuls; the errors: no
 * rules database, a database without proved rules, a missing model, an
 * output that cannot be written (all inputs' faults, nothing written),
 * a search with a checkpoint; and on a shared model (../shared/models,
 * skipped when absent) the call writes a model that computes the same.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_fixture.h"
#include "optimize/optimize.h"
#include "rulesdb/rulesdb.h"
#include "testutil.h"

static char db_path[4096], model_path[4096], plain_path[4096];

static void save(const xf_graph *g, const char *path)
{
    xf_error err;
    ck_assert_msg(xf_onnx_save(g, path, &err) == XF_OK, "%s", err.msg);
}

/* The unfused conv and relu, and a [256,1024] input times two weights. */
static void write_model(void)
{
    xf_graph g;
    xf_graph_init(&g);
    xf_fx_conv_relu_and_two_matmuls(&g, 256, 1024);
    save(&g, model_path);
    xf_graph_free(&g);
}

/* sigmoid(x): no rule has a sigmoid. */
static void write_plain_model(void)
{
    xf_graph g;
    xf_graph_init(&g);
    int x = xf_fx_input(&g, "x", xf_fx_shape(2, 8, 8, 0, 0));
    xf_fx_output(&g, xf_fx_op(&g, XF_OP_SIGMOID, NULL, x, -1));
    save(&g, plain_path);
    xf_graph_free(&g);
}

static void setup(void)
{
    snprintf(db_path, sizeof db_path, "%s", xf_test_tmp("rules.db"));
    snprintf(model_path, sizeof model_path, "%s", xf_test_tmp("model.onnx"));
    snprintf(plain_path, sizeof plain_path, "%s", xf_test_tmp("plain.onnx"));
    xf_fx_write_rules_db(db_path, XF_RULE_PROVED);
    write_model();
    write_plain_model();
}

static void load(const char *path, xf_graph *g)
{
    xf_error err;
    xf_graph_init(g);
    ck_assert_msg(xf_onnx_load(path, NULL, g, &err) == XF_OK, "%s: %s", path, err.msg);
}

/* The file written reads back and computes what the input does. */
static void expect_same_function(const char *in_path, const char *out_path)
{
    xf_graph in, out;
    load(in_path, &in);
    load(out_path, &out);
    xf_check_result chk;
    xf_error err;
    ck_assert_msg(xf_interp_check(&in, &out, 7, 1e-4, 1e-4, &chk, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(chk.bad_output < 0, "%s: output %d differs by %g", out_path, chk.bad_output,
                  chk.bad_abs);
    xf_graph_free(&in);
    xf_graph_free(&out);
}

static void expect_input_error(const char *model, const char *out, const xf_optimize_options *o,
                               const char *needle);

typedef struct stages_seen {
    int search, searched;
    int applicable_at_search; /* the head was filled when the search began */
} stages_seen;

static void on_stage(void *user, xf_optimize_stage st, const xf_optimize_report *r)
{
    stages_seen *s = user;
    if (st == XF_OPTIMIZE_STAGE_SEARCH) {
        s->search++;
        s->applicable_at_search = r->applicable;
    } else {
        ck_assert_int_eq(s->search, 1);
        s->searched++;
    }
}

START_TEST(greedy_merges_and_reports)
{
    char out[4096];
    snprintf(out, sizeof out, "%s", xf_test_tmp("greedy.onnx"));
    unlink(out);
    xf_optimize_options o = xf_fx_quiet_options(db_path, XF_SEARCH_GREEDY);
    stages_seen seen = {0, 0, 0};
    o.stage = on_stage;
    o.user = &seen;
    o.list_applicable = 1;
    xf_optimize_report r;
    xf_optimize_report_init(&r);
    xf_error err = {0};
    ck_assert_msg(xf_optimize_file(model_path, out, &o, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(seen.search, 1);
    ck_assert_int_eq(seen.searched, 1);
    /* the head: the merge applies at one location; nothing fused the relu */
    ck_assert_int_eq(seen.applicable_at_search, 1);
    ck_assert_int_eq(r.applicable, 1);
    ck_assert_int_eq(r.locations, 2); /* (m1, m2) and (m2, m1) */
    ck_assert_int_eq(r.n_peeks, 1);
    ck_assert_int_eq(r.peeks[0].rule_id, 2);
    ck_assert_msg(r.peeks[0].best_delta_ms < 0, "the merge peeks at %g ms", r.peeks[0].best_delta_ms);
    ck_assert_int_eq(r.n_searches, 1);
    ck_assert_str_eq(r.target_identity, "");
    ck_assert_msg(strstr(r.cost_identity, "analytic") != NULL, "%s", r.cost_identity);
    /* the outcome: the merge, once, cheaper, checked, written */
    ck_assert_int_eq(r.kept_original, 0);
    ck_assert_int_eq(r.n_applied, 1);
    ck_assert_int_eq(r.n_distinct, 1);
    ck_assert_int_eq(r.applied[0].rule_id, 2);
    ck_assert_int_eq(r.applied[0].count, 1);
    ck_assert_int_eq(r.applied[0].backward, 0);
    ck_assert_msg(strstr(r.applied[0].text, "matmul") != NULL, "%s", r.applied[0].text);
    ck_assert_msg(r.cost_after < r.cost_before, "cost %g -> %g", r.cost_before, r.cost_after);
    ck_assert_msg(r.search[0].best_ms < r.search[0].initial_ms, "search cost %g -> %g",
                  r.search[0].initial_ms, r.search[0].best_ms);
    ck_assert_int_ge(r.search[0].expanded, 1);
    ck_assert_msg(r.check.max_abs >= 0 && r.check.bad_output < 0, "check %g, bad output %d",
                  r.check.max_abs, r.check.bad_output);
    ck_assert_int_eq(r.written.wrote, XF_ONNX_WROTE_GRAPH);
    ck_assert_str_eq(r.written.why, "");
    ck_assert_int_eq(r.latency_state, 0);
    ck_assert_int_eq(r.input_error, 0);
    ck_assert_int_eq(r.n_dims, 0);
    ck_assert_uint_eq(r.weight_bytes, (4 * 4 * 3 * 3 + 2 * 1024) * sizeof(float));
    /* the file: one matmul and a split where there were two matmuls */
    xf_graph in, got;
    load(model_path, &in);
    load(out, &got);
    ck_assert_int_eq(xf_test_count_op(&in, XF_OP_MATMUL), 2);
    ck_assert_int_eq(xf_test_count_op(&got, XF_OP_MATMUL), 1);
    ck_assert_int_eq(xf_test_count_op(&got, XF_OP_SPLIT), 1);
    ck_assert_int_eq(r.nodes_before, in.n_nodes);
    ck_assert_int_eq(r.nodes_after, got.n_nodes);
    xf_graph_free(&in);
    xf_graph_free(&got);
    expect_same_function(model_path, out);
    xf_optimize_report_free(&r);
    ck_assert_int_eq(r.n_applied, 0);
    ck_assert_ptr_null(r.applied);
}
END_TEST

/* The same call twice writes the same bytes; the bytes-to-bytes call hands
 * back those bytes too. */
START_TEST(same_bytes_every_way)
{
    char out1[4096], out2[4096];
    snprintf(out1, sizeof out1, "%s", xf_test_tmp("first.onnx"));
    snprintf(out2, sizeof out2, "%s", xf_test_tmp("second.onnx"));
    xf_optimize_options o = xf_fx_quiet_options(db_path, XF_SEARCH_GREEDY);
    o.search = XF_SEARCH_TASO;
    o.budget = 50;
    xf_optimize_report r;
    xf_optimize_report_init(&r);
    xf_error err = {0};
    ck_assert_msg(xf_optimize_file(model_path, out1, &o, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(r.kept_original, 0);
    ck_assert_msg(xf_optimize_file(model_path, out2, &o, &r, &err) == XF_OK, "%s", err.msg);
    xf_test_expect_same_file(out1, out2);
    size_t len = 0, file_len = 0;
    char *in = xf_test_read_file(model_path, &len);
    char *file = xf_test_read_file(out1, &file_len);
    uint8_t *bytes = NULL, *data = (uint8_t *)"not reset";
    size_t n = 0, data_len = 1;
    ck_assert_msg(xf_optimize_bytes(in, len, &o, &bytes, &n, &data, &data_len, &r, &err) == XF_OK,
                  "%s", err.msg);
    ck_assert_ptr_null(data);
    ck_assert_uint_eq(data_len, 0);
    ck_assert_uint_eq(n, file_len);
    ck_assert_msg(memcmp(bytes, file, n) == 0, "the bytes differ from the file written");
    ck_assert_int_eq(r.kept_original, 0);
    ck_assert_int_ge(r.n_applied, 1);
    xf_free(bytes);
    free(in);
    free(file);
    xf_optimize_report_free(&r);
}
END_TEST

/* From bytes with the weights to an external data file: the file comes
 * back too (the merged [1024, 2] weight; the conv's 576 bytes stay
 * inline), and the staging directory is gone. */
START_TEST(bytes_with_external_data)
{
    xf_optimize_options o = xf_fx_quiet_options(db_path, XF_SEARCH_GREEDY);
    o.external_data = "w.bin";
    size_t len = 0;
    char *in = xf_test_read_file(model_path, &len);
    uint8_t *bytes = NULL, *data = NULL;
    size_t n = 0, data_len = 0;
    xf_optimize_report r;
    xf_optimize_report_init(&r);
    xf_error err = {0};
    ck_assert_msg(xf_optimize_bytes(in, len, &o, &bytes, &n, &data, &data_len, &r, &err) == XF_OK,
                  "%s", err.msg);
    ck_assert_int_eq(r.kept_original, 0);
    ck_assert_str_eq(r.written.data_location, "w.bin");
    ck_assert_uint_eq(data_len, 1024 * 2 * sizeof(float));
    ck_assert_uint_eq(r.written.data_bytes, data_len);
    ck_assert_ptr_nonnull(data);
    ck_assert_uint_gt(n, 0);
    xf_free(bytes);
    xf_free(data);
    /* a path is refused: the call returns files by name only */
    o.external_data = "sub/w.bin";
    ck_assert_int_eq(xf_optimize_bytes(in, len, &o, &bytes, &n, &data, &data_len, &r, &err),
                     XF_ERR_INVALID);
    ck_assert_int_eq(r.input_error, 1);
    xf_test_expect_contains(err.msg, "sub/w.bin");
    free(in);
    xf_optimize_report_free(&r);
}
END_TEST

/* The PPO agent trains within a step budget, saves a checkpoint, and a
 * second call loads it and runs it once: the stages come in order and the
 * model written computes the same. */
START_TEST(ppo_trains_saves_and_loads)
{
    char out[4096], ckpt[4096];
    snprintf(out, sizeof out, "%s", xf_test_tmp("ppo.onnx"));
    snprintf(ckpt, sizeof ckpt, "%s", xf_test_tmp("ppo.ckpt"));
    unlink(ckpt);
    xf_optimize_options o = xf_fx_quiet_options(db_path, XF_SEARCH_GREEDY);
    o.agent = XF_OPTIMIZE_PPO;
    o.budget = 60;
    o.time_limit = 300;
    o.save = ckpt;
    stages_seen seen = {0, 0, 0};
    o.stage = on_stage;
    o.user = &seen;
    xf_optimize_report r;
    xf_optimize_report_init(&r);
    xf_error err = {0};
    ck_assert_msg(xf_optimize_file(model_path, out, &o, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(seen.searched, 1);
    ck_assert_int_eq(r.agent_untrained, 0);
    ck_assert_int_eq(r.learned.loaded, 0);
    ck_assert_int_eq(r.learned.save_failed, 0);
    ck_assert_int_ge(r.learned.actions, 1);
    ck_assert_int_eq(r.search[0].expanded, 60);
    ck_assert_msg(access(ckpt, R_OK) == 0, "no checkpoint at %s", ckpt);
    expect_same_function(model_path, out);
    o.save = NULL;
    o.load = ckpt;
    seen = (stages_seen){0, 0, 0};
    ck_assert_msg(xf_optimize_file(model_path, out, &o, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(seen.searched, 1);
    ck_assert_int_eq(r.learned.loaded, 1);
    ck_assert_int_ge(r.learned.actions, 1);
    expect_same_function(model_path, out);
    /* a checkpoint that is not one: the input's fault */
    o.load = db_path;
    o.stage = NULL;
    expect_input_error(model_path, out, &o, "is not an agent checkpoint (bad magic");
    xf_optimize_report_free(&r);
}
END_TEST

/* Nothing to improve: the input file, byte for byte. */
START_TEST(nothing_to_do_writes_the_input)
{
    char out[4096];
    snprintf(out, sizeof out, "%s", xf_test_tmp("plain.opt.onnx"));
    xf_optimize_options o = xf_fx_quiet_options(db_path, XF_SEARCH_GREEDY);
    xf_optimize_report r;
    xf_optimize_report_init(&r);
    xf_error err = {0};
    ck_assert_msg(xf_optimize_file(plain_path, out, &o, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(r.kept_original, 1);
    ck_assert_int_eq(r.applicable, 0);
    ck_assert_int_eq(r.n_applied, 0);
    ck_assert_int_eq(r.irrelevant, 4); /* both rules and their reverses */
    ck_assert_int_eq(r.written.wrote, XF_ONNX_WROTE_INPUT_FILE);
    xf_test_expect_same_file(plain_path, out);
    xf_optimize_report_free(&r);
}
END_TEST

/* --passes expert is the hand passes alone: no rules database is read (none
 * given here) and no rule is applied, where the same call reading the rules
 * (--passes rules) merges the two matmuls; both runs compute the input's
 * outputs. */
START_TEST(expert_reads_and_applies_no_rule)
{
    char out[4096];
    snprintf(out, sizeof out, "%s", xf_test_tmp("expert.onnx"));
    unlink(out);
    xf_optimize_options o = xf_fx_quiet_options(NULL, XF_SEARCH_GREEDY);
    o.passes = XF_OPTIMIZE_EXPERT;
    xf_optimize_report r;
    xf_optimize_report_init(&r);
    xf_error err = {0};
    ck_assert_msg(xf_optimize_file(model_path, out, &o, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(r.actions, 0);
    ck_assert_int_eq(r.applicable, 0);
    ck_assert_int_eq(r.n_applied, 0);
    ck_assert_int_eq(r.input_error, 0);
    xf_graph got;
    load(out, &got);
    ck_assert_int_eq(xf_test_count_op(&got, XF_OP_MATMUL), 2);
    xf_graph_free(&got);
    expect_same_function(model_path, out);
    xf_optimize_report_free(&r);

    unlink(out);
    o.rules = db_path;
    o.passes = XF_OPTIMIZE_RULES;
    xf_optimize_report_init(&r);
    ck_assert_msg(xf_optimize_file(model_path, out, &o, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(r.n_applied, 1);
    ck_assert_int_eq(r.applied[0].rule_id, 2);
    load(out, &got);
    ck_assert_int_eq(xf_test_count_op(&got, XF_OP_MATMUL), 1);
    xf_graph_free(&got);
    expect_same_function(model_path, out);
    xf_optimize_report_free(&r);
}
END_TEST

/* A failure that is the input's: nothing written, input_error set, the
 * message names what is wrong. */
static void expect_input_error(const char *model, const char *out, const xf_optimize_options *o,
                               const char *needle)
{
    unlink(out);
    xf_optimize_report r;
    xf_optimize_report_init(&r);
    xf_error err = {0};
    xf_status st = xf_optimize_file(model, out, o, &r, &err);
    ck_assert_msg(st != XF_OK, "succeeded where '%s' was expected", needle);
    ck_assert_int_eq(err.code, st);
    ck_assert_int_eq(r.input_error, 1);
    xf_test_expect_contains(err.msg, needle);
    ck_assert_msg(access(out, F_OK) != 0, "%s written after a failure", out);
    xf_optimize_report_free(&r);
}

START_TEST(input_errors)
{
    char out[4096], nodb[4096], missing[4096];
    snprintf(out, sizeof out, "%s", xf_test_tmp("error.onnx"));
    snprintf(nodb, sizeof nodb, "%s", xf_test_tmp("candidates.db"));
    snprintf(missing, sizeof missing, "%s", xf_test_tmp("no-such-model.onnx"));
    xf_fx_write_rules_db(nodb, XF_RULE_CANDIDATE);
    xf_optimize_options o = xf_fx_quiet_options(db_path, XF_SEARCH_GREEDY);
    o.rules = NULL;
    expect_input_error(model_path, out, &o, "no rules database given");
    o = xf_fx_quiet_options(db_path, XF_SEARCH_GREEDY);
    o.rules = nodb;
    expect_input_error(model_path, out, &o, "has no proved rules the matcher can use");
    expect_input_error(model_path, out, &o, "candidates.db");
    o = xf_fx_quiet_options(db_path, XF_SEARCH_GREEDY);
    expect_input_error(missing, out, &o, "no-such-model.onnx");
    o.save = xf_test_tmp("agent.ckpt");
    expect_input_error(model_path, out, &o, "--save/--load need a learning agent");
    o = xf_fx_quiet_options(db_path, XF_SEARCH_GREEDY);
    expect_input_error(model_path, "/nonexistent-dir/out.onnx", &o, "/nonexistent-dir");
    /* the rules database itself as the output: refused, the database kept */
    int64_t before = xf_test_sql_int(db_path, "SELECT COUNT(*) FROM rules");
    xf_optimize_report r;
    xf_optimize_report_init(&r);
    xf_error err = {0};
    ck_assert_int_ne(xf_optimize_file(model_path, db_path, &o, &r, &err), XF_OK);
    ck_assert_int_eq(r.input_error, 1);
    ck_assert_int_eq(xf_test_sql_int(db_path, "SELECT COUNT(*) FROM rules"), before);
    xf_optimize_report_free(&r);
}
END_TEST

/* A shared model (PyTorch's export): written, read back, the same function. */
START_TEST(shared_model)
{
    const char *models = xf_test_models_dir();
    if (!models) XF_SKIP("../shared/models not found (XF_SHARED_DIR)");
    char in[4096], out[4096];
    snprintf(in, sizeof in, "%s/bert_small/model.onnx", models);
    if (access(in, R_OK) != 0) XF_SKIP("%s not found", in);
    snprintf(out, sizeof out, "%s", xf_test_tmp("bert_small.opt.onnx"));
    unlink(out);
    xf_optimize_options o = xf_fx_quiet_options(db_path, XF_SEARCH_GREEDY);
    o.search = XF_SEARCH_TASO;
    o.budget = 30;
    xf_optimize_report r;
    xf_optimize_report_init(&r);
    xf_error err = {0};
    ck_assert_msg(xf_optimize_file(in, out, &o, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_gt(r.nodes_before, 100);
    ck_assert_msg(r.prep.fused_layernorms > 0, "BERT's layer norms were not fused");
    ck_assert_msg(r.cost_after <= r.cost_before, "cost %g -> %g", r.cost_before, r.cost_after);
    /* the layer norms fused pay on their own: written with or without a rule */
    ck_assert_int_eq(r.kept_original, 0);
    ck_assert_int_lt(r.nodes_after, r.nodes_before);
    int sum = 0;
    for (int i = 0; i < r.n_distinct; i++) {
        ck_assert_int_eq(r.applied[i].rule_id, 2);
        sum += r.applied[i].count;
    }
    ck_assert_int_eq(sum, r.n_applied);
    ck_assert_msg(r.check.max_abs >= 0 && r.check.bad_output < 0, "check %g", r.check.max_abs);
    ck_assert_msg(r.written.wrote != XF_ONNX_WROTE_INPUT, "the optimised model failed: %s",
                  r.written.why);
    expect_same_function(in, out);
    printf("optimize: bert_small: %d -> %d nodes, cost %.4f -> %.4f ms, %d rewrites\n",
           r.nodes_before, r.nodes_after, r.cost_before, r.cost_after, r.n_applied);
    xf_optimize_report_free(&r);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("optimize");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 600);
    tcase_add_unchecked_fixture(t, setup, NULL);
    tcase_add_test(t, greedy_merges_and_reports);
    tcase_add_test(t, same_bytes_every_way);
    tcase_add_test(t, bytes_with_external_data);
    tcase_add_test(t, ppo_trains_saves_and_loads);
    tcase_add_test(t, nothing_to_do_writes_the_input);
    tcase_add_test(t, expert_reads_and_applies_no_rule);
    tcase_add_test(t, input_errors);
    tcase_add_test(t, shared_model);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
