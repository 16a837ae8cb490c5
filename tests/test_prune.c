/*
 * test_prune.c — the pruning stages on a hand-made rule set whose fate is
 * known rule by rule: duplicates up to renaming, swapped sides and output
 * order, TASO's common subgraph and supergraph, instances of more general
 * rules, the canonical input order of survivors, stage selection,
 * determinism and the error for a malformed rule, also for near misses fed
 * straight into prune's sinks; on an enumerated set,
 * the same verdicts on one thread and on several, and the progress steps.
 *
 * Rules are written as infix text ("matmul(x0, w0); relu(x1)" for two
 * outputs) over the inputs x0, x1 : [2,4] and w0, w1 : [4,4]; concat joins
 * along axis 1, split0/split1 are the halves along axis 1.
 */
#include "testutil.h"

#include "enumerate/enumerate.h"
#include "prune/prune.h"

#include <stdatomic.h>
#include <string.h>

static const char *in_names[4] = {"x0", "x1", "w0", "w1"};

/* The node for the infix operator `name` on args; returns its value id. */
static int apply_op(xf_graph *g, const char *name, const int *args, int na)
{
    xf_error err;
    xf_params prm = xf_params_default();
    if (strncmp(name, "split", 5) == 0) {
        int which = name[5] - '0';
        prm.axis = 1;
        prm.n_split = 2;
        int64_t d = g->values[args[0]].shape.dims[1];
        prm.split[0] = prm.split[1] = d / 2;
        int node = xf_graph_add_node(g, XF_OP_SPLIT, &prm, args, 1, 2, NULL, &err);
        ck_assert_msg(node >= 0, "%s", err.msg);
        return g->nodes[node].outputs[which];
    }
    xf_op op = xf_op_from_name(name);
    ck_assert_msg(op != XF_OP_COUNT, "unknown op %s", name);
    if (op == XF_OP_CONCAT) prm.axis = 1;
    int v = xf_graph_op(g, op, &prm, args, na, &err);
    ck_assert_msg(v >= 0, "%s: %s", name, err.msg);
    return v;
}

static void build_side(xf_graph *g, const char *text)
{
    xf_error err;
    xf_graph_init(g);
    int inputs[4];
    for (int i = 0; i < 4; i++) {
        int64_t d[2] = {i < 2 ? 2 : 4, 4};
        xf_shape s = xf_shape_make(2, d);
        inputs[i] = xf_graph_add_input(g, in_names[i], XF_F32, &s, &err);
        ck_assert_int_ge(inputs[i], 0);
    }
    xf_test_parse_infix(g, text, apply_op);
}

static void make_rule(xf_rule *r, const char *src, const char *dst)
{
    xf_rule_init(r);
    build_side(&r->src, src);
    build_side(&r->dst, dst);
}

/* The set and what each stage must do with it. */
static const struct {
    const char *src, *dst;
    xf_prune_stage stage;
    long by;
} cases[] = {
    /* 0 */ {"matmul(matmul(x0, w0), w1)", "matmul(x0, matmul(w0, w1))", XF_PRUNE_KEPT, -1},
    /* 1 */ {"matmul(matmul(x1, w1), w0)", "matmul(x1, matmul(w1, w0))", XF_PRUNE_RENAMING, 0},
    /* 2 */ {"matmul(x0, matmul(w0, w1))", "matmul(matmul(x0, w0), w1)", XF_PRUNE_RENAMING, 0},
    /* 3 */ {"ewadd(x1, x0)", "ewadd(x0, x1)", XF_PRUNE_KEPT, -1},
    /* 4 */ {"relu(ewadd(x0, x1))", "relu(ewadd(x1, x0))", XF_PRUNE_COMMON_SUPERGRAPH, 3},
    /* 5 */ {"ewadd(matmul(x0, w0), x1)", "ewadd(x1, matmul(x0, w0))", XF_PRUNE_COMMON_SUBGRAPH, 3},
    /* 6 */ {"matmul(x0, ewadd(w0, w1))", "ewadd(matmul(x0, w0), matmul(x0, w1))", XF_PRUNE_KEPT, -1},
    /* 7 */ {"matmul(x0, ewadd(w0, w0))", "ewadd(matmul(x0, w0), matmul(x0, w0))", XF_PRUNE_GENERALITY, 6},
    /* 8 */ {"split0(concat(x0, x1))", "x0", XF_PRUNE_KEPT, -1},
    /* 9 */ {"split0(concat(x0, relu(x1)))", "x0", XF_PRUNE_GENERALITY, 8},
    /* 10 */ {"matmul(x0, w0); matmul(x0, w1)",
              "split0(matmul(x0, concat(w0, w1))); split1(matmul(x0, concat(w0, w1)))", XF_PRUNE_KEPT, -1},
    /* 11 */ {"matmul(x0, w1); matmul(x0, w0)",
              "split1(matmul(x0, concat(w0, w1))); split0(matmul(x0, concat(w0, w1)))",
              XF_PRUNE_RENAMING, 10},
};
#define N_CASES ((int)(sizeof cases / sizeof cases[0]))

