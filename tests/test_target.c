/*
 * test_target.c — the target runtime (ONNX Runtime on CPU, target/): the
 * library is found or refused with an actionable message, the hand-declared
 * C API entries are the right ones (a small graph's outputs equal the
 * interpreter's, an ONNX Runtime error comes back with its own message),
 * the alternating timing finds a model no different from itself (and two
 * timings of it alone agree within their noise), the
 * verdict asks an interval to clear both 1 and the self check, weights
 * shared with the sessions reach onnxruntime without a copy (and their
 * files go away) where onnxruntime's optimisers cannot rewrite them, and a race times candidates that join and leave.
 * Cases that need ONNX Runtime skip when tools/setup.sh has not installed
 * it (and RLFLOW_ORT_LIB names none).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "onnx/onnx.h"
#include "target/target.h"
#include "testutil.h"

/* Opens the target with `threads`, or returns NULL when ONNX Runtime is
 * absent (any other failure fails the case). */
static xf_target *open_or_null(int threads)
{
    xf_target_options o = xf_target_default_options();
    o.threads = threads;
    xf_target *t = NULL;
    xf_error err;
    xf_error_clear(&err);
    xf_status s = xf_target_open(&o, &t, &err);
    if (s == XF_ERR_UNSUPPORTED) return NULL;
    ck_assert_msg(s == XF_OK, "%s", err.msg);
    return t;
}

/* x[4,8] + table[ids] (ids int64 [4]), times w[8,16]; outputs relu and
 * softmax of the product: float and int64 inputs, two outputs. */
static void small_graph(xf_graph *g)
{
    xf_graph_init(g);
    int x = xf_test_input(g, "x", 2, (int64_t[]){4, 8});
    xf_shape is = xf_shape_make(1, (int64_t[]){4});
    int ids = xf_graph_add_input(g, "ids", XF_I64, &is, NULL);
    ck_assert_int_ge(ids, 0);
    int table = xf_test_weight(g, "table", 2, (int64_t[]){10, 8}, 3);
    int w = xf_test_weight(g, "w", 2, (int64_t[]){8, 16}, 4);
    int e = xf_test_op2(g, XF_OP_GATHER, NULL, table, ids);
    int y = xf_test_op2(g, XF_OP_MATMUL, NULL, xf_test_op2(g, XF_OP_ADD, NULL, x, e), w);
    xf_test_out(g, xf_test_op2(g, XF_OP_RELU, NULL, y, -1));
    xf_test_out(g, xf_test_op2(g, XF_OP_SOFTMAX, NULL, y, -1));
}

START_TEST(wrong_library_says_what_was_tried_and_how_to_install)
{
    xf_target_options o = xf_target_default_options();
    o.library = "/nonexistent/libonnxruntime.so.1";
    xf_target *t = (xf_target *)1;
    xf_error err;
    ck_assert_int_eq(xf_target_open(&o, &t, &err), XF_ERR_UNSUPPORTED);
    ck_assert_ptr_null(t);
    xf_test_expect_contains(err.msg, "onnxruntime not found: tried /nonexistent/libonnxruntime.so.1");
    xf_test_expect_contains(err.msg, "tools/setup.sh");
    o.library = "libm.so.6"; /* loads, but is not ONNX Runtime */
    ck_assert_int_eq(xf_target_open(&o, &t, &err), XF_ERR_UNSUPPORTED);
    xf_test_expect_contains(err.msg, "has no OrtGetApiBase");
}
END_TEST

/* A library that exports OrtGetApiBase but whose API table has NULL
 * entries is refused naming them (it crashed at the self check), and a
 * truncated library is refused before dlopen maps it (it died of SIGBUS). */
