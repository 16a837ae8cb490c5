/*
 * test_rlflow_agent.c — the rlflow-agent binary end to end, on a rules
 * database and an ONNX model built here.
 *
 * Rules (all stored as proved): 1 relu(conv(x0, w0)) => conv[act=relu](x0, w0);
 * 2 matmul(m0, m1), matmul(m0, m2) => split(matmul(m0, concat(m1, m2)));
 * 3 ewadd(x0, x1) => ewadd(x1, x0); 4 transpose(transpose(x0)) => x0 (the
 * last two axes swapped twice). The model: a 3x3 conv without bias, two
 * such transposes and a Relu (the transposes keep the importer from fusing
 * the Relu into the conv, so the search has the fusion to do: rule 4, then
 * rule 1), and two matrix-vector products sharing their matrix (memory
 * bound on a normal build's measured roofline, so merging them pays). It
 * has no add, so rule 3 is irrelevant to it.
 *
 * Checked: greedy and TASO searches exit 0, report a cost that goes down,
 * name rules 4 and 1 among the rules applied, and write a model that reads
 * back, has the relu fused into the conv (and the matmuls merged when the
 * report says so), and computes what the input does in the interpreter
 * (1e-4); the "rules:" header counts the irrelevant rule (and --all-actions
 * keeps it); PPO trains and saves a checkpoint that a second run loads; the
 * world-model agent runs two rounds (one in the dream) on a small budget; a
 * model no rule touches is written unchanged; --external-data puts the
 * weights in a data file next to the output, and refuses a location
 * outside its directory; --target ort without ONNX
 * Runtime says so and runs as without it, and with it reports the timing
 * and writes the input unchanged or a model that computes the same; without
 * --rules the default database is used and named; and the error cases: bad
 * usage, --help, a database without proved rules, a missing model or
 * checkpoint. The fixed point of the restriction is checked on the
 * rule-set API directly.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/search/search.h"
#include "agent_fixture.h"
#include "optimize/optimize.h"
#include "rulesdb/rulesdb.h"
#include "testutil.h"

#define N_RULES 4

static char db_path[4096], nodb_path[4096], model_path[4096], plain_path[4096];
static char scaled_path[4096];
static char out_path[4096], ckpt_path[4096], log_path[4096];
static char *output; /* stdout and stderr of the last run */

/* ------------------------------------------------------------- the rules */

/* ewadd(x0, x1) => ewadd(x1, x0) on 2x4x4x4 activations. */
static void rule_add_comm(xf_rule *r)
{
    xf_rule_init(r);
    xf_graph *side[2] = {&r->src, &r->dst};
    for (int s = 0; s < 2; s++) {
        int a = xf_fx_input(side[s], "x0", xf_fx_shape(4, 2, 4, 4, 4));
        int b = xf_fx_input(side[s], "x1", xf_fx_shape(4, 2, 4, 4, 4));
        xf_fx_output(side[s], s == 0 ? xf_fx_op(side[s], XF_OP_ADD, NULL, a, b)
                                     : xf_fx_op(side[s], XF_OP_ADD, NULL, b, a));
    }
}

/* transpose(transpose(x0)) => x0 with the last two axes swapped (its
 * reverse has no source operator: skipped). */
static void rule_transposes(xf_rule *r)
{
    xf_rule_init(r);
    xf_params t = xf_fx_swap_last_two();
    int s = xf_fx_input(&r->src, "x0", xf_fx_shape(4, 2, 4, 4, 4));
    s = xf_fx_op(&r->src, XF_OP_TRANSPOSE, &t, xf_fx_op(&r->src, XF_OP_TRANSPOSE, &t, s, -1), -1);
    xf_fx_output(&r->src, s);
    xf_fx_output(&r->dst, xf_fx_input(&r->dst, "x0", xf_fx_shape(4, 2, 4, 4, 4)));
}

static void build_rules(xf_rule *r)
{
    xf_fx_rule_conv_relu(&r[0]);
    xf_fx_rule_matmul_merge(&r[1]);
    rule_add_comm(&r[2]);
    rule_transposes(&r[3]);
}

static void free_rules(xf_rule *r)
{
    for (int i = 0; i < N_RULES; i++) xf_rule_free(&r[i]);
}

/* The four rules with ids 1..4, all with status `status`. */
static void write_db(const char *path, xf_rule_status status)
{
    xf_test_remove_db(path);
    xf_rulesdb *db = NULL;
    xf_error err;
    ck_assert_msg(xf_rulesdb_open(path, XF_RULESDB_CREATE, &db, &err) == XF_OK, "%s", err.msg);
    xf_rule r[N_RULES];
    build_rules(r);
    for (int i = 0; i < N_RULES; i++) {
        xf_rulesdb_rule_meta m = {status, 0, NULL, 0};
        int64_t id = 0;
        ck_assert_msg(xf_rulesdb_add_rule(db, &r[i], &m, &id, NULL, &err) == XF_OK, "%s",
                      err.msg);
        ck_assert_int_eq(id, i + 1);
    }
    free_rules(r);
    xf_rulesdb_close(db);
}

/* ------------------------------------------------------------- the models */

static void save(const xf_graph *g, const char *path)
{
    xf_error err;
    ck_assert_msg(xf_onnx_save(g, path, &err) == XF_OK, "%s", err.msg);
}

/* The unfused conv and relu, and a [128,512] input times two weights. */
static void write_model(void)
{
    xf_graph g;
    xf_graph_init(&g);
    xf_fx_conv_relu_and_two_matmuls(&g, 128, 512);
    save(&g, model_path);
    xf_graph_free(&g);
}

