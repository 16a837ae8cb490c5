/*
 * test_oom.c — out-of-memory tests in the SQLite style: through the ir
 * allocation hook (xf_set_allocator), an operation is first run once to
 * count its allocations, then once per allocation with exactly that one
 * failing (N = 1, 2, ... up to the count). Every run with a failure must
 * return XF_ERR_NOMEM (status and xf_error code), leave its outputs in
 * their documented state, and free everything it allocated: the hook
 * counts live blocks, and the sanitizer pass of tools/test.sh adds ASan's
 * leak and memory checks. Operations: ONNX import of a model this suite
 * exports itself and of a real one from ../shared/models (XF_SKIP, or a
 * skipped part, when absent), ONNX export and a reference-interpreter run of
 * both, the sizes chosen for a model's symbolic dims (the size search), its
 * dims described (probes) and the checked writer's session at three sizes, writing rules to a rules database and reading them back, a writer's
 * whole session on an existing database (the open migrating the schema or
 * marking a dead run, runs, a rule batch, a verdict batch, statuses: after
 * each failure the file must pass SQLite's checks with every batch and the
 * migration all or nothing; walked again with SQLite's own allocations
 * failing, outside the regions SQLite itself declares benign), graph
 * clone and clone_shared, the fused regions of a graph (partition and
 * extraction), the agent's rule-set load, the preparation of a model
 * with a class-token head (row narrowing) and its unbatched layout, an
 * agent environment
 * with a short greedy, TASO and exhaustive search over it, the derivation search of a
 * rule by rewriting and the derive pass over a database (search, replay,
 * store), a small enumeration,
 * pruning its candidates, xfergen's whole run on two threads (enumeration,
 * pruning, the write), the target's sessions with the input's weights
 * shared, its race, and the arbiter (candidates dropped on their outputs
 * and as duplicates), the call that optimises a model file
 * (xf_optimize_file: load, search, outcome, check, checked writer), one
 * agent trained over two models and loaded on one (xf_train_agent, --load), the
 * pages of its report, and the verifier: creating one, the axiomatic
 * proof and the bounded element-wise check of three small rules (one valid
 * by normal forms, one the solver must decide, one refuted with a
 * counterexample); Z3's own allocations are not hooked, ours around it
 * are. Each prints how many allocation points it has.
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent_fixture.h"
#include "costmodel/costmodel.h"
#include "onnx.pb-c.h"
#include "derive/derive.h"
#include "enumerate/enumerate.h"
#include "optimize/optimize.h"
#include "pages/pages.h"
#include "prune/prune.h"
#include "rulesdb/rulesdb.h"
#include "target/target.h"
#include "testutil.h"
#include "verify/verify.h"

/* ------------------------------------------------------------ the hook */

/* Atomic counts: pruning on threads allocates from several at once (the
 * total is still the same on every run). */
typedef struct oom {
    _Atomic long n; /* allocations so far */
    long fail_at;   /* the one that returns NULL (0: none) */
    _Atomic int failed; /* it was reached */
    _Atomic long live;  /* blocks allocated and not yet freed */
} oom;

static void *oom_malloc(void *user, size_t size)
{
    oom *o = user;
    if (++o->n == o->fail_at) {
        o->failed = 1;
        return NULL;
    }
    void *p = malloc(size);
    if (p) o->live++;
    return p;
}

static void *oom_realloc(void *user, void *p, size_t size)
{
    oom *o = user;
    if (++o->n == o->fail_at) {
        o->failed = 1;
        return NULL;
    }
    void *q = realloc(p, size ? size : 1); /* never realloc's free-on-zero */
    if (q && !p) o->live++;
    return q;
}

static void oom_free(void *user, void *p)
{
    oom *o = user;
    if (p) o->live--;
    free(p);
}

/* An operation under test: runs once and, on success, frees what it made;
 * on failure it checks its outputs' documented state and cleans up. */
typedef xf_status (*oom_op)(void *ctx, xf_error *err);

/* ------------------------------------------------ SQLite's own allocations */

/* While sqlite_oom is set, SQLite's allocations go through the same count
 * (sqlite_hook installs these methods): the rules database must turn
 * SQLITE_NOMEM into XF_ERR_NOMEM as it does our own. They are not counted
 * as live blocks: SQLite keeps caches of its own past a connection's close
 * (ASan's leak check covers them). Each block carries its size in front. */
static oom *sqlite_oom;
/* Inside SQLite's benign regions (its page-cache bulk allocation, say) a
 * failure is expected to be absorbed by design: those allocations are
 * neither counted nor failed. */
static int sqlite_benign;

static void benign_begin(void)
{
    sqlite_benign++;
}

static void benign_end(void)
{
    sqlite_benign--;
}

static void *sq_malloc(int n)
{
    if (sqlite_oom && !sqlite_benign && ++sqlite_oom->n == sqlite_oom->fail_at) {
        sqlite_oom->failed = 1;
        return NULL;
    }
    int64_t *p = malloc((size_t)n + 16);
    if (!p) return NULL;
    p[0] = n;
    return p + 2;
}

static void sq_free(void *p)
{
    if (p) free((int64_t *)p - 2);
}

static int sq_size(void *p)
{
    return p ? (int)((int64_t *)p)[-2] : 0;
}

static void *sq_realloc(void *p, int n)
{
    void *q = sq_malloc(n);
    if (q && p) memcpy(q, p, (size_t)(sq_size(p) < n ? sq_size(p) : n));
    if (q) sq_free(p);
    return q;
}

static int sq_roundup(int n)
{
    return (n + 7) & ~7;
}

static int sq_init(void *unused)
{
    (void)unused;
    return SQLITE_OK;
}

static void sq_shutdown(void *unused)
{
    (void)unused;
}

/* Installs (on = 1) or removes the counting methods; SQLite must have no
 * open connection. Lookaside is off so that every allocation is one. */
static void sqlite_hook(int on)
{
    static sqlite3_mem_methods orig;
    static const sqlite3_mem_methods mine = {sq_malloc, sq_free,    sq_realloc,  sq_size,
                                             sq_roundup, sq_init, sq_shutdown, NULL};
    ck_assert_int_eq(sqlite3_shutdown(), SQLITE_OK);
    if (on) {
        ck_assert_int_eq(sqlite3_config(SQLITE_CONFIG_GETMALLOC, &orig), SQLITE_OK);
        ck_assert_int_eq(sqlite3_config(SQLITE_CONFIG_MALLOC, &mine), SQLITE_OK);
        ck_assert_int_eq(sqlite3_config(SQLITE_CONFIG_LOOKASIDE, 0, 0), SQLITE_OK);
        sqlite3_test_control(SQLITE_TESTCTRL_BENIGN_MALLOC_HOOKS, benign_begin, benign_end);
    } else {
        sqlite3_test_control(SQLITE_TESTCTRL_BENIGN_MALLOC_HOOKS, NULL, NULL);
        ck_assert_int_eq(sqlite3_config(SQLITE_CONFIG_MALLOC, &orig), SQLITE_OK);
    }
    ck_assert_int_eq(sqlite3_initialize(), SQLITE_OK);
}

static int sqlite_counted; /* run_with counts SQLite's allocations too */

static xf_status run_with(oom *o, oom_op op, void *ctx, xf_error *err)
{
    xf_allocator a = {oom_malloc, oom_realloc, oom_free, o};
    xf_error_clear(err);
    xf_set_allocator(&a);
    if (sqlite_counted) sqlite_oom = o;
    xf_status s = op(ctx, err);
    sqlite_oom = NULL;
    xf_set_allocator(NULL);
    return s;
}

/* Fails allocation 1, 1 + stride, ... of op (stride 1: every one); returns
 * how many allocations one successful run makes. */
static long oom_walk(const char *what, oom_op op, void *ctx, long stride)
{
    xf_error err;
    double t0 = xf_clock_now();
    oom o = {0, 0, 0, 0};
    xf_status s = run_with(&o, op, ctx, &err);
    ck_assert_msg(s == XF_OK, "%s without failures: %s", what, err.msg);
    ck_assert_msg(o.live == 0, "%s without failures leaks %ld blocks", what, o.live);
    long total = o.n, bad = 0;
    for (long n = 1; n <= total; n += stride) {
        o = (oom){0, n, 0, 0};
        s = run_with(&o, op, ctx, &err);
        const char *why = NULL;
        if (!o.failed)
            why = "the failing allocation was never reached (not deterministic)";
        else if (s != XF_ERR_NOMEM)
            why = s == XF_OK ? "the failure was swallowed" : "wrong status";
        else if (err.code != XF_ERR_NOMEM)
            why = "xf_error code is not XF_ERR_NOMEM";
        else if (o.live != 0)
            why = "blocks leaked";
        if (!why) continue;
        if (bad++ < 20)
            fprintf(stderr, "oom: %s: allocation %ld of %ld: %s (status %s, %ld live): %s\n",
                    what, n, total, why, xf_status_name(s), o.live, err.msg);
    }
    ck_assert_msg(bad == 0, "%s: %ld of the injected failures were not clean (see stderr)", what,
                  bad);
    double secs = xf_clock_now() - t0;
    if (stride == 1)
        printf("oom: %s: %ld allocation points, all failed cleanly (%.1f s)\n", what, total, secs);
    else
        printf("oom: %s: %ld allocation points, sampled: every %ld-th failed, all cleanly"
               " (%.1f s)\n",
               what, total, stride, secs);
    fflush(stdout);
    return total;
}