static void build_all(xf_rule *rules)
{
    for (int i = 0; i < N_CASES; i++) make_rule(&rules[i], cases[i].src, cases[i].dst);
}

static void free_all(xf_rule *rules)
{
    for (int i = 0; i < N_CASES; i++) xf_rule_free(&rules[i]);
}

/* A verdict's reason, "" when it has none. */
static const char *why_of(const xf_prune_verdict *v)
{
    return v->why ? v->why : "";
}

START_TEST(test_each_rule_fate)
{
    xf_rule rules[N_CASES];
    xf_prune_verdict v[N_CASES];
    xf_prune_stats st;
    xf_error err;
    build_all(rules);
    ck_assert_int_eq(xf_prune_run(rules, N_CASES, NULL, v, &st, &err), XF_OK);
    for (int i = 0; i < N_CASES; i++) {
        ck_assert_msg(v[i].stage == cases[i].stage, "rule %d: stage %s, expected %s (%s)", i,
                      xf_prune_stage_name(v[i].stage), xf_prune_stage_name(cases[i].stage),
                      why_of(&v[i]));
        ck_assert_msg(v[i].by == cases[i].by, "rule %d: by %ld, expected %ld (%s)", i, v[i].by,
                      cases[i].by, why_of(&v[i]));
        if (v[i].stage == XF_PRUNE_KEPT)
            ck_assert_ptr_null(v[i].why);
        else
            ck_assert_msg(v[i].why && strlen(v[i].why) > 0, "rule %d: no reason", i);
    }
    ck_assert_uint_eq(st.in, 12);
    ck_assert_uint_eq(st.removed[XF_PRUNE_RENAMING], 3);
    ck_assert_uint_eq(st.removed[XF_PRUNE_COMMON_SUBGRAPH], 1);
    ck_assert_uint_eq(st.removed[XF_PRUNE_COMMON_SUPERGRAPH], 1);
    ck_assert_uint_eq(st.removed[XF_PRUNE_GENERALITY], 2);
    ck_assert_uint_eq(st.left[XF_PRUNE_RENAMING], 9);
    ck_assert_uint_eq(st.left[XF_PRUNE_COMMON_SUBGRAPH], 8);
    ck_assert_uint_eq(st.left[XF_PRUNE_COMMON_SUPERGRAPH], 7);
    ck_assert_uint_eq(st.left[XF_PRUNE_GENERALITY], 5);
    ck_assert_uint_eq(st.kept, 5);
    /* the reasons name what was found */
    ck_assert_ptr_nonnull(strstr(v[5].why, "matmul(x0, w0)"));
    ck_assert_ptr_nonnull(strstr(v[7].why, "w1 := w0"));
    ck_assert_ptr_nonnull(strstr(v[9].why, "x1 := relu(x1)"));
    ck_assert_ptr_nonnull(strstr(v[4].why, "relu"));
    xf_prune_verdicts_free(v, N_CASES);
    /* reasons off: the same verdicts without them */
    xf_prune_verdict w[N_CASES];
    xf_prune_options o = xf_prune_options_default();
    o.reasons = 0;
    free_all(rules);
    build_all(rules);
    ck_assert_int_eq(xf_prune_run(rules, N_CASES, &o, w, NULL, &err), XF_OK);
    for (int i = 0; i < N_CASES; i++) {
        ck_assert_int_eq(w[i].stage, cases[i].stage);
        ck_assert_int_eq(w[i].by, cases[i].by);
        ck_assert_ptr_null(w[i].why);
    }
    free_all(rules);
}
END_TEST