START_TEST(broken_libraries_are_refused_with_a_message)
{
    const char *fake = getenv("XF_FAKE_ORT");
    if (!fake || !fake[0]) XF_SKIP("XF_FAKE_ORT is not set (run through CTest)");
    xf_target_options o = xf_target_default_options();
    o.library = fake;
    xf_target *t = NULL;
    xf_error err;
    ck_assert_int_eq(xf_target_open(&o, &t, &err), XF_ERR_UNSUPPORTED);
    ck_assert_ptr_null(t);
    xf_test_expect_contains(err.msg, "entries of its C API table");
    xf_test_expect_contains(err.msg, "are missing, the first at index 0");
    /* the first 600 bytes of it: a header whose segments lie past the end */
    size_t len = 0;
    char *bytes = xf_test_read_file(fake, &len);
    ck_assert_ptr_nonnull(bytes);
    ck_assert_uint_gt(len, 600);
    const char *cut = xf_test_tmp("truncated.so.1");
    FILE *f = fopen(cut, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(bytes, 1, 600, f), 600);
    fclose(f);
    free(bytes);
    o.library = cut;
    ck_assert_int_eq(xf_target_open(&o, &t, &err), XF_ERR_UNSUPPORTED);
    xf_test_expect_contains(err.msg, "cannot be loaded: ");
    ck_assert_msg(strstr(err.msg, "truncated") || strstr(err.msg, "past its end"), "%s", err.msg);
    o.library = "/dev/null"; /* not a regular file */
    ck_assert_int_eq(xf_target_open(&o, &t, &err), XF_ERR_UNSUPPORTED);
    xf_test_expect_contains(err.msg, "/dev/null");
}
END_TEST

START_TEST(verdict_asks_the_interval_to_clear_1_and_the_self_check)
{
    xf_target_timing fast = {.ratio = 0.9, .lo = 0.85, .hi = 0.95};
    xf_target_timing slow = {.ratio = 1.1, .lo = 1.05, .hi = 1.15};
    xf_target_timing same = {.ratio = 1.0, .lo = 0.97, .hi = 1.02};
    xf_target_timing wide_self = {.ratio = 1.0, .lo = 0.93, .hi = 1.08};
    ck_assert_int_eq(xf_target_verdict(&fast, NULL), -1);
    ck_assert_int_eq(xf_target_verdict(&slow, NULL), 1);
    ck_assert_int_eq(xf_target_verdict(&same, NULL), 0);
    ck_assert_int_eq(xf_target_verdict(&fast, &same), -1);
    ck_assert_int_eq(xf_target_verdict(&fast, &wide_self), 0);
    ck_assert_int_eq(xf_target_verdict(&slow, &wide_self), 0);
}
END_TEST

START_TEST(identity_names_version_threads_and_level)
{
    xf_target *t = open_or_null(2);
    if (!t) XF_SKIP("onnxruntime not installed (tools/setup.sh)");
    const char *id = xf_target_identity(t);
    xf_test_expect_contains(id, "onnxruntime 1.");
    xf_test_expect_contains(id, " CPU, 2 threads, optimisations all");
    ck_assert_int_eq(xf_target_threads(t), 2);
    xf_target_close(t);
    xf_target_options o = xf_target_default_options();
    o.opt_level = XF_TARGET_OPT_DISABLED;
    xf_error err;
    ck_assert_int_eq(xf_target_open(&o, &t, &err), XF_OK);
    xf_test_expect_contains(xf_target_identity(t), "optimisations disabled");
    ck_assert_int_ge(xf_target_threads(t), 1);
    xf_target_close(t);
}
END_TEST

/* at 1 thread, and at 2 (a session with its thread spinning turned off) */
START_TEST(outputs_equal_the_interpreter)
{
    xf_target *t = open_or_null(1 + _i);
    if (!t) XF_SKIP("onnxruntime not installed (tools/setup.sh)");
    xf_graph g;
    small_graph(&g);
    xf_error err;
    xf_target_model *m = NULL;
    ck_assert_msg(xf_target_model_load(t, &g, 7, &m, &err) == XF_OK, "%s", err.msg);
    xf_tensor got[2], want[2];
    ck_assert_int_eq(xf_target_model_outputs(m, got, &err), XF_ERR_INVALID);
    for (int run = 0; run < 2; run++) /* outputs of the previous run are released */
        ck_assert_msg(xf_target_model_run(m, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_target_model_outputs(m, got, &err) == XF_OK, "%s", err.msg);
    xf_tensor *in = xf_tensor_array_alloc(g.n_inputs);
    ck_assert_int_eq(xf_graph_random_inputs(&g, 7, in, &err), XF_OK);
    ck_assert_int_eq(xf_interp_run(&g, in, g.n_inputs, want, &err), XF_OK);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(got[i].dtype, XF_F32);
        ck_assert(xf_shape_equal(&got[i].shape, &want[i].shape));
        ck_assert_msg(xf_tensor_close(&got[i], &want[i], 1e-5, 1e-5), "output %d differs", i);
        xf_tensor_free(&got[i]);
        xf_tensor_free(&want[i]);
    }
    xf_tensor_array_free(in, g.n_inputs);
    xf_target_model_free(m);
    xf_graph_free(&g);
    xf_target_close(t);
}
END_TEST