/* xf_fx_unfused_conv_relu with the relu's output scaled by 0.5 (a Mul by
 * a rank-0 constant, as exporters write GELU's x0.5). */
static void write_scaled_model(void)
{
    xf_graph g;
    xf_graph_init(&g);
    int relu = xf_fx_unfused_conv_relu(&g);
    xf_fx_output(&g, xf_fx_op(&g, XF_OP_MUL, NULL, relu, xf_test_scalar(&g, "half", 0.5f)));
    save(&g, scaled_path);
    xf_graph_free(&g);
}

/* sigmoid(x): no rule has a sigmoid, nothing can reach one. */
static void write_plain_model(void)
{
    xf_graph g;
    xf_graph_init(&g);
    int x = xf_fx_input(&g, "x", xf_fx_shape(2, 8, 8, 0, 0));
    xf_fx_output(&g, xf_fx_op(&g, XF_OP_SIGMOID, NULL, x, -1));
    save(&g, plain_path);
    xf_graph_free(&g);
}

static void load(const char *path, xf_graph *g)
{
    xf_error err;
    xf_graph_init(g);
    ck_assert_msg(xf_onnx_load(path, NULL, g, &err) == XF_OK, "%s: %s", path, err.msg);
}

/* The written model reads back and computes what the input model computes
 * (1e-4); both are loaded into in and opt. */