START_TEST(test_canonical_inputs)
{
    xf_rule rules[N_CASES];
    xf_prune_verdict v[N_CASES];
    xf_error err;
    build_all(rules);
    ck_assert_int_eq(xf_prune_run(rules, N_CASES, NULL, v, NULL, &err), XF_OK);
    xf_prune_verdicts_free(v, N_CASES);
    /* rule 3 was ewadd(x1, x0): x1 is used first, so it becomes input 0 named x0 */
    xf_graph *s = &rules[3].src;
    ck_assert_str_eq(s->values[s->inputs[0]].name, "x0");
    ck_assert_str_eq(s->values[s->inputs[1]].name, "x1");
    ck_assert_int_eq(s->nodes[0].inputs[0], s->inputs[0]);
    xf_graph *d = &rules[3].dst;
    ck_assert_str_eq(d->values[d->inputs[0]].name, "x0");
    ck_assert_int_eq(d->nodes[0].inputs[1], d->inputs[0]);
    ck_assert_int_eq(xf_rule_validate(&rules[3], &err), XF_OK);
    /* unused inputs go last: rule 3 reads no weights */
    ck_assert_str_eq(s->values[s->inputs[2]].name, "w0");
    ck_assert_str_eq(s->values[s->inputs[3]].name, "w1");
    /* duplicates are renamed too: rule 1 read x1 and w1 first */
    xf_graph *s1 = &rules[1].src;
    ck_assert_str_eq(s1->values[s1->inputs[0]].name, "x0");
    ck_assert_str_eq(s1->values[s1->inputs[1]].name, "w0");
    ck_assert_int_eq(s1->nodes[0].inputs[0], s1->inputs[0]);
    ck_assert_int_eq(s1->nodes[0].inputs[1], s1->inputs[1]);
    free_all(rules);
}
END_TEST

START_TEST(test_stage_selection_and_determinism)
{
    xf_rule rules[N_CASES];
    xf_prune_verdict v[N_CASES], w[N_CASES];
    xf_prune_stats st;
    xf_error err;
    build_all(rules);
    xf_prune_options o = xf_prune_options_default();
    o.stages = 1u << XF_PRUNE_RENAMING;
    o.canonical_inputs = 0;
    ck_assert_int_eq(xf_prune_run(rules, N_CASES, &o, v, &st, &err), XF_OK);
    ck_assert_uint_eq(st.removed[XF_PRUNE_RENAMING], 3);
    ck_assert_uint_eq(st.removed[XF_PRUNE_GENERALITY], 0);
    ck_assert_uint_eq(st.kept, 9);
    xf_prune_verdicts_free(v, N_CASES);
    /* generality alone also catches what the earlier stages would: renamed,
     * swapped and reordered copies are (trivial) instances, and rule 5 is
     * rule 3 with x1 := matmul(x0, w0), x0 := x1 */
    o.stages = 1u << XF_PRUNE_GENERALITY;
    ck_assert_int_eq(xf_prune_run(rules, N_CASES, &o, v, &st, &err), XF_OK);
    static const int gen[] = {1, 2, 5, 7, 9, 11};
    for (int k = 0; k < 6; k++)
        ck_assert_msg(v[gen[k]].stage == XF_PRUNE_GENERALITY, "rule %d: %s", gen[k],
                      xf_prune_stage_name(v[gen[k]].stage));
    ck_assert_uint_eq(st.removed[XF_PRUNE_GENERALITY], 6);
    ck_assert_int_eq(v[4].stage, XF_PRUNE_KEPT);
    xf_prune_verdicts_free(v, N_CASES);
    /* same input, same verdicts */
    free_all(rules);
    build_all(rules);
    ck_assert_int_eq(xf_prune_run(rules, N_CASES, NULL, v, NULL, &err), XF_OK);
    free_all(rules);
    build_all(rules);
    ck_assert_int_eq(xf_prune_run(rules, N_CASES, NULL, w, NULL, &err), XF_OK);
    for (int i = 0; i < N_CASES; i++) {
        ck_assert_int_eq(v[i].stage, w[i].stage);
        ck_assert_int_eq(v[i].by, w[i].by);
        ck_assert_str_eq(why_of(&v[i]), why_of(&w[i]));
    }
    xf_prune_verdicts_free(v, N_CASES);
    xf_prune_verdicts_free(w, N_CASES);
    free_all(rules);
}
END_TEST