START_TEST(a_model_onnxruntime_refuses_gives_its_message)
{
    xf_target *t = open_or_null(1);
    if (!t) XF_SKIP("onnxruntime not installed (tools/setup.sh)");
    xf_graph g;
    xf_graph_init(&g);
    int x = xf_test_input(&g, "x", 1, (int64_t[]){4});
    xf_opaque *op = xf_calloc(1, sizeof *op);
    op->op_type = xf_strdup("NoSuchOp");
    op->domain = xf_strdup("");
    xf_shape s = xf_shape_make(1, (int64_t[]){4});
    xf_error err;
    int node = xf_graph_add_opaque(&g, op, &x, 1, (xf_dtype[]){XF_F32}, &s, 1, "bad", &err);
    ck_assert_int_ge(node, 0);
    xf_test_out(&g, g.nodes[node].outputs[0]);
    xf_target_model *m = (xf_target_model *)1;
    ck_assert_int_ne(xf_target_model_load(t, &g, 1, &m, &err), XF_OK);
    ck_assert_ptr_null(m);
    xf_test_expect_contains(err.msg, "loading the model: onnxruntime: ");
    xf_test_expect_contains(err.msg, "NoSuchOp");
    xf_graph_free(&g);
    xf_target_close(t);
}
END_TEST

/* Whether 1 lies in r's interval give or take `slack`. */
static int holds_one(const xf_target_timing *r, double slack)
{
    ck_assert(r->lo <= r->ratio && r->ratio <= r->hi);
    ck_assert(r->noise >= r->hi - r->ratio && r->noise >= r->ratio - r->lo);
    return r->lo <= 1 + slack && r->hi >= 1 - slack;
}

START_TEST(the_same_model_twice_is_equal_within_the_noise)
{
    xf_target *t = open_or_null(1);
    if (!t) XF_SKIP("onnxruntime not installed (tools/setup.sh)");
    xf_graph g;
    small_graph(&g);
    const xf_graph *pair[2] = {&g, &g};
    xf_target_timing_options o = {.rounds = 15, .round_ms = 10, .warmup_ms = 20, .self_check = 1};
    xf_target_timing res[2], self;
    xf_error err;
    /* Each interval misses the truth 5% of the time by design, and two
     * sessions of one model may differ a little (memory placement): 1 must
     * lie within both intervals give or take 5%, in one of two tries. */
    int ok = 0;
    for (int attempt = 0; attempt < 2 && !ok; attempt++) {
        ck_assert_msg(xf_target_compare(t, pair, 2, &o, res, &self, &err) == XF_OK, "%s",
                      err.msg);
        ck_assert(res[0].ratio == 1 && res[0].noise == 0);
        ck_assert(res[0].median_ms > 0 && res[0].runs >= 15);
        ok = holds_one(&res[1], 0.05) && holds_one(&self, 0.05);
    }
    ck_assert_msg(ok, "same model: ratio %g in [%g, %g], self check %g in [%g, %g]", res[1].ratio,
                  res[1].lo, res[1].hi, self.ratio, self.lo, self.hi);
    /* One model alone: its median and noise, the half-width of the 95%
     * interval of its rounds' median over that median. The interval covers
     * one timing's rounds, not what moves between two timings (two of this
     * model read 0.7% apart with noises of 0.17% and 0.16%, 2026-11-30), and
     * a neighbour's load (a parallel ctest on two cores) can widen it past 1
     * when some rounds run at half speed (a verifier at nice 10 on both cores
     * did so in 3 of 9 runs of a two-try version with tighter bounds). So the
     * test asks, in one of three tries, for what a sound timing gives on a
     * core that is not taken for most of the timing: both noises under 1
     * (the interval narrower than the median) and the two medians within a
     * factor 2. A broken timing fails it (a median or noise that is not
     * positive and finite, an interval as wide as the median in every try,
     * two timings of one model a factor 2 apart); a neighbour that holds
     * both cores through all three tries can fail it too. */
    double ms[2], noise[2];
    int agree = 0;
    for (int attempt = 0; attempt < 3 && !agree; attempt++) {
        for (int k = 0; k < 2; k++) {
            ck_assert_msg(xf_target_latency(t, &g, &o, &ms[k], &noise[k], &err) == XF_OK, "%s",
                          err.msg);
            ck_assert(ms[k] > 0 && noise[k] >= 0 && isfinite(noise[k]));
        }
        agree = noise[0] < 1 && noise[1] < 1 && fmax(ms[0], ms[1]) <= 2 * fmin(ms[0], ms[1]);
    }
    ck_assert_msg(agree, "same model alone: %g ms (noise %g) then %g ms (noise %g)", ms[0],
                  noise[0], ms[1], noise[1]);
    xf_graph_free(&g);
    xf_target_close(t);
}
END_TEST