/* ------------------------------------------------------------ ONNX import */

static xf_status op_onnx_load(void *ctx, xf_error *err)
{
    xf_graph g;
    xf_status s = xf_onnx_load(ctx, NULL, &g, err);
    if (s != XF_OK)
        ck_assert_msg(g.n_nodes == 0 && g.n_values == 0 && !g.nodes && !g.values,
                      "a failed import leaves a non-empty graph");
    xf_graph_free(&g);
    return s;
}

/* conv -> relu -> conv, plus the relu (residual add), a transpose and a
 * matmul against a weight: initializers, params and several op kinds. */
static void build_small(xf_graph *g)
{
    xf_graph_init(g);
    int x = xf_test_input(g, "x", 4, (const int64_t[]){1, 3, 8, 8});
    int w1 = xf_test_weight(g, "w1", 4, (const int64_t[]){4, 3, 3, 3}, 1);
    int w2 = xf_test_weight(g, "w2", 4, (const int64_t[]){4, 4, 3, 3}, 2);
    int m = xf_test_weight(g, "m", 2, (const int64_t[]){8, 5}, 3);
    xf_params conv = xf_fx_conv3x3(XF_ACT_NONE);
    int r = xf_test_op2(g, XF_OP_RELU, NULL, xf_test_op2(g, XF_OP_CONV, &conv, x, w1), -1);
    int s = xf_test_op2(g, XF_OP_ADD, NULL, xf_test_op2(g, XF_OP_CONV, &conv, r, w2), r);
    xf_test_out(g, xf_test_op2(g, XF_OP_MATMUL, NULL, s, m));
}

START_TEST(onnx_import_small)
{
    xf_graph g;
    build_small(&g);
    xf_error err;
    char path[4096];
    snprintf(path, sizeof path, "%s", xf_test_tmp("small.onnx"));
    ck_assert_msg(xf_onnx_save(&g, path, &err) == XF_OK, "%s", err.msg);
    xf_graph_free(&g);
    oom_walk("onnx import small (exported here)", op_onnx_load, path, 1);
}
END_TEST

/* Stride for walks over a real model: every allocation normally; under the
 * sanitizers (XF_SANITIZED=1, set by tools/test.sh) every stride-th, which
 * keeps the suite within a minute there. */
static long real_stride(long stride)
{
    const char *s = getenv("XF_SANITIZED");
    return s && strcmp(s, "1") == 0 ? stride : 1;
}

/* Path of ../shared/models/squeezenet1_1/model.onnx into path, or 0 after
 * recording a skipped part for `what` when the shared models are absent. */
static int squeezenet_path(const char *what, char *path, size_t n)
{
    const char *models = xf_test_models_dir();
    if (!models) {
        xf_test_skip_part("%s squeezenet1_1: ../shared/models not found (XF_SHARED_DIR)", what);
        return 0;
    }
    snprintf(path, n, "%s/squeezenet1_1/model.onnx", models);
    return 1;
}

START_TEST(onnx_import_squeezenet)
{
    char path[4096];
    if (!xf_test_models_dir()) XF_SKIP("../shared/models not found (XF_SHARED_DIR)");
    if (squeezenet_path("onnx import", path, sizeof path))
        oom_walk("onnx import squeezenet1_1", op_onnx_load, path, real_stride(7));
}
END_TEST

/* ------------------------------------------------------------ ONNX export */

static xf_status op_onnx_save(void *ctx, xf_error *err)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    xf_status s = xf_onnx_save_buffer(ctx, &buf, &len, err);
    if (s != XF_OK) ck_assert_msg(buf == NULL, "a failed export leaves *buf set");
    xf_free(buf);
    return s;
}

START_TEST(onnx_export)
{
    xf_graph g;
    build_small(&g);
    oom_walk("onnx export small", op_onnx_save, &g, 1);
    xf_graph_free(&g);
    char path[4096];
    if (!squeezenet_path("onnx export", path, sizeof path)) return;
    xf_error err;
    ck_assert_msg(xf_onnx_load(path, NULL, &g, &err) == XF_OK, "%s", err.msg);
    oom_walk("onnx export squeezenet1_1", op_onnx_save, &g, 1);
    xf_graph_free(&g);
}
END_TEST

/* ---------------------------------------------------------- symbolic dims */

/* build_small written to `name` with its input's batch, height and width
 * symbolic (N, H, W): N and H follow through every op, W cannot move (the
 * matmul's weight fixes it), so it is written fixed. */
static const char *symbolic_small(const char *name)
{
    xf_graph g;
    build_small(&g);
    uint8_t *buf = NULL;
    size_t len = 0;
    xf_error err;
    ck_assert_msg(xf_onnx_save_buffer(&g, &buf, &len, &err) == XF_OK, "%s", err.msg);
    xf_graph_free(&g);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, buf);
    ck_assert_ptr_nonnull(mp);
    xf_free(buf);
    static char names[3][2] = {"N", "H", "W"};
    static const int axes[3] = {0, 2, 3};
    Onnx__TensorShapeProto *sh = mp->graph->input[0]->type->tensor_type->shape;
    for (int i = 0; i < 3; i++) {
        sh->dim[axes[i]]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
        sh->dim[axes[i]]->dim_param = names[i];
    }
    /* value_info and the output's shape are inferred again at each size */
    size_t n_vi = mp->graph->n_value_info;
    mp->graph->n_value_info = 0;
    Onnx__TensorShapeProto *out_shape = mp->graph->output[0]->type->tensor_type->shape;
    mp->graph->output[0]->type->tensor_type->shape = NULL;
    len = onnx__model_proto__get_packed_size(mp);
    uint8_t *out = malloc(len);
    ck_assert_ptr_nonnull(out);
    onnx__model_proto__pack(mp, out);
    const char *path = xf_test_tmp(name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(out, 1, len, f), len);
    fclose(f);
    free(out);
    /* put back what protobuf-c's free expects: its own value_info and
     * output shape, no static names */
    for (int i = 0; i < 3; i++) sh->dim[axes[i]]->dim_param = NULL;
    mp->graph->n_value_info = n_vi;
    mp->graph->output[0]->type->tensor_type->shape = out_shape;
    onnx__model_proto__free_unpacked(mp, NULL);
    return path;
}

static xf_status op_sizes_choose(void *ctx, xf_error *err)
{
    xf_onnx_sizes *s = NULL;
    xf_status st = xf_onnx_sizes_choose(ctx, NULL, NULL, &s, err);
    if (st != XF_OK) ck_assert_msg(s == NULL, "a failed choice leaves *out set");
    xf_onnx_sizes_free(s);
    return st;
}

/* Every size given: N=2, H=8, W=8. */
static xf_onnx_options small_sizes(void)
{
    static const char *names[3] = {"N", "H", "W"};
    static const int64_t values[3] = {2, 8, 8};
    xf_onnx_options o = xf_onnx_default_options();
    o.n_dim_overrides = 3;
    o.dim_names = names;
    o.dim_values = values;
    return o;
}

static xf_status op_dynamic_open(void *ctx, xf_error *err)
{
    xf_onnx_options o = small_sizes();
    xf_onnx_dynamic *d = NULL;
    xf_status st = xf_onnx_dynamic_open_file(ctx, &o, &d, err);
    if (st != XF_OK) ck_assert_msg(d == NULL, "a failed open leaves *out set");
    xf_onnx_dynamic_free(d);
    return st;
}

/* The checked writer's whole session: the model imported, its dims
 * described, written keeping N and H after the checks at three sizes. */
static xf_status op_write_checked(void *ctx, xf_error *err)
{
    const char *path = ctx;
    xf_onnx_options o = small_sizes();
    xf_graph g;
    xf_onnx_dynamic *d = NULL;
    xf_status st = xf_onnx_load(path, &o, &g, err);
    if (st != XF_OK) return st;
    st = xf_onnx_dynamic_open_file(path, &o, &d, err);
    char out[4096];
    snprintf(out, sizeof out, "%s.checked", path);
    xf_onnx_check_options wo = xf_onnx_default_check_options();
    wo.model = path;
    wo.output = out;
    wo.same_graph = 1;
    xf_onnx_checked res;
    if (st == XF_OK) st = xf_onnx_write_checked(&wo, d, &g, &g, &res, err);
    if (st == XF_OK)
        ck_assert_msg(res.wrote == XF_ONNX_WROTE_GRAPH && res.n_points == 3, "wrote %d, %d points",
                      (int)res.wrote, res.n_points);
    xf_onnx_dynamic_free(d);
    xf_graph_free(&g);
    return st;
}

START_TEST(onnx_symbolic_dims)
{
    const char *path = symbolic_small("small_sym.onnx");
    xf_log_level lvl = xf_log_get_level();
    xf_log_set_level(XF_LOG_ERROR); /* W written fixed: warned about in every run */
    oom_walk("sizes of symbolic dims (size search)", op_sizes_choose, (void *)path, 1);
    oom_walk("symbolic dims described (probes)", op_dynamic_open, (void *)path, 1);
    oom_walk("checked writer (three sizes)", op_write_checked, (void *)path, real_stride(5));
    xf_log_set_level(lvl);
}
END_TEST