/* xf_prune_run_from: the rules built on demand, one at a time. */
static xf_status get_case(void *user, size_t i, const xf_graph_sink *src,
                          const xf_graph_sink *dst, xf_error *err)
{
    int *calls = user;
    ++*calls;
    xf_rule r;
    make_rule(&r, cases[i].src, cases[i].dst);
    xf_status st = xf_rule_feed(&r, src, dst, err);
    xf_rule_free(&r);
    return st;
}

START_TEST(test_run_from_matches_run)
{
    xf_rule rules[N_CASES];
    xf_prune_verdict v[N_CASES], w[N_CASES];
    xf_prune_stats sv, sw;
    xf_error err;
    build_all(rules);
    ck_assert_int_eq(xf_prune_run(rules, N_CASES, NULL, v, &sv, &err), XF_OK);
    int calls = 0;
    ck_assert_int_eq(xf_prune_run_from(N_CASES, get_case, &calls, NULL, w, &sw, &err), XF_OK);
    ck_assert_int_eq(calls, N_CASES); /* each rule fetched once */
    for (int i = 0; i < N_CASES; i++) {
        ck_assert_int_eq(v[i].stage, w[i].stage);
        ck_assert_int_eq(v[i].by, w[i].by);
        ck_assert_str_eq(why_of(&v[i]), why_of(&w[i]));
    }
    xf_prune_verdicts_free(v, N_CASES);
    xf_prune_verdicts_free(w, N_CASES);
    ck_assert_uint_eq(sv.kept, sw.kept);
    /* xf_prune_canonical_inputs gives what xf_prune_run left in the array */
    xf_rule r;
    make_rule(&r, cases[3].src, cases[3].dst);
    ck_assert_int_eq(xf_prune_canonical_inputs(&r, &err), XF_OK);
    for (int k = 0; k < 4; k++)
        ck_assert_str_eq(r.src.values[r.src.inputs[k]].name,
                         rules[3].src.values[rules[3].src.inputs[k]].name);
    ck_assert_int_eq(r.src.nodes[0].inputs[0], r.src.inputs[0]);
    /* idempotent */
    ck_assert_int_eq(xf_prune_canonical_inputs(&r, &err), XF_OK);
    ck_assert_str_eq(r.src.values[r.src.inputs[0]].name, "x0");
    ck_assert_int_eq(r.src.nodes[0].inputs[0], r.src.inputs[0]);
    xf_rule_free(&r);
    free_all(rules);
}
END_TEST

/* xf_prune_run_from's get over an array of rules: rule i fed. */
static xf_status get_from_array(void *user, size_t i, const xf_graph_sink *src,
                                const xf_graph_sink *dst, xf_error *err)
{
    const xf_rule *rules = user;
    return xf_rule_feed(&rules[i], src, dst, err);
}

START_TEST(test_malformed_rule)
{
    xf_rule r[2];
    xf_prune_verdict v[2];
    xf_error err;
    make_rule(&r[0], "ewadd(x1, x0)", "ewadd(x0, x1)");
    make_rule(&r[1], "relu(x0)", "relu(x0); relu(x1)"); /* 1 output vs 2 */
    /* fetched rules are checked by the threads that fetch them, alike */
    for (int threads = 1; threads <= 2; threads++) {
        xf_prune_options o = xf_prune_options_default();
        o.threads = threads;
        ck_assert_int_eq(xf_prune_run_from(2, get_from_array, r, &o, v, NULL, &err),
                         XF_ERR_INVALID);
        ck_assert_ptr_nonnull(strstr(err.msg, "rule 1"));
        ck_assert_ptr_nonnull(strstr(err.msg, "outputs"));
        xf_prune_verdicts_free(v, 2);
    }
    ck_assert_int_eq(xf_prune_run(r, 2, NULL, v, NULL, &err), XF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "rule 1"));
    ck_assert_ptr_nonnull(strstr(err.msg, "outputs"));
    xf_rule_free(&r[0]);
    xf_rule_free(&r[1]);
}
END_TEST