START_TEST(compare_refuses_models_with_other_inputs)
{
    xf_target *t = open_or_null(1);
    if (!t) XF_SKIP("onnxruntime not installed (tools/setup.sh)");
    xf_graph a, b;
    small_graph(&a);
    xf_graph_init(&b);
    xf_test_out(&b, xf_test_op2(&b, XF_OP_RELU, NULL,
                                xf_test_input(&b, "x", 2, (int64_t[]){4, 8}), -1));
    const xf_graph *pair[2] = {&a, &b};
    xf_target_timing res[2];
    xf_error err;
    ck_assert_int_eq(xf_target_compare(t, pair, 2, NULL, res, NULL, &err), XF_ERR_MISMATCH);
    xf_test_expect_contains(err.msg, "model 1 does not read the same inputs");
    xf_graph_free(&a);
    xf_graph_free(&b);
    xf_target_close(t);
}
END_TEST

/* y = relu(x @ w) with w [64,64] (16 KiB: shared), plus `extra` added. */
static void wide_graph(xf_graph *g, float extra)
{
    xf_graph_init(g);
    int x = xf_test_input(g, "x", 2, (int64_t[]){8, 64});
    int w = xf_test_weight(g, "w", 2, (int64_t[]){64, 64}, 5);
    int y = xf_test_op2(g, XF_OP_RELU, NULL, xf_test_op2(g, XF_OP_MATMUL, NULL, x, w), -1);
    if (extra != 0) y = xf_test_op2(g, XF_OP_ADD, NULL, y, xf_test_scalar(g, "extra", extra));
    xf_test_out(g, y);
}

/* The one rlflow-target-* directory under dir ("" when none), and whether
 * it holds `file`. */
static int scratch_has(const char *dir, const char *file, char *found, size_t n)
{
    found[0] = '\0';
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "ls -d %s/rlflow-target-* 2>/dev/null | head -1", dir);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    if (fgets(found, (int)n, p)) found[strcspn(found, "\n")] = '\0';
    pclose(p);
    if (!found[0]) return 0;
    char path[4400];
    snprintf(path, sizeof path, "%s/%s", found, file);
    FILE *f = fopen(path, "rb");
    if (f) fclose(f);
    return f != NULL;
}

/* A candidate that borrows the input's weights is handed to onnxruntime
 * referencing one data file written once, with rlflow's buffers as its
 * initializers: its outputs are the interpreter's, its model files are gone
 * as soon as its session exists, and the data file goes with the sharing
 * (the directory with the target). A deep copy shares nothing. */