/* ------------------------------------------------------------ interpreter */

/* Random inputs, then the whole graph run by the reference interpreter. */
static xf_status op_interp(void *ctx, xf_error *err)
{
    const xf_graph *g = ctx;
    xf_tensor *in = calloc((size_t)g->n_inputs + 1, sizeof *in);
    xf_tensor *out = calloc((size_t)g->n_outputs + 1, sizeof *out);
    ck_assert_ptr_nonnull(in);
    ck_assert_ptr_nonnull(out);
    xf_status s = xf_graph_random_inputs(g, 1, in, err);
    if (s == XF_OK) s = xf_interp_run(g, in, g->n_inputs, out, err);
    for (int i = 0; i < g->n_inputs; i++) xf_tensor_free(&in[i]);
    for (int i = 0; i < g->n_outputs; i++) {
        if (s != XF_OK) ck_assert_msg(out[i].data == NULL, "a failed run leaves output %d", i);
        xf_tensor_free(&out[i]);
    }
    free(in);
    free(out);
    return s;
}

START_TEST(interp_run)
{
    xf_graph g;
    build_small(&g);
    oom_walk("interpreter run small", op_interp, &g, 1);
    xf_graph_free(&g);
    char path[4096];
    if (!squeezenet_path("interpreter run", path, sizeof path)) return;
    xf_error err;
    ck_assert_msg(xf_onnx_load(path, NULL, &g, &err) == XF_OK, "%s", err.msg);
    oom_walk("interpreter run squeezenet1_1", op_interp, &g, real_stride(13));
    xf_graph_free(&g);
}
END_TEST

/* ---------------------------------------------------------- graph clone */

typedef struct clone_ctx {
    const xf_graph *src;
    int shared;
} clone_ctx;

static xf_status op_clone(void *ctx, xf_error *err)
{
    const clone_ctx *c = ctx;
    xf_graph dst;
    xf_status s = c->shared ? xf_graph_clone_shared(c->src, &dst, err)
                            : xf_graph_clone(c->src, &dst, err);
    if (s != XF_OK)
        ck_assert_msg(dst.n_nodes == 0 && dst.n_values == 0 && !dst.block,
                      "a failed clone leaves a non-empty graph");
    xf_graph_free(&dst);
    return s;
}

START_TEST(graph_clone)
{
    xf_graph g;
    build_small(&g);
    clone_ctx c = {&g, 0};
    oom_walk("graph clone", op_clone, &c, 1);
    c.shared = 1;
    oom_walk("graph clone_shared", op_clone, &c, 1);
    xf_graph_free(&g);
}
END_TEST

/* The fused regions of the search fixture's graph: index, partition, and
 * every region extracted as a graph (a failed extraction leaves it empty). */
static xf_status op_regions(void *ctx, xf_error *err)
{
    const xf_graph *g = ctx;
    xf_graph_index *ix = NULL;
    int *region_of = xf_malloc((size_t)g->n_nodes * sizeof(int));
    int *order = xf_malloc((size_t)g->n_nodes * sizeof(int));
    uint8_t *escapes = xf_malloc((size_t)g->n_values);
    int n = 0;
    xf_status s = region_of && order && escapes
                      ? xf_graph_index_build(g, &ix, err)
                      : XF_FAIL(err, XF_ERR_NOMEM, "out of memory in the test");
    if (!s) s = xf_regions_partition(g, ix, 24, region_of, order, &n, err);
    if (!s) xf_regions_escapes(g, region_of, escapes);
    for (int r = 0; r < n && !s; r++) {
        xf_graph rg;
        xf_graph_init(&rg);
        s = xf_regions_extract(g, ix, region_of, order, escapes, r, &rg, err);
        if (s != XF_OK)
            ck_assert_msg(rg.n_nodes == 0 && rg.n_values == 0,
                          "a failed extraction leaves a non-empty graph");
        xf_graph_free(&rg);
    }
    xf_graph_index_free(ix);
    xf_free(region_of);
    xf_free(order);
    xf_free(escapes);
    return s;
}

START_TEST(fused_regions)
{
    xf_graph g;
    xf_fx_search_graph(&g);
    oom_walk("fused regions", op_regions, &g, 1);
    xf_graph_free(&g);
}
END_TEST

/* ------------------------------------------------ rules DB and rule sets */

typedef struct rules_ctx {
    char path[4096];
    xf_rule rules[2]; /* the agent fixture's two rules */
} rules_ctx;

/* The rules, proved, in a fresh database. */
static xf_status op_rules_write(void *ctx, xf_error *err)
{
    const rules_ctx *c = ctx;
    xf_test_remove_db(c->path);
    xf_rulesdb *db = NULL;
    xf_status s = xf_rulesdb_open(c->path, XF_RULESDB_CREATE, &db, err);
    if (s != XF_OK) {
        ck_assert_msg(db == NULL, "a failed open leaves *out set");
        return s;
    }
    xf_rulesdb_rule_meta proved = {XF_RULE_PROVED, 0, NULL, 0};
    s = xf_rulesdb_add_rules(db, c->rules, 2, &proved, NULL, NULL, err);
    xf_rulesdb_close(db);
    return s;
}

static void rules_init(rules_ctx *c, const char *name)
{
    snprintf(c->path, sizeof c->path, "%s", xf_test_tmp(name));
    xf_fx_rule_conv_relu(&c->rules[0]);
    xf_fx_rule_matmul_merge(&c->rules[1]);
}

static void rules_free(rules_ctx *c)
{
    xf_rule_free(&c->rules[0]);
    xf_rule_free(&c->rules[1]);
}

/* Writes the database without failures (walked by rulesdb_write). */
static void write_rules_db(rules_ctx *c)
{
    xf_error err;
    ck_assert_msg(op_rules_write(c, &err) == XF_OK, "%s", err.msg);
}

START_TEST(rulesdb_write)
{
    rules_ctx c;
    rules_init(&c, "write.db");
    oom_walk("rules DB write", op_rules_write, &c, 1);
    rules_free(&c);
}
END_TEST

/* Opens the database read-only and reads every rule back: its row
 * (iterator) and its graphs (load_rule). */
static xf_status op_rules_read(void *ctx, xf_error *err)
{
    xf_rulesdb *db = NULL;
    xf_status s = xf_rulesdb_open(ctx, XF_RULESDB_READONLY, &db, err);
    if (s != XF_OK) {
        ck_assert_msg(db == NULL, "a failed open leaves *out set");
        return s;
    }
    xf_rulesdb_filter f;
    memset(&f, 0, sizeof f);
    f.any_status = 1;
    xf_rulesdb_iter *it = NULL;
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    int n = 0, has = 1;
    s = xf_rulesdb_iter_begin(db, &f, &it, err);
    while (s == XF_OK && has) {
        s = xf_rulesdb_iter_next(it, &info, &has, err);
        if (s != XF_OK || !has) break;
        xf_rule r;
        s = xf_rulesdb_load_rule(db, info.id, &r, err);
        xf_rule_free(&r);
        n++;
    }
    xf_rulesdb_rule_info_free(&info);
    xf_rulesdb_iter_free(it);
    xf_rulesdb_close(db);
    if (s == XF_OK) ck_assert_int_eq(n, 2);
    return s;
}

START_TEST(rulesdb_read)
{
    rules_ctx c;
    rules_init(&c, "read.db");
    write_rules_db(&c);
    oom_walk("rules DB read", op_rules_read, c.path, 1);
    rules_free(&c);
}
END_TEST

/* The writer's whole life on an existing database: the open (with the
 * schema migration from version 1, or marking a dead run interrupted), a
 * run recorded with a stage, a batch of rules with the checkpoint that
 * covers them, a batch of verdicts, a status, the run's end. Each run starts
 * from a plain copy of the template (no allocation through the hook). */
typedef struct writer_ctx {
    char template_path[4096], path[4096];
    xf_rule rules[2];
} writer_ctx;

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    ck_assert_msg(in && out, "copying %s to %s", from, to);
    char buf[8192];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0) ck_assert_uint_eq(fwrite(buf, 1, n, out), n);
    fclose(in);
    ck_assert_int_eq(fclose(out), 0);
}

/* A failed writer left the file consistent: SQLite's own checks pass, the
 * migration is all or nothing, and so is each batch. */