/* Near misses fed straight into prune's sinks (no xf_graph checks them
 * first): inputs x : [2,4] and w : [4,4] on both sides unless a case says
 * otherwise; prune must refuse each as xf_rule_validate or the graph
 * builders would. */
enum { FED_OK, FED_INPUT_TYPE, FED_OUTPUT_TYPE, FED_BAD_SHAPES, FED_BAD_REF, FED_N };

static xf_status feed_side(const xf_graph_sink *s, int which, int target, xf_error *err)
{
    int64_t d24[2] = {2, 4}, d44[2] = {4, 4}, d34[2] = {3, 4};
    xf_shape x = xf_shape_make(2, d24), w = xf_shape_make(2, d44);
    if (which == FED_INPUT_TYPE && target) x = xf_shape_make(2, d34);
    xf_params p = xf_params_default();
    xf_status st = s->input(s->user, "x", XF_F32, &x, err);
    if (st == XF_OK) st = s->input(s->user, "w", XF_F32, &w, err);
    int relu_of = which == FED_OUTPUT_TYPE && target ? 1 : 0; /* relu(w): [4,4] */
    int add[2] = {0, which == FED_BAD_SHAPES ? 1 : 0};         /* ewadd(x, w) */
    int bad[1] = {which == FED_BAD_REF ? 5 : 0};               /* value 5 is not there */
    if (st == XF_OK) st = s->node(s->user, XF_OP_RELU, &p, &relu_of, 1, 1, err);
    if (st == XF_OK) st = s->node(s->user, XF_OP_ADD, &p, add, 2, 1, err);
    if (st == XF_OK) st = s->node(s->user, XF_OP_RELU, &p, bad, 1, 1, err);
    if (st == XF_OK) st = s->output(s->user, 2, err);
    return st;
}

static xf_status get_near_miss(void *user, size_t i, const xf_graph_sink *src,
                               const xf_graph_sink *dst, xf_error *err)
{
    const int *which = user;
    xf_status st = feed_side(src, i == 1 ? *which : FED_OK, 0, err);
    if (st == XF_OK) st = feed_side(dst, i == 1 ? *which : FED_OK, 1, err);
    return st;
}

START_TEST(test_fed_rules_checked)
{
    static const struct {
        xf_status st;
        const char *says;
    } want[FED_N] = {
        [FED_OK] = {XF_OK, NULL},
        [FED_INPUT_TYPE] = {XF_ERR_INVALID, "input 0 has another type"},
        [FED_OUTPUT_TYPE] = {XF_ERR_INVALID, "output 0 has another type"},
        [FED_BAD_SHAPES] = {XF_ERR_SHAPE, "source: node 1 (ewadd)"},
        [FED_BAD_REF] = {XF_ERR_INVALID, "refers to value 5"},
    };
    for (int which = 0; which < FED_N; which++) {
        xf_prune_verdict v[2];
        xf_error err;
        xf_error_clear(&err);
        xf_status st = xf_prune_run_from(2, get_near_miss, &which, NULL, v, NULL, &err);
        ck_assert_msg(st == want[which].st, "case %d: %d (%s)", which, st, err.msg);
        if (st == XF_OK) {
            xf_prune_verdicts_free(v, 2);
            continue;
        }
        ck_assert_msg(strstr(err.msg, "rule 1") && strstr(err.msg, want[which].says),
                      "case %d: %s", which, err.msg);
    }
}
END_TEST

START_TEST(test_empty_set)
{
    xf_error err;
    xf_prune_stats st;
    ck_assert_int_eq(xf_prune_run(NULL, 0, NULL, NULL, &st, &err), XF_OK);
    ck_assert_uint_eq(st.in, 0);
    ck_assert_uint_eq(st.kept, 0);
}
END_TEST

/* Many forms at once: the index of canonical forms keeps only their hashes
 * and compares a form by serialising its rule again, so every distinct form
 * stays and every copy (renamed, sides swapped) names its first rule. Rule
 * 3k is relu^(k+1)(x0) => x0, 3k+1 the same over x1, 3k+2 rule 3k with its
 * sides swapped. */