START_TEST(shared_weights_reach_onnxruntime_without_a_copy)
{
    xf_target *t = open_or_null(1);
    if (!t) XF_SKIP("onnxruntime not installed (tools/setup.sh)");
    char dir[4096], scratch[4096];
    snprintf(dir, sizeof dir, "%s", xf_test_tmp("share_tmpdir"));
    xf_test_system("rm -rf %s && mkdir -p %s", dir, dir);
    ck_assert_int_eq(setenv("TMPDIR", dir, 1), 0);
    xf_graph g, cand, copy;
    wide_graph(&g, 0);
    xf_error err;
    ck_assert_msg(xf_target_share_weights(t, &g, &err) == XF_OK, "%s", err.msg);
    ck_assert_uint_eq(xf_target_shared_bytes(t), 64 * 64 * 4);
    ck_assert(scratch_has(dir, "weights.data", scratch, sizeof scratch));
    ck_assert_int_eq(xf_graph_clone_shared(&g, &cand, &err), XF_OK);
    ck_assert_int_eq(xf_graph_clone(&g, &copy, &err), XF_OK);
    const xf_graph *models[2] = {&cand, &copy};
    for (int k = 0; k < 2; k++) {
        xf_target_model *m = NULL;
        ck_assert_msg(xf_target_model_load(t, models[k], 3, &m, &err) == XF_OK, "%s", err.msg);
        ck_assert_msg(xf_target_model_run(m, &err) == XF_OK, "%s", err.msg);
        xf_tensor got, want, *in = xf_tensor_array_alloc(1);
        ck_assert_int_eq(xf_target_model_outputs(m, &got, &err), XF_OK);
        ck_assert_int_eq(xf_graph_random_inputs(&g, 3, in, &err), XF_OK);
        ck_assert_int_eq(xf_interp_run(&g, in, 1, &want, &err), XF_OK);
        ck_assert_msg(xf_tensor_close(&got, &want, 1e-5, 1e-5), "model %d differs", k);
        xf_tensor_free(&got);
        xf_tensor_free(&want);
        xf_tensor_array_free(in, 1);
        ck_assert(!scratch_has(dir, "m0.onnx", scratch, sizeof scratch)); /* removed at once */
        xf_target_model_free(m);
    }
    xf_target_unshare(t);
    ck_assert_uint_eq(xf_target_shared_bytes(t), 0);
    ck_assert(!scratch_has(dir, "weights.data", scratch, sizeof scratch));
    xf_target_close(t);
    scratch_has(dir, "weights.data", scratch, sizeof scratch);
    ck_assert_str_eq(scratch, ""); /* the scratch directory went with the target */
    unsetenv("TMPDIR");
    xf_graph_free(&cand);
    xf_graph_free(&copy);
    xf_graph_free(&g);
}
END_TEST

/* A scratch directory under dir named `name`, with an owner file saying
 * `owner` (NULL: none) and a weights file. */
static void fake_scratch(const char *dir, const char *name, const char *owner)
{
    xf_test_system("mkdir -p %s/%s && echo weights > %s/%s/weights.data", dir, name, dir, name);
    if (owner) xf_test_system("echo '%s' > %s/%s/owner", owner, dir, name);
}

static int is_dir(const char *dir, const char *name)
{
    char p[4400];
    struct stat st;
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A scratch directory left by a process that was killed (its owner on this
 * host has ended) is removed when the next target makes its own; one whose
 * owner runs, one of another host and one without an owner file are kept;
 * the target's own directory says who owns it and goes with the target. */
START_TEST(stale_scratch_directories_are_swept)
{
    xf_target *t = open_or_null(1);
    if (!t) XF_SKIP("onnxruntime not installed (tools/setup.sh)");
    char dir[4096], host[256], owner[400];
    snprintf(dir, sizeof dir, "%s", xf_test_tmp("sweep_tmpdir"));
    xf_test_system("rm -rf %s && mkdir -p %s", dir, dir);
    ck_assert_int_eq(gethostname(host, sizeof host), 0);
    host[sizeof host - 1] = '\0';
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) _exit(0);
    ck_assert_int_eq(waitpid(child, NULL, 0), child);
    snprintf(owner, sizeof owner, "%ld %s", (long)child, host);
    fake_scratch(dir, "rlflow-target-dead01", owner);
    snprintf(owner, sizeof owner, "%ld %s", (long)getpid(), host);
    fake_scratch(dir, "rlflow-target-live01", owner);
    snprintf(owner, sizeof owner, "%ld elsewhere.invalid", (long)child);
    fake_scratch(dir, "rlflow-target-host01", owner);
    fake_scratch(dir, "rlflow-target-none01", NULL);
    fake_scratch(dir, "other-dead01", NULL);
    ck_assert_int_eq(setenv("TMPDIR", dir, 1), 0);
    xf_graph g;
    wide_graph(&g, 0);
    xf_error err;
    ck_assert_msg(xf_target_share_weights(t, &g, &err) == XF_OK, "%s", err.msg);
    ck_assert(!is_dir(dir, "rlflow-target-dead01"));
    ck_assert(is_dir(dir, "rlflow-target-live01"));
    ck_assert(is_dir(dir, "rlflow-target-host01"));
    ck_assert(is_dir(dir, "rlflow-target-none01"));
    ck_assert(is_dir(dir, "other-dead01"));
    char cmd[4400], got[512] = "";
    snprintf(cmd, sizeof cmd,
             "cat %s/rlflow-target-*/owner | grep -v elsewhere.invalid | sort -u | tr '\\n' ';'",
             dir);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    if (!fgets(got, sizeof got, p)) got[0] = '\0';
    pclose(p);
    snprintf(owner, sizeof owner, "%ld %s;", (long)getpid(), host);
    ck_assert_str_eq(got, owner); /* the live fake's and the target's own: this process */
    xf_target_close(t);
    xf_test_system("ls %s | grep -c rlflow-target- > %s/count", dir, dir);
    snprintf(cmd, sizeof cmd, "%s/count", dir);
    FILE *c = fopen(cmd, "r");
    int left = -1;
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(fscanf(c, "%d", &left), 1);
    fclose(c);
    ck_assert_int_eq(left, 3); /* live, other host, no owner: the target's own is gone */
    unsetenv("TMPDIR");
    xf_graph_free(&g);
}
END_TEST