static void expect_consistent(const char *path)
{
    ck_assert_int_eq(xf_test_sql_int(path, "SELECT count(*) FROM pragma_integrity_check"
                                           " WHERE integrity_check <> 'ok'"),
                     0);
    ck_assert_int_eq(xf_test_sql_int(path, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
    int64_t version = xf_test_sql_int(path, "PRAGMA user_version");
    ck_assert_msg(version >= 1 && version <= XF_RULESDB_SCHEMA_VERSION, "version %lld",
                  (long long)version);
    ck_assert_int_eq(xf_test_sql_int(path, "SELECT count(*) FROM sqlite_schema"
                                           " WHERE name = 'derivations'"),
                     version > 2);
    ck_assert_int_eq(xf_test_sql_int(path, "SELECT count(*) FROM pragma_table_info('runs')"
                                           " WHERE name = 'pid'"),
                     version > 1);
    int64_t rules = xf_test_sql_int(path, "SELECT count(*) FROM rules");
    ck_assert_msg(rules == 0 || rules == 2, "%lld rules: a half-written batch", (long long)rules);
    int64_t verdicts = xf_test_sql_int(path, "SELECT count(*) FROM rules WHERE verified_at"
                                             " IS NOT NULL");
    ck_assert_msg(verdicts == 0 || verdicts == 2, "%lld verdicts: a half-written batch",
                  (long long)verdicts);
    if (rules)
        ck_assert_int_gt(xf_test_sql_int(path, "SELECT count(*) FROM rule_ops"), 0);
}

static xf_status writer_steps(writer_ctx *c, xf_rulesdb *db, xf_error *err)
{
    xf_rulesdb_run_desc d = {"xfergen", "0.1.0", "--max-ops 2", "x:4x4", "taso", 3};
    int64_t run = 0, ids[2] = {0, 0};
    static const uint8_t checkpoint[16] = {1, 2, 3};
    xf_status s = xf_rulesdb_run_start(db, &d, &run, err);
    if (s == XF_OK) s = xf_rulesdb_run_stage(db, run, "enumerate", 0.25, 12, err);
    if (s == XF_OK) s = xf_rulesdb_begin(db, err);
    if (s == XF_OK) s = xf_rulesdb_add_rules(db, c->rules, 2, NULL, ids, NULL, err);
    if (s == XF_OK) s = xf_rulesdb_run_checkpoint(db, run, checkpoint, sizeof checkpoint, err);
    if (s == XF_OK) s = xf_rulesdb_commit(db, err);
    if (s == XF_OK) s = xf_rulesdb_begin(db, err);
    for (int i = 0; i < 2 && s == XF_OK; i++) {
        xf_rulesdb_verdict v = {XF_RULE_PROVED, 1.5, "conv-relu", "axioms: proved", NULL, 0, NULL};
        s = xf_rulesdb_set_verdict(db, ids[i], &v, err);
    }
    if (s == XF_OK) s = xf_rulesdb_commit(db, err);
    if (s == XF_OK) s = xf_rulesdb_set_status(db, ids[1], XF_RULE_PRUNED, "generality", ids[0], err);
    if (s == XF_OK) s = xf_rulesdb_run_set_state(db, run, XF_RUN_DONE, err);
    return s;
}

static xf_status op_rules_writer(void *ctx, xf_error *err)
{
    writer_ctx *c = ctx;
    xf_test_remove_db(c->path);
    copy_file(c->template_path, c->path);
    xf_rulesdb *db = NULL;
    xf_status s = xf_rulesdb_open(c->path, 0, &db, err);
    if (s == XF_OK) s = writer_steps(c, db, err);
    xf_rulesdb_close(db);
    if (s != XF_OK) expect_consistent(c->path);
    return s;
}

START_TEST(rulesdb_writer)
{
    writer_ctx c;
    xf_fx_rule_conv_relu(&c.rules[0]);
    xf_fx_rule_matmul_merge(&c.rules[1]);
    snprintf(c.path, sizeof c.path, "%s", xf_test_tmp("writer.db"));
    snprintf(c.template_path, sizeof c.template_path, "%s", xf_test_tmp("writer-template.db"));

    /* A schema version 1 file: the open migrates it. */
    xf_test_remove_db(c.template_path);
    xf_rulesdb *db = NULL;
    xf_error err;
    ck_assert_int_eq(xf_rulesdb_open(c.template_path, XF_RULESDB_CREATE, &db, &err), XF_OK);
    xf_rulesdb_close(db);
    xf_test_sql_exec(c.template_path,
                     "PRAGMA journal_mode = DELETE; ALTER TABLE runs DROP COLUMN pid;"
                     " ALTER TABLE runs DROP COLUMN host; ALTER TABLE runs DROP COLUMN proc_start;"
                     " DROP TRIGGER rules_underived; DROP TABLE derivations;"
                     " PRAGMA user_version = 1");
    oom_walk("rules DB writer (open migrating version 1)", op_rules_writer, &c, 1);

    /* A current file with a run whose process is gone: the open marks it. */
    xf_test_remove_db(c.template_path);
    ck_assert_int_eq(xf_rulesdb_open(c.template_path, XF_RULESDB_CREATE, &db, &err), XF_OK);
    xf_rulesdb_run_desc d = {"xfergen", "0.1.0", "--max-ops 1", NULL, NULL, 1};
    int64_t run;
    ck_assert_int_eq(xf_rulesdb_run_start(db, &d, &run, &err), XF_OK);
    xf_rulesdb_close(db);
    int child = xf_test_dead_pid();
    char sql[128];
    snprintf(sql, sizeof sql, "PRAGMA journal_mode = DELETE; UPDATE runs SET pid = %d",
             (int)child);
    xf_test_sql_exec(c.template_path, sql);
    oom_walk("rules DB writer (open marking a dead run)", op_rules_writer, &c, 1);
    ck_assert_int_eq(xf_test_sql_int(c.path, "SELECT state = 'interrupted' FROM runs WHERE id = 1"),
                     1);
    /* SQLite's own allocations failing, every 3rd (every one passes too,
     * in three times the time): the same guarantees. */
    sqlite_hook(1);
    sqlite_counted = 1;
    oom_walk("rules DB writer with SQLite's allocations", op_rules_writer, &c, 3);
    sqlite_counted = 0;
    sqlite_hook(0);
    xf_rule_free(&c.rules[0]);
    xf_rule_free(&c.rules[1]);
}
END_TEST

/* -------------------------------------------------------------- derive */

typedef struct derive_ctx {
    xf_rule rules[2]; /* ewadd commutativity and associativity */
    int64_t ids[2];
    xf_rule cand;     /* a reassociation that takes both, twice */
    char path[4096], template_path[4096];
} derive_ctx;

static void parse_rule(xf_rule *r, const char *src, const char *dst, int n_in)
{
    static const int64_t d22[2] = {2, 2};
    static const char *const names[4] = {"a", "b", "c", "d"};
    xf_error err;
    xf_rule_init(r);
    for (int side = 0; side < 2; side++) {
        xf_graph *g = side ? &r->dst : &r->src;
        for (int i = 0; i < n_in; i++) xf_test_input(g, names[i], 2, d22);
        ck_assert_int_eq(xf_graph_parse(g, side ? dst : src, NULL, NULL, &err), XF_OK);
    }
}

static xf_status op_derive(void *ctx, xf_error *err)
{
    derive_ctx *c = ctx;
    xf_deriver *d = NULL;
    xf_derivation dv;
    xf_status s = xf_deriver_new(c->rules, c->ids, 2, NULL, &d, err);
    if (s == XF_OK) s = xf_derive_rule(d, &c->cand, &dv, err);
    if (s == XF_OK && !dv.found) s = XF_FAIL(err, XF_ERR_INTERNAL, "not derived");
    xf_deriver_free(d);
    return s;
}

/* The derive pass over a copy of the template: search, replay, store. */
static xf_status op_derive_db(void *ctx, xf_error *err)
{
    derive_ctx *c = ctx;
    xf_test_remove_db(c->path);
    copy_file(c->template_path, c->path);
    xf_rulesdb *db = NULL;
    xf_derive_db_options o;
    xf_derive_db_options_init(&o);
    o.size = 3;
    xf_derive_tally t;
    xf_status s = xf_rulesdb_open(c->path, 0, &db, err);
    if (s == XF_OK) s = xf_derive_db(db, &o, &t, err);
    if (s == XF_OK && t.derived != 1) s = XF_FAIL(err, XF_ERR_INTERNAL, "not derived");
    xf_rulesdb_close(db);
    return s;
}

START_TEST(derive)
{
    derive_ctx c;
    parse_rule(&c.rules[0], "ewadd(a, b)", "ewadd(b, a)", 2);
    parse_rule(&c.rules[1], "ewadd(ewadd(a, b), c)", "ewadd(a, ewadd(b, c))", 3);
    parse_rule(&c.cand, "ewadd(ewadd(ewadd(a, b), c), d)", "ewadd(d, ewadd(c, ewadd(a, b)))", 4);
    c.ids[0] = 1, c.ids[1] = 2;
    oom_walk("derivation search", op_derive, &c, 1);

    snprintf(c.path, sizeof c.path, "%s", xf_test_tmp("derive.db"));
    snprintf(c.template_path, sizeof c.template_path, "%s", xf_test_tmp("derive-template.db"));
    xf_test_remove_db(c.template_path);
    xf_rulesdb *db = NULL;
    xf_error err;
    ck_assert_int_eq(xf_rulesdb_open(c.template_path, XF_RULESDB_CREATE, &db, &err), XF_OK);
    xf_rulesdb_rule_meta proved = {XF_RULE_PROVED, 0, NULL, 0};
    int64_t id;
    ck_assert_int_eq(xf_rulesdb_add_rules(db, c.rules, 2, &proved, NULL, NULL, &err), XF_OK);
    ck_assert_int_eq(xf_rulesdb_add_rule(db, &c.cand, NULL, &id, NULL, &err), XF_OK);
    xf_rulesdb_close(db);
    xf_test_sql_exec(c.template_path, "PRAGMA journal_mode = DELETE");
    oom_walk("derive pass over a database", op_derive_db, &c, 1);
    xf_rule_free(&c.rules[0]);
    xf_rule_free(&c.rules[1]);
    xf_rule_free(&c.cand);
}
END_TEST

static xf_status op_ruleset_load(void *ctx, xf_error *err)
{
    xf_ruleset_options o = xf_ruleset_options_default();
    xf_ruleset *rs = NULL;
    xf_status s = xf_ruleset_load(ctx, &o, &rs, err);
    if (s != XF_OK) ck_assert_msg(rs == NULL, "a failed load leaves *out set");
    if (s == XF_OK) ck_assert_int_eq(xf_ruleset_count(rs), 4);
    xf_ruleset_free(rs);
    return s;
}

START_TEST(ruleset_load)
{
    rules_ctx c;
    rules_init(&c, "ruleset.db");
    write_rules_db(&c);
    oom_walk("rule-set load", op_ruleset_load, c.path, 1);
    rules_free(&c);
}
END_TEST

/* ------------------------------------------------ environment and search */

typedef struct env_ctx {
    const xf_graph *model;
    xf_ruleset *rs;
    int search; /* 0: only create the environment; else this xf_search_kind + 1 */
} env_ctx;

/* An analytic cost model with its figures given, so nothing is measured. */
static xf_status open_analytic(xf_cost_model **cm, xf_error *err)
{
    xf_cost_options o = xf_cost_options_default();
    o.backend = XF_COST_ANALYTIC;
    o.cache_path = NULL;
    o.peak_gflops = 100;
    o.bandwidth_gbps = 10;
    o.kernel_overhead_us = 2;
    *cm = NULL;
    xf_status s = xf_cost_open(&o, cm, err);
    if (s != XF_OK) ck_assert_msg(*cm == NULL, "a failed xf_cost_open leaves *out set");
    return s;
}

/* Cost model, environment over the model (prepared, costed, matched,
 * hashed) and, when asked, a short search; all closed again. */
static xf_status op_env(void *ctx, xf_error *err)
{
    const env_ctx *c = ctx;
    xf_cost_model *cm = NULL;
    xf_status s = open_analytic(&cm, err);
    if (s != XF_OK) return s;
    xf_env *e = NULL;
    s = xf_env_create(c->rs, cm, c->model, NULL, &e, err);
    if (s != XF_OK) ck_assert_msg(e == NULL, "a failed xf_env_create leaves *out set");
    if (s == XF_OK && c->search) {
        xf_search_result r;
        xf_search_result_init(&r);
        xf_search_options so = xf_search_options_default();
        so.budget = 20;
        so.candidates = 3; /* the arbiter's candidates are kept too */
        s = xf_search_run(e, (xf_search_kind)(c->search - 1), &so, &r, err);
        xf_search_result_free(&r);
    }
    xf_env_free(e);
    xf_cost_close(cm);
    return s;
}

START_TEST(env_and_search)
{
    xf_graph g;
    build_small(&g);
    env_ctx c = {&g, xf_fx_rules(), 0};
    oom_walk("environment create", op_env, &c, 1);
    c.search = XF_SEARCH_GREEDY + 1;
    oom_walk("greedy search", op_env, &c, 1);
    c.search = XF_SEARCH_TASO + 1;
    oom_walk("TASO search", op_env, &c, 1);
    c.search = XF_SEARCH_EXHAUSTIVE + 1;
    oom_walk("exhaustive search", op_env, &c, 1);
    xf_ruleset_free(c.rs);
    xf_graph_free(&g);
}
END_TEST

/* The model prepared both ways a target weighs (scalings moved and kept),
 * each with its rules and environment (xf_model_search); all freed again. */
typedef struct model_search_ctx {
    const xf_graph *model;
    const char *rules;
} model_search_ctx;

static xf_status op_model_search(void *ctx, xf_error *err)
{
    const model_search_ctx *c = ctx;
    xf_cost_model *cm = NULL;
    xf_status s = open_analytic(&cm, err);
    if (s != XF_OK) return s;
    xf_model_search ms[2];
    xf_model_search_init(&ms[0]);
    xf_model_search_init(&ms[1]);
    s = xf_model_search_prepare(&ms[0], c->model, NULL, err);
    if (s == XF_OK) s = xf_model_search_rules(&ms[0], c->rules, NULL, 1, err);
    if (s != XF_OK) ck_assert_msg(ms[0].rs == NULL, "a failed load leaves its rules");
    xf_prepare_options alt;
    if (s == XF_OK) {
        ck_assert_int_eq(xf_prepare_alternative(&ms[0].prepare, &ms[0].prep, &alt), 1);
        s = xf_model_search_prepare(&ms[1], c->model, &alt, err);
        if (s == XF_OK) s = xf_model_search_rules(&ms[1], c->rules, NULL, 1, err);
    }
    for (int i = 0; i < 2 && s == XF_OK; i++) {
        s = xf_model_search_env(&ms[i], cm, NULL, err);
        if (s != XF_OK) ck_assert_msg(ms[i].env == NULL, "a failed environment is left set");
    }
    xf_model_search_free(&ms[0]);
    xf_model_search_free(&ms[1]);
    xf_cost_close(cm);
    return s;
}

/* Preparation of a class-token transformer: layer-norm fusion, scalar
 * muls and the row narrowing, which adds and merges slice nodes. */
static xf_status op_prepare(void *ctx, xf_error *err)
{
    xf_graph work;
    xf_prepare_stats ps;
    xf_status s = xf_agent_prepare(ctx, NULL, &work, &ps, err);
    if (s != XF_OK) return s;
    ck_assert_int_eq(ps.narrowed_ops, 23); /* with the layer norms' bias adds */
    xf_graph_free(&work);
    return XF_OK;
}

/* Preparation of an exported BERT: its layer norms' and GELUs' chains
 * fused (the shared chain driver, then a gelu node per chain). */
static xf_status op_prepare_fusions(void *ctx, xf_error *err)
{
    xf_graph work;
    xf_prepare_stats ps;
    xf_status s = xf_agent_prepare(ctx, NULL, &work, &ps, err);
    if (s != XF_OK) return s;
    ck_assert_int_eq(ps.fused_gelus, 1);
    ck_assert_int_eq(ps.fused_layernorms, 3);
    xf_graph_free(&work);
    return XF_OK;
}

/* The unbatched layout of the same transformer (adapters added). */
static xf_status op_unbatch(void *ctx, xf_error *err)
{
    xf_graph ub;
    int n = 0;
    xf_status s = xf_agent_unbatch(ctx, &ub, &n, err);
    if (s != XF_OK) return s;
    ck_assert_int_gt(n, 0);
    xf_graph_free(&ub);
    return XF_OK;
}

/* One copy of a tied embedding (ctx: the graph, cloned each time). On
 * failure every Gather of the clone is still consistent. */
static xf_status op_gather_tied(void *ctx, xf_error *err)
{
    xf_graph g;
    xf_status s = xf_graph_clone(ctx, &g, err);
    if (s != XF_OK) return s;
    int n = 0;
    s = xf_gather_tied(&g, &n, err);
    if (s == XF_OK) ck_assert_int_eq(n, 1);
    /* (no allocation here: the failures go on) every Gather reads its
     * table along 0 or the transpose along 1, references valid */
    for (int i = 0; i < g.n_nodes; i++) {
        const xf_node *nd = &g.nodes[i];
        for (int k = 0; k < nd->n_inputs; k++) ck_assert_int_lt(nd->inputs[k], g.n_values);
        if (nd->op != XF_OP_GATHER) continue;
        const xf_shape *t = &g.values[nd->inputs[0]].shape;
        ck_assert_int_eq(t->dims[nd->params.axis], XF_FX_TIED_V);
        ck_assert_int_eq(g.values[nd->outputs[0]].shape.dims[nd->params.axis ? 0 : 2],
                         XF_FX_TIED_H);
    }
    xf_graph_free(&g);
    return s;
}

START_TEST(gather_tied)
{
    xf_graph g;
    int e, et;
    xf_fx_tied_graph(&g, 0, &e, &et);
    oom_walk("tied embedding held once", op_gather_tied, &g, 1);
    xf_graph_free(&g);
}
END_TEST

START_TEST(prepare_narrow)
{
    xf_graph g;
    xf_fx_class_token_graph(&g, 0, 0);
    oom_walk("prepare with row narrowing", op_prepare, &g, 1);
    oom_walk("unbatched layout", op_unbatch, &g, 1);
    rules_ctx r;
    rules_init(&r, "model_search.db");
    write_rules_db(&r);
    model_search_ctx c = {&g, r.path};
    oom_walk("both preparations searched", op_model_search, &c, 1);
    rules_free(&r);
    xf_graph_free(&g);
}
END_TEST

START_TEST(prepare_fusions)
{
    xf_graph g;
    xf_test_modelzoo("bert", "--layers 1 --hidden 16 --heads 2 --seq 4", "oom_bert", &g);
    oom_walk("prepare fusing layer norms and GELUs", op_prepare_fusions, &g, 1);
    xf_graph_free(&g);
}
END_TEST

/* ------------------------------------------------ enumeration and pruning */

/* Candidates taken from the enumerator (rules owned here). */
typedef struct taken {
    xf_rule *rules;
    int n, cap;
} taken;

static xf_status take(void *user, xf_enum_candidate *c, xf_error *err)
{
    taken *t = user;
    if (!t) return XF_OK; /* left to the enumerator, which frees it */
    if (t->n == t->cap) {
        int cap = t->cap ? 2 * t->cap : 16;
        xf_rule *r = realloc(t->rules, sizeof *r * (size_t)cap);
        if (!r) return XF_FAIL(err, XF_ERR_NOMEM, "test: out of memory");
        t->rules = r;
        t->cap = cap;
    }
    t->rules[t->n++] = c->rule;
    xf_rule_init(&c->rule);
    return XF_OK;
}

/* Enumerates graphs of up to 3 matmul/ewadd over three inputs; candidates
 * go to ctx (a taken, NULL: dropped). */
static xf_status op_enumerate(void *ctx, xf_error *err)
{
    xf_enum_config c;
    xf_enum_config_init(&c);
    xf_status s = xf_enum_vocab_parse(&c, "matmul\newadd\n", "test_oom", err);
    if (s == XF_OK) s = xf_enum_inputs_parse(&c, "a:2x3,b:3x4,c:3x4", err);
    c.max_ops = 3;
    xf_enum_options o;
    xf_enum_options_init(&o);
    o.user = ctx;
    o.on_candidate = take;
    xf_enum_stats st;
    if (s == XF_OK) s = xf_enum_run(&c, &o, &st, err);
    xf_enum_config_free(&c);
    return s;
}

/* Prunes copies of the taken rules on `threads` threads. */
static xf_status prune_copies(const taken *t, int threads, xf_error *err)
{
    xf_rule *r = xf_calloc((size_t)t->n, sizeof *r);
    xf_prune_verdict *v = xf_calloc((size_t)t->n, sizeof *v);
    xf_status s = r && v ? XF_OK : XF_FAIL(err, XF_ERR_NOMEM, "test: out of memory");
    int n = 0;
    for (; s == XF_OK && n < t->n; n++) {
        xf_rule_init(&r[n]);
        s = xf_graph_clone(&t->rules[n].src, &r[n].src, err);
        if (s == XF_OK) s = xf_graph_clone(&t->rules[n].dst, &r[n].dst, err);
    }
    xf_prune_options o = xf_prune_options_default();
    o.threads = threads;
    if (s == XF_OK) s = xf_prune_run(r, (size_t)t->n, &o, v, NULL, err);
    xf_prune_verdicts_free(v, v ? (size_t)t->n : 0);
    for (int i = 0; r && i < n; i++) xf_rule_free(&r[i]);
    xf_free(r);
    xf_free(v);
    return s;
}

static xf_status op_prune(void *ctx, xf_error *err)
{
    return prune_copies(ctx, 1, err);
}

/* The same on three threads: every thread joined after any failure. */
static xf_status op_prune_threads(void *ctx, xf_error *err)
{
    return prune_copies(ctx, 3, err);
}

/* xf_prune_run_from's fetch: taken rule i fed (from any thread). */
static xf_status get_taken(void *user, size_t i, const xf_graph_sink *src,
                           const xf_graph_sink *dst, xf_error *err)
{
    const taken *t = user;
    return xf_rule_feed(&t->rules[i], src, dst, err);
}

/* The taken rules fetched on demand by three threads while the terms are
 * built: the fetching threads joined, and the slots fed ahead freed, after
 * any failure. */
static xf_status op_prune_from_threads(void *ctx, xf_error *err)
{
    const taken *t = ctx;
    xf_prune_verdict *v = xf_calloc((size_t)t->n, sizeof *v);
    if (!v) return XF_FAIL(err, XF_ERR_NOMEM, "test: out of memory");
    xf_prune_options o = xf_prune_options_default();
    o.threads = 3;
    xf_status s = xf_prune_run_from((size_t)t->n, get_taken, (void *)t, &o, v, NULL, err);
    xf_prune_verdicts_free(v, (size_t)t->n);
    xf_free(v);
    return s;
}

/* The rules op_enumerate finds, taken without failures, into *t. */
static void taken_enumerate(taken *t)
{
    *t = (taken){NULL, 0, 0};
    xf_error err;
    ck_assert_msg(op_enumerate(t, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_gt(t->n, 0);
}

static void taken_free(taken *t)
{
    for (int i = 0; i < t->n; i++) xf_rule_free(&t->rules[i]);
    free(t->rules);
}

START_TEST(enumerate_and_prune)
{
    oom_walk("enumerate", op_enumerate, NULL, 1);
    taken t;
    taken_enumerate(&t);
    oom_walk("prune", op_prune, &t, 1);
    taken_free(&t);
}
END_TEST

/* The threaded walks are a case of their own (about 2,200 and 900
 * allocation points): with the two walks above in one case it ran past its
 * time limit under the sanitizers on a loaded CI machine. */
START_TEST(prune_on_threads)
{
    taken t;
    taken_enumerate(&t);
    oom_walk("prune on three threads", op_prune_threads, &t, 1);
    oom_walk("prune fetching on three threads", op_prune_from_threads, &t, 1);
    taken_free(&t);
}
END_TEST

/* xfergen's whole run (xf_enum_generate) on two threads into a new
 * database, pruned candidates kept: the enumeration (one operator, so one
 * candidate: ewadd(a, b) => ewadd(b, a)), pruning with the rules fetched
 * on the threads, and the write with the rules' rows prepared on them. A
 * failed run leaves its database and checkpoint files; each run starts
 * without them. Each run creates a database and fsyncs a checkpoint and
 * its 65 spill files, so the walk is sampled (every 5th of some 600). */
/* A run's warning notes: removing the finished run's checkpoint files is
 * one (the rules are stored by then), out of memory included. */
static void note_warning(void *user, int warning, const char *msg)
{
    if (warning) snprintf(user, 512, "%s", msg);
}

static xf_status op_generate(void *ctx, xf_error *err)
{
    const char *db = ctx;
    char path[4200];
    static const char *const tails[] = {"", "-wal", "-shm", ".run1.ckpt", ".run1.ckpt.tmp"};
    for (int k = 0; k < 5; k++) {
        snprintf(path, sizeof path, "%s%s", db, tails[k]);
        remove(path);
    }
    for (int k = 0; k <= 64; k++) {
        snprintf(path, sizeof path, "%s.run1.ckpt.spill.%02d", db, k);
        remove(path);
    }
    snprintf(path, sizeof path, "%s.vocab", db);
    xf_enum_generate_options o;
    xf_enum_generate_options_init(&o);
    o.max_ops = 1;
    o.vocab = path;
    o.inputs = "a:3x3,b:3x3";
    o.threads = 2;
    o.out = db;
    o.version = "test";
    o.keep_pruned = 1;
    char warning[512] = "";
    o.user = warning;
    o.on_note = note_warning;
    xf_enum_generate_result res;
    xf_status s = xf_enum_generate(&o, &res, err);
    if (s == XF_OK && strstr(warning, "out of memory"))
        return XF_FAIL(err, XF_ERR_NOMEM, "a warning: %s", warning);
    ck_assert_msg(s != XF_OK || !warning[0], "unexpected warning: %s", warning);
    return s;
}

START_TEST(xfergen_run)
{
    char db[4096], vocab[4200];
    snprintf(db, sizeof db, "%s", xf_test_tmp("oom_xfergen.db"));
    snprintf(vocab, sizeof vocab, "%s.vocab", db);
    FILE *f = fopen(vocab, "w");
    ck_assert_ptr_nonnull(f);
    fputs("matmul\newadd\n", f);
    fclose(f);
    oom_walk("xfergen on two threads", op_generate, db, 5);
}
END_TEST

/* ------------------------------------------------------------ verifier */

static xf_status op_verifier_new(void *ctx, xf_error *err)
{
    xf_verifier *v = NULL;
    xf_status s = xf_verifier_new(ctx, &v, err);
    if (s != XF_OK) ck_assert_msg(v == NULL, "a failed xf_verifier_new leaves *out set");
    xf_verifier_free(v);
    return s;
}

/* The three rules, over inputs a, b (2x3) and m (3x2) on both sides:
 *  - (a + b) m = a m + b m: valid, every element by normal forms;
 *  - relu(relu(a)) = relu(a): valid, normal forms differ, the solver decides;
 *  - relu(a + b) = relu(a) + relu(b): refuted, with a counterexample. */
enum { R_DISTRIBUTES, R_RELU_TWICE, R_RELU_ADDS, R_COUNT };

static int v_add(xf_graph *g, int x, int y) { return xf_test_op2(g, XF_OP_ADD, NULL, x, y); }
static int v_matmul(xf_graph *g, int x, int y) { return xf_test_op2(g, XF_OP_MATMUL, NULL, x, y); }
static int v_relu(xf_graph *g, int x) { return xf_test_op2(g, XF_OP_RELU, NULL, x, -1); }

static void verify_rule(xf_rule *r, int which)
{
    static const int64_t d23[2] = {2, 3}, d32[2] = {3, 2};
    xf_rule_init(r);
    xf_graph *side[2] = {&r->src, &r->dst};
    for (int k = 0; k < 2; k++) {
        xf_graph *g = side[k];
        int a = xf_test_input(g, "a", 2, d23), b = xf_test_input(g, "b", 2, d23);
        int m = xf_test_input(g, "m", 2, d32), y;
        if (which == R_DISTRIBUTES)
            y = k == 0 ? v_matmul(g, v_add(g, a, b), m)
                       : v_add(g, v_matmul(g, a, m), v_matmul(g, b, m));
        else if (which == R_RELU_TWICE)
            y = k == 0 ? v_relu(g, v_relu(g, a)) : v_relu(g, a);
        else
            y = k == 0 ? v_relu(g, v_add(g, a, b)) : v_add(g, v_relu(g, a), v_relu(g, b));
        xf_test_out(g, y);
    }
}

typedef struct verify_ctx {
    xf_verifier *v; /* prepared outside the walks */
    xf_rule rule;
    int which;
} verify_ctx;

static xf_status op_prove(void *ctx, xf_error *err)
{
    verify_ctx *c = ctx;
    xf_proof p;
    xf_status s = xf_verify_prove(c->v, &c->rule, &p, err);
    if (s == XF_OK && c->which != R_RELU_ADDS) ck_assert_int_eq(p.result, XF_PROOF_PROVED);
    if (s == XF_OK && c->which == R_RELU_ADDS) ck_assert_int_ne(p.result, XF_PROOF_PROVED);
    return s;
}

/* A failed check leaves *out as xf_bounded_init made it: no verdict, no
 * counterexample. */
static xf_status op_bounded(void *ctx, xf_error *err)
{
    verify_ctx *c = ctx;
    xf_bounded b;
    xf_bounded_init(&b);
    xf_status s = xf_verify_bounded(c->v, &c->rule, &b, err);
    if (s != XF_OK) {
        ck_assert_msg(b.result == XF_BOUNDED_UNKNOWN && b.n_inputs == 0 && !b.inputs,
                      "a failed check leaves a verdict (%s) or inputs",
                      xf_bounded_result_name(b.result));
    } else {
        ck_assert_msg(b.result == (c->which == R_RELU_ADDS ? XF_BOUNDED_REFUTED : XF_BOUNDED_VALID),
                      "rule %d: %s (%s)", c->which, xf_bounded_result_name(b.result), b.detail);
        if (c->which == R_RELU_TWICE)
            ck_assert_msg(strstr(b.detail, "needed the solver"), "no solving: %s", b.detail);
    }
    xf_bounded_free(&b);
    return s;
}

START_TEST(verifier)
{
    oom_walk("verifier create", op_verifier_new, NULL, 1);
    xf_verify_options o;
    xf_verify_options_init(&o);
    o.timeout_ms = 60000; /* no query may time out: the walk must be deterministic */
    o.bounded_max_shapes = 1; /* the rule's own shapes: each run makes a Z3 context */
    verify_ctx c;
    xf_error err;
    ck_assert_msg(xf_verifier_new(&o, &c.v, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_verifier_prepare(c.v, &err) == XF_OK, "%s", err.msg);
    static const char *names[R_COUNT] = {"(a + b) m = a m + b m", "relu(relu(a)) = relu(a)",
                                         "relu(a + b) = relu(a) + relu(b)"};
    for (c.which = 0; c.which < R_COUNT; c.which++) {
        char what[128];
        verify_rule(&c.rule, c.which);
        snprintf(what, sizeof what, "axiomatic proof of %s", names[c.which]);
        oom_walk(what, op_prove, &c, 1);
        snprintf(what, sizeof what, "bounded check of %s", names[c.which]);
        oom_walk(what, op_bounded, &c, 1);
        xf_rule_free(&c.rule);
    }
    xf_verifier_free(c.v);
}
END_TEST

/* ------------------------------------------------------------- the target */

/* The target's sessions with the input's weights shared: a fresh target
 * each run (its scratch directory and prepacked-weights container come and
 * go with it), the weights shared, a model borrowing them loaded, run and
 * its outputs read. Only our allocations are hooked: onnxruntime's own go
 * through its allocator (the sanitizer pass's leak check covers them). */
static xf_status open_target(xf_target **t, xf_error *err)
{
    xf_target_options o = xf_target_default_options();
    o.threads = 1;
    return xf_target_open(&o, t, err);
}

static xf_status op_target_share(void *ctx, xf_error *err)
{
    const xf_graph *g = ctx;
    xf_target *t = NULL;
    xf_graph cand;
    xf_graph_init(&cand);
    xf_target_model *m = NULL;
    xf_tensor *out = NULL;
    xf_status s = open_target(&t, err);
    if (!s) s = xf_target_share_weights(t, g, err);
    if (!s) s = xf_graph_clone_shared(g, &cand, err);
    if (!s) s = xf_target_model_load(t, &cand, 1, &m, err);
    if (!s) s = xf_target_model_run(m, err);
    if (!s && !(out = xf_tensor_array_alloc(g->n_outputs)))
        s = XF_FAIL(err, XF_ERR_NOMEM, "out of memory in the test");
    if (!s) s = xf_target_model_outputs(m, out, err);
    if (out) xf_tensor_array_free(out, g->n_outputs);
    xf_target_model_free(m);
    xf_graph_free(&cand);
    xf_target_close(t);
    return s;
}

/* A race: the input and its self check, a candidate joining for two rounds,
 * its outputs compared and its timing read, then leaving. */
static xf_status op_race(void *ctx, xf_error *err)
{
    const xf_graph *g = ctx;
    xf_target *t = NULL;
    xf_target_race *r = NULL;
    /* runs per round fixed: how many a round takes must not follow the
     * machine's speed, or the allocations would not repeat */
    xf_target_timing_options to = {.round_ms = 1, .warmup_ms = 1, .reps = 3};
    int slot = -1;
    double rel = 0;
    xf_target_timing tm, self;
    xf_status s = open_target(&t, err);
    if (!s) s = xf_target_race_open(t, g, NULL, 1, &to, &r, err);
    if (!s) s = xf_target_race_add(r, NULL, g, &slot, err);
    for (int k = 0; k < 2 && !s; k++) s = xf_target_race_round(r, err);
    if (!s) s = xf_target_race_diff(r, slot, &rel, NULL, err);
    if (!s) s = xf_target_race_timing(r, slot, &tm, &self, NULL, err);
    if (!s) xf_target_race_drop(r, slot);
    xf_target_race_free(r);
    xf_target_close(t);
    return s;
}

/* The arbiter over candidates whose fate does not depend on timing (one
 * computes something else and is dropped on its outputs, one is the input
 * again): weights shared, the race opened, candidates finished, offered,
 * joined and dropped, the input kept. */
typedef struct arbiter_ctx {
    const xf_graph *model;
    xf_search_result sr;
} arbiter_ctx;

static xf_status op_arbiter(void *ctx, xf_error *err)
{
    arbiter_ctx *c = ctx;
    xf_target *t = NULL;
    xf_graph out;
    xf_graph_init(&out);
    xf_arbiter_result ar;
    memset(&ar, 0, sizeof ar);
    xf_arbiter_options o = xf_arbiter_options_default();
    o.close_rounds = 0;
    o.timing.round_ms = 1;
    o.timing.warmup_ms = 1;
    o.timing.reps = 3; /* as in op_race */
    const xf_search_result *srs[1] = {&c->sr};
    xf_status s = open_target(&t, err);
    if (!s) s = xf_agent_arbitrate(t, NULL, c->model, srs, 1, &o, &out, &ar, err);
    if (!s) {
        ck_assert_int_eq(ar.chosen, 0);
        ck_assert_int_eq(ar.e[1].verdict, XF_ARBITER_TARGET_WRONG);
        ck_assert_int_eq(ar.e[2].verdict, XF_ARBITER_DUPLICATE);
    } else {
        ck_assert_msg(ar.n == 0 && !ar.e && out.n_nodes == 0, "a failed arbiter leaves results");
    }
    xf_arbiter_result_free(&ar);
    xf_graph_free(&out);
    xf_target_close(t);
    return s;
}

/* The small graph with other weights: other outputs. */
static void build_other(xf_graph *g)
{
    build_small(g);
    for (int v = 0; v < g->n_values; v++)
        if (g->values[v].kind == XF_VALUE_CONST && g->values[v].dtype == XF_F32)
            ((float *)g->values[v].data)[0] += 1.0f;
}

START_TEST(target_and_arbiter)
{
    xf_target *probe = NULL;
    xf_error err;
    if (open_target(&probe, &err) == XF_ERR_UNSUPPORTED) XF_SKIP("onnxruntime not installed");
    xf_target_close(probe);
    xf_graph g;
    build_small(&g);
    oom_walk("target sessions sharing the weights", op_target_share, &g, 1);
    oom_walk("target race", op_race, &g, 1);
    /* the model as finishing writes it (a conv's relu fused), so that the
     * second candidate finishes to it: a duplicate */
    xf_graph fin;
    ck_assert_int_eq(xf_agent_finish(&g, &fin, NULL, &err), XF_OK);
    arbiter_ctx c;
    c.model = &fin;
    xf_search_result_init(&c.sr);
    c.sr.candidates = xf_calloc(2, sizeof *c.sr.candidates);
    ck_assert_ptr_nonnull(c.sr.candidates);
    build_other(&c.sr.candidates[0].g);
    ck_assert_int_eq(xf_graph_clone(&fin, &c.sr.candidates[1].g, &err), XF_OK);
    c.sr.candidates[0].ms = 0;
    c.sr.candidates[1].ms = 1;
    c.sr.candidates[0].n_applied = c.sr.candidates[1].n_applied = 1;
    c.sr.n_candidates = 2;
    ck_assert_int_eq(xf_graph_clone(&g, &c.sr.best, &err), XF_OK);
    oom_walk("arbiter", op_arbiter, &c, 1);
    xf_search_result_free(&c.sr);
    xf_graph_free(&fin);
    xf_graph_free(&g);
}
END_TEST

/* ------------------------------------------------ the optimisation call */

typedef struct optimize_ctx {
    char model[4096], out[4096];
    rules_ctx rules;
} optimize_ctx;

/* xf_optimize_file on two matmuls of one matrix with the fixture's rules
 * (their merge is written): a greedy
 * search on the analytic backend (roofline fixed, no cache file, no
 * latency), the outcome, the numerical check and the checked writer. */
static xf_status op_optimize(void *ctx, xf_error *err)
{
    const optimize_ctx *c = ctx;
    xf_optimize_options o = xf_optimize_options_default();
    o.rules = c->rules.path;
    o.agent = XF_OPTIMIZE_SEARCH;
    o.search = XF_SEARCH_GREEDY;
    o.budget = 20;
    o.backend = XF_COST_ANALYTIC;
    o.peak_gflops = 100;
    o.bandwidth_gbps = 10;
    o.cache = XF_COST_CACHE_NONE;
    o.latency = 0;
    o.list_applicable = 1;
    xf_optimize_report r;
    xf_optimize_report_init(&r);
    xf_status s = xf_optimize_file(c->model, c->out, &o, &r, err);
    if (s == XF_OK) ck_assert_int_eq(r.written.wrote, XF_ONNX_WROTE_GRAPH);
    xf_optimize_report_free(&r);
    xf_outfile_protect_clear(); /* each run keeps its inputs from being overwritten anew */
    return s;
}

/* The rules (<name>.db), and two matrix-vector products of one matrix
 * (<name>.onnx; merging them pays) to optimise into <name>.opt.onnx. */
static void optimize_setup(optimize_ctx *c, const char *name)
{
    char file[256];
    snprintf(file, sizeof file, "%s.db", name);
    rules_init(&c->rules, file);
    write_rules_db(&c->rules);
    snprintf(file, sizeof file, "%s.onnx", name);
    snprintf(c->model, sizeof c->model, "%s", xf_test_tmp(file));
    snprintf(file, sizeof file, "%s.opt.onnx", name);
    snprintf(c->out, sizeof c->out, "%s", xf_test_tmp(file));
    xf_graph g;
    xf_graph_init(&g);
    int a = xf_test_input(&g, "a", 2, (const int64_t[]){64, 256});
    for (int j = 0; j < 2; j++)
        xf_test_out(&g, xf_test_op2(&g, XF_OP_MATMUL, NULL, a,
                                    xf_test_weight(&g, j ? "m2" : "m1", 2,
                                                   (const int64_t[]){256, 1}, (uint64_t)(4 + j))));
    xf_error err;
    ck_assert_msg(xf_onnx_save(&g, c->model, &err) == XF_OK, "%s", err.msg);
    xf_graph_free(&g);
}

START_TEST(optimize_call)
{
    optimize_ctx c;
    optimize_setup(&c, "optimize");
    xf_outfile_protect_clear(); /* what earlier cases kept, not counted in the walk */
    oom_walk("optimisation call (greedy, check, checked writer)", op_optimize, &c,
             real_stride(3));
    rules_free(&c.rules);
}
END_TEST

/* One PPO agent trained over two models (xf_train_agent: the models
 * loaded, the warm-up's tally, the union action set, the slices, the
 * checkpoint), then loaded on a third it never saw (xf_optimize_file with
 * load: the checkpoint's ids checked against the rules database, the
 * partial binding, greedy and sampled episodes). A step budget keeps it
 * deterministic. */
typedef struct transfer_ctx {
    optimize_ctx a;
    char b[4096], ckpt[4096];
} transfer_ctx;

static xf_status op_transfer(void *ctx, xf_error *err)
{
    const transfer_ctx *c = ctx;
    const char *models[] = {c->a.model, c->b};
    xf_train_options t = xf_train_options_default();
    t.rules = c->a.rules.path;
    t.save = c->ckpt;
    t.models = models;
    t.n_models = 2;
    t.backend = XF_COST_ANALYTIC;
    t.peak_gflops = 100;
    t.bandwidth_gbps = 10;
    t.cache = XF_COST_CACHE_NONE;
    t.seconds = 0;
    t.steps = 40;
    t.warmup_steps = 4;
    t.slice_steps = 16;
    xf_train_report tr;
    xf_train_report_init(&tr);
    xf_status s = xf_train_agent(&t, &tr, err);
    xf_train_report_free(&tr);
    xf_outfile_protect_clear();
    if (s != XF_OK) return s;
    xf_optimize_options o = xf_optimize_options_default();
    o.rules = c->a.rules.path;
    o.load = c->ckpt;
    o.samples = 1;
    o.backend = XF_COST_ANALYTIC;
    o.peak_gflops = 100;
    o.bandwidth_gbps = 10;
    o.cache = XF_COST_CACHE_NONE;
    o.latency = 0;
    xf_optimize_report r;
    xf_optimize_report_init(&r);
    s = xf_optimize_file(c->b, c->a.out, &o, &r, err);
    if (s == XF_OK) ck_assert_int_eq(r.learned.loaded, 1);
    xf_optimize_report_free(&r);
    xf_outfile_protect_clear();
    return s;
}

START_TEST(train_and_transfer)
{
    transfer_ctx c;
    optimize_setup(&c.a, "transfer");
    snprintf(c.b, sizeof c.b, "%s", xf_test_tmp("transfer_b.onnx"));
    snprintf(c.ckpt, sizeof c.ckpt, "%s", xf_test_tmp("transfer.ckpt"));
    xf_graph g;
    xf_graph_init(&g);
    int a = xf_test_input(&g, "a", 2, (const int64_t[]){32, 128});
    for (int j = 0; j < 2; j++)
        xf_test_out(&g, xf_test_op2(&g, XF_OP_MATMUL, NULL, a,
                                    xf_test_weight(&g, j ? "m2" : "m1", 2,
                                                   (const int64_t[]){128, 1}, (uint64_t)(9 + j))));
    xf_error err;
    ck_assert_msg(xf_onnx_save(&g, c.b, &err) == XF_OK, "%s", err.msg);
    xf_graph_free(&g);
    xf_outfile_protect_clear();
    oom_walk("an agent trained over two models, loaded on one", op_transfer, &c,
             real_stride(5));
    rules_free(&c.a.rules);
}
END_TEST

/* The pages of an optimisation's report (pages/): one optimisation's and a
 * comparison of it with itself, without pictures. */
typedef struct pages_ctx {
    const char *dir;
    xf_pages_run run;
} pages_ctx;

static xf_status op_pages(void *ctx, xf_error *err)
{
    const pages_ctx *c = ctx;
    xf_status s = xf_pages_optimize(c->dir, &c->run, err);
    xf_pages_run two[2] = {c->run, c->run};
    two[1].method = "again";
    if (s == XF_OK) s = xf_pages_compare(c->dir, two, 2, err);
    return s;
}

START_TEST(pages_of_a_report)
{
    optimize_ctx c;
    optimize_setup(&c, "pages");
    xf_optimize_options o = xf_fx_quiet_options(c.rules.path, XF_SEARCH_GREEDY);
    xf_error err;
    xf_optimize_report r;
    xf_optimize_report_init(&r);
    ck_assert_msg(xf_optimize_file(c.model, c.out, &o, &r, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(r.n_applied, 1);
    char dir[4200];
    snprintf(dir, sizeof dir, "%s", xf_test_tmp("pages"));
    pages_ctx p = {dir, {c.model, NULL, NULL, c.out, &o, &r}};
    /* without graphviz on PATH: audit's picture writer labels a node by its
     * bare operator when out of memory rather than failing (xferdb's
     * pictures are not walked either) */
    char *path = strdup(getenv("PATH") ? getenv("PATH") : "");
    ck_assert_ptr_nonnull(path);
    setenv("PATH", "", 1);
    oom_walk("pages of an optimisation (one, and a comparison)", op_pages, &p, real_stride(1));
    setenv("PATH", path, 1);
    free(path);
    xf_optimize_report_free(&r);
    rules_free(&c.rules);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("oom");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, onnx_import_small);
    tcase_add_test(t, onnx_import_squeezenet);
    tcase_add_test(t, onnx_export);
    tcase_add_test(t, onnx_symbolic_dims);
    tcase_add_test(t, interp_run);
    tcase_add_test(t, graph_clone);
    tcase_add_test(t, fused_regions);
    tcase_add_test(t, rulesdb_write);
    tcase_add_test(t, rulesdb_read);
    tcase_add_test(t, rulesdb_writer);
    tcase_add_test(t, ruleset_load);
    tcase_add_test(t, derive);
    tcase_add_test(t, env_and_search);
    tcase_add_test(t, prepare_narrow);
    tcase_add_test(t, prepare_fusions);
    tcase_add_test(t, gather_tied);
    tcase_add_test(t, enumerate_and_prune);
    tcase_add_test(t, prune_on_threads);
    tcase_add_test(t, xfergen_run);
    tcase_add_test(t, verifier);
    tcase_add_test(t, target_and_arbiter);
    tcase_add_test(t, optimize_call);
    tcase_add_test(t, train_and_transfer);
    tcase_add_test(t, pages_of_a_report);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