#define N_FORMS 60
START_TEST(test_many_forms)
{
    enum { N = 3 * N_FORMS };
    xf_rule *rules = xf_calloc(N, sizeof *rules);
    xf_prune_verdict *v = xf_calloc(N, sizeof *v);
    ck_assert_ptr_nonnull(rules);
    ck_assert_ptr_nonnull(v);
    char src[16 * N_FORMS], other[16 * N_FORMS];
    for (int k = 0; k < N_FORMS; k++) {
        const char *in[3] = {"x0", "x1", "x0"};
        for (int c = 0; c < 3; c++) {
            size_t len = 0;
            for (int j = 0; j <= k; j++) len += (size_t)snprintf(src + len, sizeof src - len, "relu(");
            len += (size_t)snprintf(src + len, sizeof src - len, "%s", in[c]);
            for (int j = 0; j <= k; j++) len += (size_t)snprintf(src + len, sizeof src - len, ")");
            snprintf(other, sizeof other, "%s", in[c]);
            if (c == 2) make_rule(&rules[3 * k + c], other, src);
            else make_rule(&rules[3 * k + c], src, other);
        }
    }
    xf_prune_options o = xf_prune_options_default();
    o.stages = 1u << XF_PRUNE_RENAMING;
    xf_prune_stats st;
    xf_error err;
    ck_assert_int_eq(xf_prune_run(rules, N, &o, v, &st, &err), XF_OK);
    for (int k = 0; k < N_FORMS; k++) {
        ck_assert_msg(v[3 * k].stage == XF_PRUNE_KEPT, "rule %d: %s", 3 * k,
                      xf_prune_stage_name(v[3 * k].stage));
        ck_assert_msg(v[3 * k + 1].stage == XF_PRUNE_RENAMING && v[3 * k + 1].by == 3 * k,
                      "rule %d: %s by %ld", 3 * k + 1, xf_prune_stage_name(v[3 * k + 1].stage),
                      v[3 * k + 1].by);
        ck_assert_msg(v[3 * k + 2].stage == XF_PRUNE_RENAMING && v[3 * k + 2].by == 3 * k,
                      "rule %d: %s by %ld", 3 * k + 2, xf_prune_stage_name(v[3 * k + 2].stage),
                      v[3 * k + 2].by);
    }
    ck_assert_uint_eq(st.removed[XF_PRUNE_RENAMING], 2 * N_FORMS);
    ck_assert_uint_eq(st.kept, N_FORMS);
    xf_prune_verdicts_free(v, N);
    for (int i = 0; i < N; i++) xf_rule_free(&rules[i]);
    xf_free(rules);
    xf_free(v);
}
END_TEST

/* Candidates of a small enumeration (matmul, ewadd, relu over three 3x3
 * inputs; four operators): a few thousand rules that every stage prunes
 * from, in several blocks and batches. */
typedef struct enumerated {
    xf_rule *rules;
    size_t n, cap;
} enumerated;

static xf_status take(void *user, xf_enum_candidate *c, xf_error *err)
{
    (void)err;
    enumerated *e = user;
    if (e->n == e->cap) {
        e->cap = e->cap ? 2 * e->cap : 256;
        e->rules = xf_realloc(e->rules, e->cap * sizeof *e->rules);
        ck_assert_ptr_nonnull(e->rules);
    }
    e->rules[e->n++] = c->rule;
    xf_rule_init(&c->rule);
    return XF_OK;
}

static void enumerate_small(enumerated *e)
{
    xf_error err;
    xf_enum_config c;
    xf_enum_config_init(&c);
    ck_assert_int_eq(xf_enum_vocab_parse(&c, "matmul\newadd\nrelu\n", "test_prune", &err), XF_OK);
    ck_assert_int_eq(xf_enum_inputs_parse(&c, "a:3x3,b:3x3,c:3x3", &err), XF_OK);
    c.max_ops = 4;
    xf_enum_options o;
    xf_enum_options_init(&o);
    o.user = e;
    o.on_candidate = take;
    xf_enum_stats st;
    memset(e, 0, sizeof *e);
    ck_assert_msg(xf_enum_run(&c, &o, &st, &err) == XF_OK, "%s", err.msg);
    xf_enum_config_free(&c);
}

static void enumerated_free(enumerated *e)
{
    for (size_t i = 0; i < e->n; i++) xf_rule_free(&e->rules[i]);
    xf_free(e->rules);
}