/* What the written callback of a race sees. */
typedef struct dropped {
    xf_graph *g;
    int calls;
} dropped;

/* Frees g's own constants, as the arbiter does once onnxruntime has them
 * in its files. */
static void drop_own(void *ctx)
{
    dropped *d = ctx;
    d->calls++;
    for (int v = 0; v < d->g->n_values; v++) {
        xf_value *c = &d->g->values[v];
        if (c->kind == XF_VALUE_CONST && !c->borrowed && c->data) {
            xf_free(c->data);
            c->data = NULL;
        }
    }
}

/* A candidate joining a race that shares the input's weights is written
 * for onnxruntime first, then `written` is called (once), then its session
 * is made: the candidate's own constants may be freed there (it reads them
 * from its files), the shared ones stay, and its outputs are the input's
 * (a copy of the input's bias of its own, equal to it, freed before the
 * session exists). */
START_TEST(a_candidate_own_constants_may_go_once_written)
{
    xf_target *t = open_or_null(1);
    if (!t) XF_SKIP("onnxruntime not installed (tools/setup.sh)");
    xf_graph g, cand;
    xf_graph_init(&g);
    int x = xf_test_input(&g, "x", 2, (int64_t[]){8, 64});
    int w = xf_test_weight(&g, "w", 2, (int64_t[]){64, 64}, 5);
    int b = xf_test_weight(&g, "b", 2, (int64_t[]){8, 64}, 6);
    int y = xf_test_op2(&g, XF_OP_MATMUL, NULL, x, w);
    xf_test_out(&g, xf_test_op2(&g, XF_OP_ADD, NULL, y, b));
    xf_error err;
    ck_assert_msg(xf_target_share_weights(t, &g, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(xf_graph_clone_shared(&g, &cand, &err), XF_OK);
    xf_value *cb = &cand.values[b];
    size_t bytes = 8 * 64 * sizeof(float);
    void *own = xf_malloc(bytes);
    ck_assert_ptr_nonnull(own);
    memcpy(own, g.values[b].data, bytes);
    cb->data = own;
    cb->borrowed = 0;
    xf_target_timing_options o = {.round_ms = 2, .warmup_ms = 5};
    xf_target_race *r = NULL;
    ck_assert_msg(xf_target_race_open(t, &g, NULL, 1, &o, &r, &err) == XF_OK, "%s", err.msg);
    dropped d = {&cand, 0};
    int slot = -1;
    ck_assert_msg(xf_target_race_add_then(r, NULL, &cand, drop_own, &d, &slot, &err) == XF_OK,
                  "%s", err.msg);
    ck_assert_int_eq(d.calls, 1);
    ck_assert_ptr_null(cb->data);                   /* freed before the session */
    ck_assert_ptr_eq(cand.values[w].data, g.values[w].data); /* the shared one stays */
    double rel = -1;
    ck_assert_int_eq(xf_target_race_diff(r, slot, &rel, NULL, &err), XF_OK);
    ck_assert_msg(rel == 0, "the candidate differs by %g", rel);
    ck_assert_int_eq(xf_target_race_round(r, &err), XF_OK);
    xf_target_race_free(r);
    xf_target_unshare(t);
    xf_graph_free(&cand);
    xf_graph_free(&g);
    xf_target_close(t);
}
END_TEST

/* Only weights (MatMul's B, Conv's W, ...) reach onnxruntime as rlflow's
 * buffers: its optimisers may rewrite any other initializer in place under
 * its name, which a buffer handed in by that name overrides. vit_tiny's
 * position table [1,197,192] did so, and the model failed to run
 * ("broadcast an axis by a dimension other than 1. 192 by 197"). The model
 * loaded sharing the weights computes what a deep copy computes. */
START_TEST(shared_weights_are_only_what_onnxruntime_reads_as_it_is)
{
    const char *dir = xf_test_models_dir();
    if (!dir) XF_SKIP("shared models not found (XF_SHARED_DIR)");
    char path[4096];
    snprintf(path, sizeof path, "%s/vit_tiny/model.onnx", dir);
    FILE *f = fopen(path, "rb");
    if (!f) XF_SKIP("%s not found", path);
    fclose(f);
    xf_target *t = open_or_null(1);
    if (!t) XF_SKIP("onnxruntime not installed (tools/setup.sh)");
    xf_graph g, cand, copy;
    xf_error err;
    ck_assert_msg(xf_onnx_load(path, NULL, &g, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_target_share_weights(t, &g, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(xf_graph_clone_shared(&g, &cand, &err), XF_OK);
    ck_assert_int_eq(xf_graph_clone(&g, &copy, &err), XF_OK);
    xf_target_model *m[2] = {NULL, NULL};
    xf_tensor out[2];
    const xf_graph *models[2] = {&cand, &copy};
    for (int k = 0; k < 2; k++) {
        ck_assert_msg(xf_target_model_load(t, models[k], 3, &m[k], &err) == XF_OK, "%s",
                      err.msg);
        ck_assert_msg(xf_target_model_run(m[k], &err) == XF_OK, "model %d: %s", k, err.msg);
        ck_assert_int_eq(xf_target_model_outputs(m[k], &out[k], &err), XF_OK);
    }
    ck_assert(xf_tensor_close(&out[0], &out[1], 1e-5, 1e-5));
    for (int k = 0; k < 2; k++) {
        xf_tensor_free(&out[k]);
        xf_target_model_free(m[k]);
    }
    xf_target_close(t);
    xf_graph_free(&cand);
    xf_graph_free(&copy);
    xf_graph_free(&g);
}
END_TEST

/* A race keeps the reference and its self check loaded while candidates
 * join and leave: a freed slot is taken by the next one, each candidate's
 * rounds count from when it joined, its outputs are compared with the
 * reference's without another run, and its timing is paired with the
 * self check over its own rounds. */
START_TEST(a_race_times_candidates_that_join_and_leave)
{
    xf_target *t = open_or_null(1);
    if (!t) XF_SKIP("onnxruntime not installed (tools/setup.sh)");
    xf_graph g, same, other;
    wide_graph(&g, 0);
    wide_graph(&same, 0);
    wide_graph(&other, 1.0f);
    xf_target_timing_options o = {.round_ms = 2, .warmup_ms = 5};
    xf_target_race *r = NULL;
    xf_error err;
    ck_assert_msg(xf_target_race_open(t, &g, NULL, 1, &o, &r, &err) == XF_OK, "%s", err.msg);
    int a = -1, b = -1, c = -1;
    ck_assert_msg(xf_target_race_add(r, NULL, &same, &a, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(a, 2); /* 0: the reference, 1: its self check */
    for (int k = 0; k < 3; k++) ck_assert_int_eq(xf_target_race_round(r, &err), XF_OK);
    ck_assert_msg(xf_target_race_add(r, NULL, &other, &b, &err) == XF_OK, "%s", err.msg);
    for (int k = 0; k < 2; k++) ck_assert_int_eq(xf_target_race_round(r, &err), XF_OK);
    ck_assert_int_eq(xf_target_race_rounds(r, a), 5);
    ck_assert_int_eq(xf_target_race_rounds(r, b), 2);
    ck_assert_int_eq(xf_target_race_rounds(r, 0), 5);
    double rel = -1;
    ck_assert_int_eq(xf_target_race_diff(r, a, &rel, NULL, &err), XF_OK);
    ck_assert(rel == 0);
    ck_assert_int_eq(xf_target_race_diff(r, b, &rel, NULL, &err), XF_OK);
    ck_assert(rel > 0.01);
    xf_target_timing tb, self;
    double ref_ms = 0;
    ck_assert_int_eq(xf_target_race_timing(r, b, &tb, &self, &ref_ms, &err), XF_OK);
    ck_assert(tb.runs >= 2 && self.runs >= 2 && ref_ms > 0 && tb.ratio > 0);
    ck_assert(xf_target_race_round_ms(r) > 0);
    xf_target_race_drop(r, a);
    ck_assert_int_eq(xf_target_race_rounds(r, a), 0);
    ck_assert_msg(xf_target_race_add(r, NULL, &same, &c, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(c, a); /* the freed slot */
    ck_assert_int_eq(xf_target_race_round(r, &err), XF_OK);
    ck_assert_int_eq(xf_target_race_rounds(r, c), 1);
    ck_assert_int_eq(xf_target_race_timing(r, 7, &tb, NULL, NULL, &err), XF_ERR_INVALID);
    xf_target_race_free(r);
    xf_graph_free(&g);
    xf_graph_free(&same);
    xf_graph_free(&other);
    xf_target_close(t);
}
END_TEST

START_TEST(xfonnx_time_prints_ratios_and_the_self_check)
{
    xf_target *t = open_or_null(1);
    if (!t) XF_SKIP("onnxruntime not installed (tools/setup.sh)");
    xf_target_close(t);
    xf_graph g;
    small_graph(&g);
    char model[4096], out[4096];
    snprintf(model, sizeof model, "%s", xf_test_tmp("small.onnx"));
    snprintf(out, sizeof out, "%s", xf_test_tmp("time.txt"));
    xf_error err;
    ck_assert_msg(xf_onnx_save(&g, model, &err) == XF_OK, "%s", err.msg);
    const char *xfonnx = xf_test_tool("xfonnx");
    ck_assert_int_eq(xf_test_system("%s time %s %s --threads 1 --rounds 5 --reps 3 > %s", xfonnx,
                                    model, model, out), 0);
    char *text = xf_test_read_file(out, NULL);
    xf_test_expect_contains(text, "target: onnxruntime 1.");
    xf_test_expect_contains(text, "1 thread, optimisations all");
    xf_test_expect_contains(text, "(A again: self check)");
    xf_test_expect_contains(text, " 15, "); /* 5 rounds of 3 runs */
    free(text);
    ck_assert_int_eq(xf_test_system("%s time %s /nonexistent.onnx 2> %s", xfonnx, model, out), 2);
    ck_assert_int_eq(xf_test_system("%s time %s --opt fast 2> %s", xfonnx, model, out), 2);
    xf_graph_free(&g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("target");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, wrong_library_says_what_was_tried_and_how_to_install);
    tcase_add_test(t, verdict_asks_the_interval_to_clear_1_and_the_self_check);
    tcase_add_test(t, broken_libraries_are_refused_with_a_message);
    tcase_add_test(t, identity_names_version_threads_and_level);
    tcase_add_loop_test(t, outputs_equal_the_interpreter, 0, 2);
    tcase_add_test(t, a_model_onnxruntime_refuses_gives_its_message);
    tcase_add_test(t, the_same_model_twice_is_equal_within_the_noise);
    tcase_add_test(t, compare_refuses_models_with_other_inputs);
    tcase_add_test(t, xfonnx_time_prints_ratios_and_the_self_check);
    tcase_add_test(t, shared_weights_reach_onnxruntime_without_a_copy);
    tcase_add_test(t, stale_scratch_directories_are_swept);
    tcase_add_test(t, a_candidate_own_constants_may_go_once_written);
    tcase_add_test(t, shared_weights_are_only_what_onnxruntime_reads_as_it_is);
    tcase_add_test(t, a_race_times_candidates_that_join_and_leave);
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