static void expect_same_outputs(const char *in_path, const char *opt_path, xf_graph *in,
                                xf_graph *opt)
{
    load(in_path, in);
    load(opt_path, opt);
    ck_assert_int_eq(opt->n_inputs, in->n_inputs);
    ck_assert_int_eq(opt->n_outputs, in->n_outputs);
    xf_error err;
    xf_tensor x[4], ref[4], got[4];
    ck_assert_int_le(in->n_inputs, 4);
    ck_assert_int_le(in->n_outputs, 4);
    ck_assert_msg(xf_graph_random_inputs(in, 5, x, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_interp_run(in, x, in->n_inputs, ref, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_interp_run(opt, x, opt->n_inputs, got, &err) == XF_OK, "%s", err.msg);
    for (int i = 0; i < in->n_outputs; i++) {
        ck_assert_msg(xf_tensor_close(&got[i], &ref[i], 1e-4, 1e-4), "output %d differs", i);
        xf_tensor_free(&ref[i]);
        xf_tensor_free(&got[i]);
    }
    for (int i = 0; i < in->n_inputs; i++) xf_tensor_free(&x[i]);
}

/* expect_same_outputs, and the written model has the relu fused into its
 * conv (no transpose, no relu node) and its matmuls merged (one matmul and
 * a split) exactly when the report says rule 2 was applied: whether the
 * merge pays depends on the roofline the analytic backend measured (under
 * ASan the peak falls so far that matrix-vector products are compute bound
 * and it does not). */
static void expect_optimised(const char *in_path, const char *opt_path)
{
    int merged = strstr(output, "1x  rule 2       matmul(m0, m1), matmul(m0, m2) => ") != NULL;
    xf_graph in, opt;
    expect_same_outputs(in_path, opt_path, &in, &opt);
    int count[XF_OP_COUNT] = {0};
    for (int i = 0; i < opt.n_nodes; i++) {
        const xf_node *n = &opt.nodes[i];
        count[n->op]++;
        if (n->op == XF_OP_CONV) ck_assert_int_eq(n->params.activation, XF_ACT_RELU);
    }
    ck_assert_int_eq(opt.n_nodes, 3);
    ck_assert_int_eq(count[XF_OP_CONV], 1);
    ck_assert_int_eq(count[XF_OP_MATMUL], merged ? 1 : 2);
    ck_assert_int_eq(count[XF_OP_SPLIT], merged ? 1 : 0);
    xf_graph_free(&in);
    xf_graph_free(&opt);
}

/* ------------------------------------------------------------- running it */

/* Runs `rlflow-agent ARGS` with stdout and stderr captured into `output`;
 * returns the exit status. */
static int agent(const char *fmt, ...)
{
    char args[8000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    free(output);
    output = NULL;
    int rc = xf_test_system("'%s' %s > '%s' 2>&1", xf_test_tool("rlflow-agent"), args, log_path);
    output = xf_test_read_file(log_path, NULL);
    return rc;
}

/* The two numbers of a report line "<label> A ms -> B ms". */
static void costs_of(const char *label, double *before, double *after)
{
    const char *p = strstr(output, label);
    ck_assert_msg(p, "output lacks '%s':\n%s", label, output);
    ck_assert_msg(sscanf(p + strlen(label), " %lf ms -> %lf ms", before, after) == 2,
                  "unreadable '%s' line:\n%s", label, output);
}

/* The options every run shares: our files, the analytic roofline, no
 * cost cache, no latency runs, no progress line. */
#define COMMON "--rules '%s' '%s' -o '%s' --backend analytic --cache none --no-latency -q"

/* A search run's report: cost down (search and as written), rules 4 and 1
 * applied, the model written. */
static void expect_search_report(const char *kind)
{
    char want[256];
    xf_test_expect_contains(output, "rules:           5 actions from ");
    xf_test_expect_contains(output, "(1 skipped, 1 duplicates, 1 irrelevant to this model)\n");
    snprintf(want, sizeof want, "search:          %s, ", kind);
    xf_test_expect_contains(output, want);
    double b = 0, a = 0;
    costs_of("search cost:", &b, &a);
    ck_assert_msg(a < b, "search cost %g -> %g did not go down", b, a);
    costs_of("\ncost:", &b, &a);
    ck_assert_msg(a < b, "cost %g -> %g did not go down", b, a);
    xf_test_expect_contains(output, "1x  rule 4       transpose");
    xf_test_expect_contains(output, "1x  rule 1       relu(conv2d");
    snprintf(want, sizeof want, "written:         %s\n", out_path);
    xf_test_expect_contains(output, want);
}

static void setup(void)
{
    snprintf(db_path, sizeof db_path, "%s", xf_test_tmp("rules.db"));
    snprintf(nodb_path, sizeof nodb_path, "%s", xf_test_tmp("candidates.db"));
    snprintf(model_path, sizeof model_path, "%s", xf_test_tmp("model.onnx"));
    snprintf(plain_path, sizeof plain_path, "%s", xf_test_tmp("plain.onnx"));
    snprintf(scaled_path, sizeof scaled_path, "%s", xf_test_tmp("scaled.onnx"));
    snprintf(out_path, sizeof out_path, "%s", xf_test_tmp("model.opt.onnx"));
    snprintf(ckpt_path, sizeof ckpt_path, "%s", xf_test_tmp("agent.ckpt"));
    snprintf(log_path, sizeof log_path, "%s", xf_test_tmp("rlflow-agent.out"));
    write_db(db_path, XF_RULE_PROVED);
    write_model();
    unlink(out_path);
}

static void teardown(void)
{
    free(output);
    output = NULL;
}

/* ------------------------------------------------------------------ tests */

START_TEST(test_greedy)
{
    ck_assert_int_eq(agent(COMMON " --search greedy", db_path, model_path, out_path), 0);
    expect_search_report("greedy");
    xf_test_expect_contains(output, "model:           ");
    xf_test_expect_contains(output, " (6 nodes, 6 after preparation)\n");
    expect_optimised(model_path, out_path);
    xf_test_onnx_checker(out_path);
}
END_TEST

/* --external-data: the weights of 1 KiB and more (the matmuls' [512,1]
 * matrices, or their merged [512,2]) go to the data file next to OUT, the
 * report names it, and the model reads back through it. */
START_TEST(test_external_data)
{
    char data[4096];
    snprintf(data, sizeof data, "%s", xf_test_tmp("model.opt.bin"));
    unlink(data);
    ck_assert_int_eq(agent(COMMON " --search greedy --external-data model.opt.bin", db_path,
                           model_path, out_path),
                     0);
    expect_search_report("greedy");
    xf_test_expect_contains(output, "external data:   model.opt.bin (");
    FILE *f = fopen(data, "rb");
    ck_assert_msg(f != NULL, "%s was not written", data);
    fseek(f, 0, SEEK_END);
    ck_assert_int_ge(ftell(f), 4096);
    fclose(f);
    expect_optimised(model_path, out_path);
    xf_test_onnx_checker(out_path);
    /* a location outside OUT's directory is refused, nothing written */
    unlink(out_path);
    ck_assert_int_eq(agent(COMMON " --search greedy --external-data ../x.bin", db_path,
                           model_path, out_path),
                     1);
    xf_test_expect_contains(output, "'../x.bin' is refused");
    ck_assert_int_eq(access(out_path, F_OK), -1);
}
END_TEST

START_TEST(test_taso)
{
    ck_assert_int_eq(agent(COMMON " --search taso --budget 50", db_path, model_path, out_path),
                     0);
    expect_search_report("taso");
    expect_optimised(model_path, out_path);
}
END_TEST

START_TEST(test_all_actions)
{
    ck_assert_int_eq(
        agent(COMMON " --search greedy --all-actions", db_path, model_path, out_path), 0);
    xf_test_expect_contains(output, "rules:           6 actions from ");
    xf_test_expect_contains(output,
                            "(1 skipped, 1 duplicates, irrelevant ones kept: --all-actions)\n");
    expect_optimised(model_path, out_path);
}
END_TEST

START_TEST(test_ppo_save_load)
{
    unlink(ckpt_path);
    ck_assert_int_eq(agent(COMMON " --agent ppo --budget 300 --save '%s'", db_path, model_path,
                           out_path, ckpt_path),
                     0);
    xf_test_expect_contains(output, "irrelevant to this model)\n");
    xf_test_expect_contains(output, "agent:           ppo, trained, ");
    xf_test_expect_contains(output, "optimisation:    ppo, ");
    ck_assert_int_eq(access(ckpt_path, R_OK), 0);
    ck_assert_int_eq(access(out_path, R_OK), 0);
    unlink(out_path);
    ck_assert_int_eq(
        agent(COMMON " --agent ppo --load '%s'", db_path, model_path, out_path, ckpt_path), 0);
    xf_test_expect_contains(output, "agent:           ppo, loaded, no training: a search it guides + "
                                    "1 greedy + 8 sampled episodes");
    /* --guide 0: the policy's episodes alone */
    ck_assert_int_eq(agent(COMMON " --agent ppo --load '%s' --guide 0 --samples 2", db_path,
                           model_path, out_path, ckpt_path),
                     0);
    xf_test_expect_contains(output, "agent:           ppo, loaded, no training: 1 greedy + 2 sampled episodes");
    char want[4200];
    snprintf(want, sizeof want, "written:         %s\n", out_path);
    xf_test_expect_contains(output, want);
    xf_graph g;
    load(out_path, &g);
    xf_graph_free(&g);
}
END_TEST

START_TEST(test_wm)
{
    ck_assert_int_eq(agent(COMMON " --agent wm --budget 800", db_path, model_path, out_path), 0);
    const char *p = strstr(output, "agent:           wm, ");
    ck_assert_msg(p, "no agent line:\n%s", output);
    int rounds = 0;
    long long real = 0, episodes = 0, dream = 0;
    ck_assert_msg(sscanf(p, "agent:           wm, %d rounds, %lld real steps (%lld episodes), "
                            "%lld dream steps",
                         &rounds, &real, &episodes, &dream) == 4,
                  "unreadable agent line:\n%s", output);
    /* The first round's random episodes take 400 steps: a second round
     * trains the world model and the controller in the dream. */
    ck_assert_int_ge(rounds, 2);
    ck_assert_int_le(real, 800);
    ck_assert_int_gt(dream, 0);
    xf_test_expect_contains(output, "world model:     loss ");
    xf_test_expect_contains(output, "optimisation:    wm, ");
    char want[4200];
    snprintf(want, sizeof want, "written:         %s\n", out_path);
    xf_test_expect_contains(output, want);
    xf_graph g;
    load(out_path, &g);
    xf_graph_free(&g);
}
END_TEST

/* A model no action can match: every action is irrelevant, the search (or
 * the default world-model agent) has nothing to do and the model is
 * written unchanged. */
/* Inputs and outputs of a and b have the same names in the same order. */
static void expect_same_io_names(const xf_graph *a, const xf_graph *b, const char *what)
{
    ck_assert_int_eq(a->n_inputs, b->n_inputs);
    ck_assert_int_eq(a->n_outputs, b->n_outputs);
    for (int k = 0; k < 2; k++) {
        const int *va = k ? a->outputs : a->inputs, *vb = k ? b->outputs : b->inputs;
        for (int i = 0; i < (k ? a->n_outputs : a->n_inputs); i++) {
            const char *x = a->values[va[i]].name, *y = b->values[vb[i]].name;
            ck_assert_msg(x && y && strcmp(x, y) == 0, "%s: %s %d is '%s', was '%s'", what,
                          k ? "output" : "input", i, y ? y : "(none)", x ? x : "(none)");
        }
    }
}

/* y_out = MatMul(x, W1) + MatMul(x, W2), optimised with matmul's
 * distributivity over ewadd (the rewrite replaces the node that computes
 * the output): the model written still calls its output y_out (it was
 * named after the rule's node, and the check compared by position); then
 * every shared model the importer reads, optimised by the four rules, keeps
 * its inputs' and outputs' names and order. */
START_TEST(test_io_names_kept)
{
    char dist_db[4096], mm_path[4096];
    snprintf(dist_db, sizeof dist_db, "%s", xf_test_tmp("distributive.db"));
    snprintf(mm_path, sizeof mm_path, "%s", xf_test_tmp("y_out.onnx"));
    xf_test_remove_db(dist_db);
    xf_rulesdb *db = NULL;
    xf_error err;
    ck_assert_int_eq(xf_rulesdb_open(dist_db, XF_RULESDB_CREATE, &db, &err), XF_OK);
    xf_rule r;
    xf_rule_init(&r);
    for (int s = 0; s < 2; s++) {
        xf_graph *g = s ? &r.dst : &r.src;
        int m0 = xf_fx_input(g, "m0", xf_fx_shape(2, 4, 4, 0, 0));
        int m1 = xf_fx_input(g, "m1", xf_fx_shape(2, 4, 4, 0, 0));
        int m2 = xf_fx_input(g, "m2", xf_fx_shape(2, 4, 4, 0, 0));
        xf_fx_output(g, s ? xf_fx_op(g, XF_OP_MATMUL, NULL, m0, xf_fx_op(g, XF_OP_ADD, NULL, m1, m2))
                          : xf_fx_op(g, XF_OP_ADD, NULL, xf_fx_op(g, XF_OP_MATMUL, NULL, m0, m1),
                                     xf_fx_op(g, XF_OP_MATMUL, NULL, m0, m2)));
    }
    xf_rulesdb_rule_meta m = {XF_RULE_PROVED, 0, NULL, 0};
    int64_t rid = 0;
    ck_assert_int_eq(xf_rulesdb_add_rule(db, &r, &m, &rid, NULL, &err), XF_OK);
    xf_rule_free(&r);
    xf_rulesdb_close(db);
    xf_graph g, opt;
    xf_graph_init(&g);
    int x = xf_fx_input(&g, "x", xf_fx_shape(2, 8, 16, 0, 0));
    int w1 = xf_fx_weight(&g, "W1", xf_fx_shape(2, 16, 32, 0, 0), 1);
    int w2 = xf_fx_weight(&g, "W2", xf_fx_shape(2, 16, 32, 0, 0), 2);
    int y = xf_graph_add_node(&g, XF_OP_ADD, NULL,
                              (int[]){xf_fx_op(&g, XF_OP_MATMUL, NULL, x, w1),
                                      xf_fx_op(&g, XF_OP_MATMUL, NULL, x, w2)},
                              2, 1, "y_out", &err);
    ck_assert_int_ge(y, 0);
    xf_fx_output(&g, g.nodes[y].outputs[0]);
    save(&g, mm_path);
    xf_graph_free(&g);
    ck_assert_int_eq(agent(COMMON " --search taso", dist_db, mm_path, out_path), 0);
    xf_test_expect_contains(output, "written:");
    load(mm_path, &g);
    load(out_path, &opt);
    ck_assert_int_eq(xf_test_count_op(&opt, XF_OP_MATMUL), 1); /* the rule was applied */
    expect_same_io_names(&g, &opt, "y_out model");
    ck_assert_str_eq(opt.values[opt.outputs[0]].name, "y_out");
    xf_graph_free(&g);
    xf_graph_free(&opt);

    const char *root = xf_test_models_dir();
    if (!root) {
        xf_test_skip_part("shared models: ../shared/models not found (XF_SHARED_DIR)");
        return;
    }
    const char *models[] = {"bert_small",   "bert_small_dynamic", "resnet18",
                            "squeezenet1_1", "swin_micro",        "vit_tiny",
                            "real/openwakeword_hello", "real/ppocr_mobile_cls",
                            "real/ppocr_v4_det",       "real/silero_vad_legacy"};
    int checked = 0;
    for (size_t i = 0; i < sizeof models / sizeof *models; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s/model.onnx", root, models[i]);
        if (access(path, R_OK) != 0) continue;
        xf_graph_init(&g);
        if (xf_onnx_load(path, NULL, &g, &err) != XF_OK) { /* the importer's limits: not ours */
            xf_graph_free(&g);
            continue;
        }
        unlink(out_path);
        int rc = agent(COMMON " --search greedy", db_path, path, out_path);
        if (rc == 0 && access(out_path, R_OK) == 0) {
            load(out_path, &opt);
            expect_same_io_names(&g, &opt, models[i]);
            xf_graph_free(&opt);
            checked++;
        } else { /* not written: it says why (a model the interpreter cannot run) */
            ck_assert_msg(rc == 1 && strstr(output, "numerical check"), "%s: exit %d:\n%s",
                          models[i], rc, output);
        }
        xf_graph_free(&g);
    }
    ck_assert_int_gt(checked, 0);
    fprintf(stderr, "io names: %d shared models written with their names\n", checked);
}
END_TEST

START_TEST(test_untouchable_model)
{
    write_plain_model();
    ck_assert_int_eq(agent(COMMON " --search greedy", db_path, plain_path, out_path), 0);
    xf_test_expect_contains(output, "rules:           0 actions from ");
    xf_test_expect_contains(output, "(1 skipped, 1 duplicates, 6 irrelevant to this model)\n");
    xf_test_expect_contains(output, "applicable:      0 rules at 0 locations\n");
    xf_test_expect_contains(
        output, "result:          no cheaper model found; the input model is written unchanged\n");
    xf_graph in, got;
    load(plain_path, &in);
    load(out_path, &got);
    ck_assert_uint_eq(xf_graph_hash(&got), xf_graph_hash(&in));
    xf_graph_free(&got);
    /* The learning agents have nothing to learn: they say so and write it. */
    unlink(out_path);
    ck_assert_int_eq(agent(COMMON " --budget 300", db_path, plain_path, out_path), 0);
    xf_test_expect_contains(output,
                            "agent:           wm, not trained: no action can match this model\n");
    xf_test_expect_contains(output, "optimisation:    wm, 0 environment steps");
    load(out_path, &got);
    ck_assert_uint_eq(xf_graph_hash(&got), xf_graph_hash(&in));
    xf_graph_free(&in);
    xf_graph_free(&got);
}
END_TEST

/* 1 when ONNX Runtime loads (the default library lookup). */
static int have_ort(void)
{
    xf_target_options to = xf_target_default_options();
    xf_target *t = NULL;
    if (xf_target_open(&to, &t, NULL) != XF_OK) return 0;
    xf_target_close(t);
    return 1;
}

/* --target ort without ONNX Runtime: said on the first line, and the run
 * is today's (the cost model decides, the model is optimised). */
START_TEST(test_target_absent)
{
    ck_assert_int_eq(setenv("RLFLOW_ORT_LIB", "/nonexistent/libonnxruntime.so.1", 1), 0);
    ck_assert_int_eq(agent(COMMON " --search greedy --target ort", db_path, model_path, out_path),
                     0);
    xf_test_expect_contains(output, "target:          none: onnxruntime not found: tried "
                                    "/nonexistent/libonnxruntime.so.1 ($RLFLOW_ORT_LIB)");
    xf_test_expect_contains(output, "the cost model decides, as without --target\n");
    expect_search_report("greedy");
    expect_optimised(model_path, out_path);
}
END_TEST

/* --target ort with ONNX Runtime: the report names it, times the input
 * and the candidates, and writes either the input unchanged (said so) or
 * the chosen model, which computes what the input does. */
START_TEST(test_target_ort)
{
    if (!have_ort()) XF_SKIP("ONNX Runtime is not installed");
    ck_assert_int_eq(agent(COMMON " --search taso --budget 50 --target ort --threads 1 "
                                  "--candidates 3",
                           db_path, model_path, out_path),
                     0);
    xf_test_expect_contains(output, "target:          onnxruntime 1.");
    xf_test_expect_contains(output, "CPU, 1 thread, optimisations all\n");
    xf_test_expect_contains(output, "target latency:  ");
    xf_test_expect_contains(output, "target noise:    a second session of the input: x");
    xf_test_expect_contains(output, "  input     ");
    xf_test_expect_contains(output, "  cand 0    ");
    if (strstr(output, "the input model is written unchanged")) {
        xf_graph in, got;
        load(model_path, &in);
        load(out_path, &got);
        ck_assert_uint_eq(xf_graph_hash(&got), xf_graph_hash(&in));
        xf_graph_free(&in);
        xf_graph_free(&got);
        xf_test_expect_contains(output, "rules applied:   0 (");
    } else {
        xf_test_expect_contains(output, "fastest: written");
        xf_test_expect_contains(output, "target outputs:  max |d| ");
        xf_graph in, got;
        expect_same_outputs(model_path, out_path, &in, &got);
        xf_graph_free(&in);
        xf_graph_free(&got);
    }
}
END_TEST

/* --target ort on a model with a scaling: searched twice, the scaling
 * moved and kept in place (--scalings both, the default), both searches'
 * candidates timed, and what is written computes what the input does;
 * --scalings moved searches once. */
START_TEST(test_target_scalings)
{
    if (!have_ort()) XF_SKIP("ONNX Runtime is not installed");
    write_scaled_model();
    ck_assert_int_eq(agent(COMMON " --search taso --budget 30 --target ort --threads 1 "
                                  "--candidates 2",
                           db_path, scaled_path, out_path),
                     0);
    xf_test_expect_contains(output, "1 scalings as scalar_mul");
    xf_test_expect_contains(output, "also searched:   with the 1 scalings kept in place (the "
                                    "target times both searches' candidates): ");
    xf_test_expect_contains(output, "search:          taso (scalings moved), ");
    xf_test_expect_contains(output, "search:          taso (scalings kept), ");
    xf_test_expect_contains(output, "(cand 1:N: candidate N of the search with scalings kept)");
    xf_test_expect_contains(output, "  cand 1:0  ");
    xf_graph in, got;
    expect_same_outputs(scaled_path, out_path, &in, &got);
    xf_graph_free(&in);
    xf_graph_free(&got);
    ck_assert_int_eq(agent(COMMON " --search taso --budget 30 --target ort --threads 1 "
                                  "--candidates 2 --scalings moved",
                           db_path, scaled_path, out_path),
                     0);
    ck_assert_ptr_null(strstr(output, "also searched:"));
    ck_assert_ptr_null(strstr(output, "cand 1:"));
    xf_test_expect_contains(output, "search:          taso, ");
}
END_TEST

/* A learning agent that trains here is judged on both preparations as
 * TASO is (each trained for the budget a search gets on each), and what
 * is written computes what the input does; one saved is one agent: the
 * model as asked, once. --target-budget given alone is kept. */
START_TEST(test_target_scalings_agent)
{
    if (!have_ort()) XF_SKIP("ONNX Runtime is not installed");
    write_scaled_model();
    ck_assert_int_eq(agent(COMMON " --agent ppo --budget 30 --target ort --threads 1 "
                                  "--candidates 2 --target-budget 20",
                           db_path, scaled_path, out_path),
                     0);
    xf_test_expect_contains(output, "also searched:   with the 1 scalings kept in place (the "
                                    "target times both searches' candidates): ");
    xf_test_expect_contains(output, "optimisation:    ppo (scalings moved), 30 environment steps");
    xf_test_expect_contains(output, "optimisation:    ppo (scalings kept), 30 environment steps");
    /* a budget given is kept: not grown to the plan (over 20 s for any model) */
    xf_test_expect_contains(output, " (budget 20 s");
    xf_graph in, got;
    expect_same_outputs(scaled_path, out_path, &in, &got);
    xf_graph_free(&in);
    xf_graph_free(&got);
    char ckpt[4096];
    snprintf(ckpt, sizeof ckpt, "%s", xf_test_tmp("scaled_ppo.ckpt"));
    ck_assert_int_eq(agent(COMMON " --agent ppo --budget 30 --target ort --threads 1 "
                                  "--candidates 2 --target-budget 20 --save '%s'",
                           db_path, scaled_path, out_path, ckpt),
                     0);
    ck_assert_ptr_null(strstr(output, "also searched:"));
    xf_test_expect_contains(output, "optimisation:    ppo, 30 environment steps");
}
END_TEST

/* --cost fused with ONNX Runtime: the search minimises the fused regions'
 * latency, the report says how many regions were timed, and what is
 * written computes what the input does. */
START_TEST(test_cost_fused)
{
    if (!have_ort()) XF_SKIP("ONNX Runtime is not installed");
    ck_assert_int_eq(agent(COMMON " --search taso --budget 20 --target ort --threads 1 "
                                  "--cost fused --candidates 2",
                           db_path, model_path, out_path),
                     0);
    xf_test_expect_contains(output, "fused cost:      regions timed in the target");
    xf_test_expect_contains(output, "fused regions:   ");
    xf_test_expect_contains(output, " timed in the target (");
    xf_graph in, got;
    expect_same_outputs(model_path, out_path, &in, &got);
    xf_graph_free(&in);
    xf_graph_free(&got);
}
END_TEST

START_TEST(test_usage)
{
    ck_assert_int_eq(agent("--help"), 0);
    xf_test_expect_contains(output, "usage: rlflow-agent [--rules RULES.db] MODEL.onnx");
    xf_test_expect_contains(output, "--make-rules DIR");
    xf_test_expect_contains(output, "--all-actions");
    ck_assert_int_eq(agent(COMMON " --frobnicate", db_path, model_path, out_path), 2);
    xf_test_expect_contains(
        output, "rlflow-agent: unknown option '--frobnicate' (see rlflow-agent --help)\n");
    ck_assert_int_eq(agent("-o '%s'", out_path), 2);
    xf_test_expect_contains(output, "rlflow-agent: no model given\n");
    ck_assert_int_eq(agent("--make-rules /tmp '%s'", model_path), 2);
    xf_test_expect_contains(output, "rlflow-agent: --make-rules reads no model\n");
    ck_assert_int_eq(
        agent(COMMON " --search greedy --save '%s'", db_path, model_path, out_path, ckpt_path), 2);
    xf_test_expect_contains(
        output, "rlflow-agent: --save/--load need a learning agent (--agent wm or ppo)\n");
    ck_assert_int_eq(agent(COMMON " --mem-limit 1K", db_path, model_path, out_path), 2);
    xf_test_expect_contains(output, "rlflow-agent: --mem-limit expects a size from 1M to 2^62 "
                                    "bytes, a number with an optional K, M, G or T suffix (e.g. "
                                    "512M, 8G), got '1K'\n");
    ck_assert_int_eq(agent(COMMON " --budget lots", db_path, model_path, out_path), 2);
    xf_test_expect_contains(
        output, "rlflow-agent: --budget needs a count or a time such as 120s, got 'lots'\n");
    ck_assert_int_eq(agent(COMMON " --cost fused", db_path, model_path, out_path), 2);
    xf_test_expect_contains(
        output, "rlflow-agent: --cost fused times regions in the target: give --target ort\n");
    ck_assert_int_eq(agent(COMMON " --cost cheap", db_path, model_path, out_path), 2);
    xf_test_expect_contains(output, "rlflow-agent: --cost needs ops or fused, got 'cheap'\n");
    ck_assert_int_eq(agent(COMMON " --scalings some", db_path, model_path, out_path), 2);
    xf_test_expect_contains(output,
                            "rlflow-agent: --scalings needs moved, kept or both, got 'some'\n");
    ck_assert_int_eq(access(out_path, F_OK), -1);
}
END_TEST

/* Without --rules: the default database, the build's next to the binary
 * when the build made it (XF_RULES_DEFAULT), else the user cache's, here
 * this suite's four rules planted under the default name in a scratch
 * XDG_CACHE_HOME; the run says which it used and optimises as with
 * --rules. --make-rules in a directory that cannot be made names it. */
START_TEST(test_default_rules)
{
    char cache[4096], dir[4200], name[256], planted[4600], beside[4600];
    snprintf(cache, sizeof cache, "%s", xf_test_tmp("xdg-cache"));
    xf_test_system("rm -rf '%s'", cache);
    snprintf(dir, sizeof dir, "%s/rlflow", cache);
    ck_assert_int_eq(xf_test_system("mkdir -p '%s'", dir), 0);
    xf_default_rules_options d;
    xf_default_rules_options_init(&d);
    xf_error err = {0};
    ck_assert_int_eq(xf_default_rules_name(&d, name, sizeof name, &err), XF_OK);
    snprintf(planted, sizeof planted, "%s/%s", dir, name);
    ck_assert_int_eq(xf_test_system("cp '%s' '%s'", db_path, planted), 0);
    snprintf(beside, sizeof beside, "%s/%s", getenv("XF_BIN_DIR"), name);
    int built = access(beside, R_OK) == 0;
    setenv("XDG_CACHE_HOME", cache, 1);
    ck_assert_int_eq(agent("'%s' -o '%s' --backend analytic --cache none --no-latency -q "
                           "--search greedy",
                           model_path, out_path),
                     0);
    char want[5000];
    snprintf(want, sizeof want, "rlflow-agent: rules: %s (the default database, %s; ",
             built ? beside : planted, built ? "the build's, next to rlflow-agent"
                                             : "the user cache's");
    xf_test_expect_contains(output, want);
    snprintf(want, sizeof want, "actions from %s (", built ? beside : planted);
    xf_test_expect_contains(output, want);
    ck_assert_int_eq(access(out_path, F_OK), 0);
    unsetenv("XDG_CACHE_HOME");
    ck_assert_int_eq(agent("--make-rules /dev/null/rules"), 1);
    xf_test_expect_contains(output, "rlflow-agent: cannot create /dev/null/rules for the default "
                                    "rules: ");
}
END_TEST

START_TEST(test_no_proved_rules)
{
    write_db(nodb_path, XF_RULE_CANDIDATE);
    ck_assert_int_eq(agent(COMMON " --search greedy", nodb_path, model_path, out_path), 2);
    char want[4300];
    snprintf(want, sizeof want, "rlflow-agent: %s has no proved rules the matcher can use", nodb_path);
    xf_test_expect_contains(output, want);
    snprintf(want, sizeof want, "run 'xferverify %s' first\n", nodb_path);
    xf_test_expect_contains(output, want);
    ck_assert_int_eq(access(out_path, F_OK), -1);
}
END_TEST

START_TEST(test_missing_model)
{
    char missing[4200];
    snprintf(missing, sizeof missing, "%s", xf_test_tmp("no-such-model.onnx"));
    unlink(missing);
    ck_assert_int_eq(agent(COMMON " --search greedy", db_path, missing, out_path), 2);
    ck_assert_msg(strncmp(output, "rlflow-agent: ", 14) == 0, "%s", output);
    xf_test_expect_contains(output, missing);
    ck_assert_int_eq(access(out_path, F_OK), -1);
    /* A checkpoint that is not there is an unreadable input too. */
    ck_assert_int_eq(
        agent(COMMON " --agent ppo --load '%s'", db_path, model_path, out_path, missing), 2);
    char want[4300];
    snprintf(want, sizeof want, "rlflow-agent: cannot read checkpoint '%s': ", missing);
    xf_test_expect_contains(output, want);
    ck_assert_int_eq(access(out_path, F_OK), -1);
}
END_TEST

/* The restriction on the API: a fixed point over op sets. */
static xf_ruleset *restricted_rules(const xf_graph *g)
{
    xf_rule r[N_RULES];
    build_rules(r);
    xf_ruleset_options o = xf_ruleset_options_default();
    o.restrict_to = g;
    xf_ruleset *rs = NULL;
    xf_error err;
    ck_assert_msg(xf_ruleset_from_rules(r, NULL, N_RULES, &o, &rs, &err) == XF_OK, "%s", err.msg);
    free_rules(r);
    return rs;
}

/* Which rule ids the set kept, as a sorted string such as "-2 -1 1 2". */
static void kept_ids(const xf_ruleset *rs, char *buf, size_t n)
{
    int64_t ids[16];
    int k = xf_ruleset_count(rs);
    ck_assert_int_le(k, 16);
    for (int i = 0; i < k; i++) ids[i] = xf_ruleset_rule_id(rs, i);
    for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && ids[j - 1] > ids[j]; j--) {
            int64_t t = ids[j];
            ids[j] = ids[j - 1];
            ids[j - 1] = t;
        }
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < k; i++)
        len += (size_t)snprintf(buf + len, n - len, "%s%lld", i ? " " : "", (long long)ids[i]);
}

START_TEST(test_restriction_fixed_point)
{
    char ids[256];
    /* Without a restriction: 1, -1, 2, -2, 3 (its reverse a duplicate), 4. */
    xf_rule r[N_RULES];
    build_rules(r);
    xf_ruleset *all = NULL;
    xf_error err;
    ck_assert_msg(xf_ruleset_from_rules(r, NULL, N_RULES, NULL, &all, &err) == XF_OK, "%s",
                  err.msg);
    free_rules(r);
    kept_ids(all, ids, sizeof ids);
    ck_assert_str_eq(ids, "-2 -1 1 2 3 4");
    ck_assert_int_eq(xf_ruleset_irrelevant(all), 0);
    xf_ruleset_free(all);

    /* A bare conv[act=relu]: rule -1 matches it and brings a relu, so
     * rule 1 (relu of a conv) becomes reachable; no matmul, add or
     * transpose ever appears. */
    xf_graph g;
    xf_graph_init(&g);
    int x = xf_fx_input(&g, "x", xf_fx_shape(4, 1, 4, 8, 8));
    int w = xf_fx_weight(&g, "w", xf_fx_shape(4, 4, 4, 3, 3), 3);
    xf_params p = xf_fx_conv3x3(XF_ACT_RELU);
    xf_fx_output(&g, xf_fx_op(&g, XF_OP_CONV, &p, x, w));
    xf_ruleset *rs = restricted_rules(&g);
    kept_ids(rs, ids, sizeof ids);
    ck_assert_str_eq(ids, "-1 1");
    ck_assert_int_eq(xf_ruleset_irrelevant(rs), 4);
    xf_ruleset_free(rs);
    xf_graph_free(&g);

    /* A relu alone: no conv can ever appear, so neither direction of rule 1
     * is kept. */
    xf_graph_init(&g);
    x = xf_fx_input(&g, "x", xf_fx_shape(4, 1, 4, 8, 8));
    xf_fx_output(&g, xf_fx_op(&g, XF_OP_RELU, NULL, x, -1));
    rs = restricted_rules(&g);
    ck_assert_int_eq(xf_ruleset_count(rs), 0);
    ck_assert_int_eq(xf_ruleset_irrelevant(rs), 6);
    xf_ruleset_free(rs);
    xf_graph_free(&g);

    /* Two matmuls: both directions of the merge (the merge brings the
     * concat and split the reverse needs). */
    xf_graph_init(&g);
    int a = xf_fx_input(&g, "a", xf_fx_shape(2, 8, 8, 0, 0));
    xf_fx_output(&g, xf_fx_op(&g, XF_OP_MATMUL, NULL, a, a));
    rs = restricted_rules(&g);
    kept_ids(rs, ids, sizeof ids);
    ck_assert_str_eq(ids, "-2 2");
    xf_ruleset_free(rs);
    xf_graph_free(&g);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("rlflow_agent");
    TCase *t = tcase_create("cli");
    tcase_set_timeout(t, 300);
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, test_greedy);
    tcase_add_test(t, test_external_data);
    tcase_add_test(t, test_taso);
    tcase_add_test(t, test_all_actions);
    tcase_add_test(t, test_ppo_save_load);
    tcase_add_test(t, test_wm);
    tcase_add_test(t, test_untouchable_model);
    tcase_add_test(t, test_io_names_kept);
    tcase_add_test(t, test_target_absent);
    tcase_add_test(t, test_target_ort);
    tcase_add_test(t, test_target_scalings);
    tcase_add_test(t, test_target_scalings_agent);
    tcase_add_test(t, test_cost_fused);
    tcase_add_test(t, test_usage);
    tcase_add_test(t, test_default_rules);
    tcase_add_test(t, test_no_proved_rules);
    tcase_add_test(t, test_missing_model);
    suite_add_tcase(s, t);
    TCase *api = tcase_create("restriction");
    tcase_add_test(api, test_restriction_fixed_point);
    suite_add_tcase(s, api);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