/* Prunes copies of e's rules on `threads` threads. */
static void prune_copies(const enumerated *e, const xf_prune_options *o, xf_prune_verdict *v,
                         xf_prune_stats *st)
{
    xf_error err;
    xf_rule *r = xf_calloc(e->n, sizeof *r);
    ck_assert_ptr_nonnull(r);
    for (size_t i = 0; i < e->n; i++) {
        ck_assert_int_eq(xf_graph_clone(&e->rules[i].src, &r[i].src, &err), XF_OK);
        ck_assert_int_eq(xf_graph_clone(&e->rules[i].dst, &r[i].dst, &err), XF_OK);
    }
    ck_assert_msg(xf_prune_run(r, e->n, o, v, st, &err) == XF_OK, "%s", err.msg);
    for (size_t i = 0; i < e->n; i++) xf_rule_free(&r[i]);
    xf_free(r);
}

/* The parallel parts (canonical forms, the TASO stages, generality's search
 * among the rules kept before each batch) give the verdicts, reasons and
 * counts of one thread, whatever the number of threads. */
START_TEST(test_threads_same_verdicts)
{
    enumerated e;
    enumerate_small(&e);
    xf_prune_verdict *one = xf_calloc(e.n, sizeof *one), *many = xf_calloc(e.n, sizeof *many);
    ck_assert_ptr_nonnull(one);
    ck_assert_ptr_nonnull(many);
    xf_prune_options o = xf_prune_options_default();
    xf_prune_stats s1, sn;
    prune_copies(&e, &o, one, &s1);
    /* what pruning on one thread, before it had threads, left of this set
     * (xfergen --max-ops 4 on the same vocabulary and inputs) */
    static const size_t left[XF_PRUNE_STAGE_COUNT] = {2770, 1760, 493, 471, 337};
    for (int s = 0; s < XF_PRUNE_STAGE_COUNT; s++) ck_assert_uint_eq(s1.left[s], left[s]);
    const int threads[] = {2, 3, 7};
    for (int t = 0; t < 3; t++) {
        o.threads = threads[t];
        prune_copies(&e, &o, many, &sn);
        for (size_t i = 0; i < e.n; i++) {
            ck_assert_msg(one[i].stage == many[i].stage && one[i].by == many[i].by,
                          "rule %zu, %d threads: %s by %ld, one thread: %s by %ld", i, threads[t],
                          xf_prune_stage_name(many[i].stage), many[i].by,
                          xf_prune_stage_name(one[i].stage), one[i].by);
            ck_assert_str_eq(why_of(&one[i]), why_of(&many[i]));
        }
        for (int s = 0; s < XF_PRUNE_STAGE_COUNT; s++) ck_assert_uint_eq(s1.left[s], sn.left[s]);
        ck_assert_uint_eq(s1.kept, sn.kept);
        xf_prune_verdicts_free(many, e.n);
    }
    xf_prune_verdicts_free(one, e.n);
    xf_free(one);
    xf_free(many);
    enumerated_free(&e);
}
END_TEST

/* xf_prune_run_from's get over an enumerated set: rule i fed, read from
 * several threads at once; counts its calls. */
typedef struct fetched_set {
    const enumerated *e;
    atomic_size_t calls;
} fetched_set;

static xf_status get_copy(void *user, size_t i, const xf_graph_sink *src,
                         const xf_graph_sink *dst, xf_error *err)
{
    fetched_set *f = user;
    atomic_fetch_add(&f->calls, 1);
    return xf_rule_feed(&f->e->rules[i], src, dst, err);
}

/* Rules fetched on demand, in several batches, and validated by the
 * threads that fetch them: the verdicts, reasons and counts of xf_prune_run
 * on one thread, each rule fetched once, with 1, 2 and 3 threads. */
START_TEST(test_run_from_threads_same_verdicts)
{
    enumerated e;
    enumerate_small(&e);
    ck_assert_uint_gt(e.n, 2 * 1024); /* more than the two batches prune holds at a time */
    xf_prune_verdict *one = xf_calloc(e.n, sizeof *one), *from = xf_calloc(e.n, sizeof *from);
    ck_assert_ptr_nonnull(one);
    ck_assert_ptr_nonnull(from);
    xf_prune_options o = xf_prune_options_default();
    xf_prune_stats s1, sf;
    prune_copies(&e, &o, one, &s1);
    for (int threads = 1; threads <= 3; threads++) {
        o.threads = threads;
        fetched_set f;
        f.e = &e;
        atomic_init(&f.calls, 0);
        xf_error err;
        ck_assert_msg(xf_prune_run_from(e.n, get_copy, &f, &o, from, &sf, &err) == XF_OK, "%s",
                      err.msg);
        ck_assert_uint_eq(atomic_load(&f.calls), e.n);
        for (size_t i = 0; i < e.n; i++) {
            ck_assert_msg(one[i].stage == from[i].stage && one[i].by == from[i].by,
                          "rule %zu, %d threads: %s by %ld, in memory: %s by %ld", i, threads,
                          xf_prune_stage_name(from[i].stage), from[i].by,
                          xf_prune_stage_name(one[i].stage), one[i].by);
            ck_assert_str_eq(why_of(&one[i]), why_of(&from[i]));
        }
        for (int s = 0; s < XF_PRUNE_STAGE_COUNT; s++) ck_assert_uint_eq(s1.left[s], sf.left[s]);
        xf_prune_verdicts_free(from, e.n);
    }
    xf_prune_verdicts_free(one, e.n);
    xf_free(one);
    xf_free(from);
    enumerated_free(&e);
}
END_TEST

/* What the progress callback saw. */
typedef struct steps {
    char names[16][32];
    size_t total[16], last_done[16];
    int n, calls;
} steps;

static void on_step(void *user, const xf_prune_progress *p)
{
    steps *s = user;
    s->calls++;
    ck_assert_ptr_nonnull(p->step);
    ck_assert_uint_le(p->done, p->total);
    if (s->n == 0 || strcmp(s->names[s->n - 1], p->step) != 0) {
        ck_assert_int_lt(s->n, 16);
        ck_assert_uint_eq(p->done, 0); /* a step is announced before its work */
        snprintf(s->names[s->n], sizeof s->names[0], "%s", p->step);
        s->total[s->n++] = p->total;
    }
    ck_assert_uint_eq(p->total, s->total[s->n - 1]);
    s->last_done[s->n - 1] = p->done;
}

/* Every step of pruning is reported in order, with its number of rules;
 * with progress_every_s 0 each block is reported up to the last one. */
START_TEST(test_progress_steps)
{
    enumerated e;
    enumerate_small(&e);
    xf_prune_verdict *v = xf_calloc(e.n, sizeof *v);
    ck_assert_ptr_nonnull(v);
    steps s;
    memset(&s, 0, sizeof s);
    xf_prune_options o = xf_prune_options_default();
    o.threads = 2;
    o.on_progress = on_step;
    o.progress_user = &s;
    o.progress_every_s = 0;
    xf_prune_stats st;
    prune_copies(&e, &o, v, &st);
    static const char *const want[] = {"terms", "canonical forms", "common subgraph",
                                       "common supergraph", "generality"};
    ck_assert_int_eq(s.n, 5);
    for (int i = 0; i < 5; i++) ck_assert_str_eq(s.names[i], want[i]);
    for (int i = 0; i < 4; i++) {
        ck_assert_uint_eq(s.total[i], e.n);
        ck_assert_uint_eq(s.last_done[i], e.n);
    }
    ck_assert_uint_eq(s.total[4], st.left[XF_PRUNE_COMMON_SUPERGRAPH]);
    ck_assert_uint_eq(s.last_done[4], s.total[4]);
    xf_prune_verdicts_free(v, e.n);
    xf_free(v);
    enumerated_free(&e);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("prune");
    TCase *tc = tcase_create("stages");
    tcase_add_test(tc, test_each_rule_fate);
    tcase_add_test(tc, test_canonical_inputs);
    tcase_add_test(tc, test_stage_selection_and_determinism);
    tcase_add_test(tc, test_run_from_matches_run);
    tcase_add_test(tc, test_malformed_rule);
    tcase_add_test(tc, test_fed_rules_checked);
    tcase_add_test(tc, test_empty_set);
    tcase_add_test(tc, test_many_forms);
    suite_add_tcase(s, tc);
    TCase *tt = tcase_create("threads");
    tcase_set_timeout(tt, 120);
    tcase_add_test(tt, test_threads_same_verdicts);
    tcase_add_test(tt, test_run_from_threads_same_verdicts);
    tcase_add_test(tt, test_progress_steps);
    suite_add_tcase(s, tt);
    return xf_test_run(s);
}
