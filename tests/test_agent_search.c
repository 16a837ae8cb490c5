/*
 * test_agent_search.c — the search baselines on the environment, on a
 * hand-built graph (three conv + relu blocks in a chain and two pairs of
 * matmuls sharing their left operand) with two hand-built rules and their
 * reverses (conv + relu fusion, matmul merge). Checked: greedy reaches the
 * optimum computed here by hand (all five rewrites, nothing improves
 * further) and never takes a rewrite that raises the cost; TASO's search
 * with alpha = 1 ends at the same graph as greedy, with alpha 1.05 no worse;
 * random search with a fixed seed is deterministic and never reports a
 * graph worse than the start; budgets, the time cap and bad options.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/search/search.h"
#include "agent_fixture.h"
#include "testutil.h"

/* ------------------------------------------------------------ fixtures */

/* Cost of the search graph before and after all five rewrites. */
static void expected_costs(xf_cost_model *cm, double *initial, double *optimum)
{
    xf_shape cin[2] = {xf_fx_shape(4, 1, 4, 8, 8), xf_fx_shape(4, 4, 4, 3, 3)};
    xf_params p0 = xf_fx_conv3x3(XF_ACT_NONE), p1 = xf_fx_conv3x3(XF_ACT_RELU);
    double conv = xf_fx_cost_of(cm, XF_OP_CONV, &p0, 2, cin).ms;
    double conv_relu = xf_fx_cost_of(cm, XF_OP_CONV, &p1, 2, cin).ms;
    double relu = xf_fx_cost_of(cm, XF_OP_RELU, NULL, 1, cin).ms;
    xf_shape m[2] = {xf_fx_shape(2, 64, 256, 0, 0), xf_fx_shape(2, 256, 16, 0, 0)};
    double mm = xf_fx_cost_of(cm, XF_OP_MATMUL, NULL, 2, m).ms;
    xf_shape mw[2] = {xf_fx_shape(2, 64, 256, 0, 0), xf_fx_shape(2, 256, 32, 0, 0)};
    double mm_wide = xf_fx_cost_of(cm, XF_OP_MATMUL, NULL, 2, mw).ms;
    xf_params sp = xf_params_default();
    sp.axis = 1;
    sp.n_split = 2;
    sp.split[0] = sp.split[1] = 16;
    xf_shape s = xf_fx_shape(2, 64, 32, 0, 0);
    double split = xf_fx_cost_of(cm, XF_OP_SPLIT, &sp, 1, &s).ms;
    *initial = 3 * (conv + relu) + 4 * mm;
    *optimum = 3 * conv_relu + 2 * (mm_wide + split);
    ck_assert(*optimum < *initial);
    ck_assert(mm_wide + split < 2 * mm); /* the merge is an improvement */
}

typedef struct fixture {
    xf_cost_model *cm;
    xf_ruleset *rs;
    xf_graph g;
    xf_env *e;
} fixture;

static void setup_graph(fixture *f, const xf_env_options *opt)
{
    f->cm = xf_fx_cost_model();
    f->rs = xf_fx_rules();
    xf_error err;
    ck_assert_msg(xf_env_create(f->rs, f->cm, &f->g, opt, &f->e, &err) == XF_OK, "%s",
                  err.msg);
}

static void setup(fixture *f, const xf_env_options *opt)
{
    xf_fx_search_graph(&f->g);
    setup_graph(f, opt);
}

static void teardown(fixture *f)
{
    xf_env_free(f->e);
    xf_ruleset_free(f->rs);
    xf_graph_free(&f->g);
    xf_cost_close(f->cm);
}

static void assert_close(double got, double want, const char *what)
{
    ck_assert_msg(fabs(got - want) <= 1e-9 * fmax(1e-3, fabs(want)), "%s: got %.17g, want %.17g",
                  what, got, want);
}

/* Runs a search into r (initialised by the caller; a result may be reused). */
static void run(fixture *f, xf_search_kind kind, const xf_search_options *o, xf_search_result *r)
{
    xf_error err;
    ck_assert_msg(xf_search_run(f->e, kind, o, r, &err) == XF_OK, "%s", err.msg);
    ck_assert(r->best_ms == xf_env_cost(f->e)); /* the environment holds the best graph */
    ck_assert_uint_eq(xf_graph_hash_mode(&r->best, XF_HASH_IDENTITY), xf_graph_hash_mode(xf_env_graph(f->e), XF_HASH_IDENTITY));
    ck_assert(r->best_ms <= r->initial_ms);
    ck_assert(r->seconds >= 0);
}

/* Number of applied actions with database id `id`. */
static int count_applied(const fixture *f, const xf_search_result *r, int64_t id)
{
    int n = 0;
    for (int i = 0; i < r->n_applied; i++) n += xf_ruleset_rule_id(f->rs, r->applied[i]) == id;
    return n;
}

START_TEST(greedy_reaches_the_optimum)
{
    fixture f;
    setup(&f, NULL);
    double initial, optimum;
    expected_costs(f.cm, &initial, &optimum);
    assert_close(xf_env_initial_cost(f.e), initial, "initial cost");
    xf_search_result r;
    xf_search_result_init(&r);
    run(&f, XF_SEARCH_GREEDY, NULL, &r);
    assert_close(r.initial_ms, initial, "result initial cost");
    assert_close(r.best_ms, optimum, "greedy optimum");
    ck_assert_int_eq(r.n_applied, 5);
    ck_assert_int_eq(count_applied(&f, &r, 1), 3);
    ck_assert_int_eq(count_applied(&f, &r, 2), 2);
    ck_assert_int_eq(r.expanded, 5);
    ck_assert_int_eq(r.seen, 6);
    /* a local optimum: no offered action improves on it */
    xf_error err;
    for (int x = 0; x < xf_env_num_xfers(f.e); x++)
        for (int l = 0; l < xf_env_num_locations(f.e, x); l++) {
            double ms, bytes;
            ck_assert_msg(xf_env_peek(f.e, x, l, &ms, &bytes, &err) == XF_OK, "%s", err.msg);
            ck_assert(ms >= r.best_ms);
        }
    xf_search_result_free(&r);
    xf_search_result_free(&r); /* twice is harmless */
    teardown(&f);
}
END_TEST

START_TEST(greedy_never_increases_cost)
{
    /* only conv[act=relu] in the graph: the reverse rule applies but costs more */
    fixture f;
    xf_graph_init(&f.g);
    int x = xf_fx_input(&f.g, "x", xf_fx_shape(4, 1, 4, 8, 8));
    int w = xf_fx_weight(&f.g, "w", xf_fx_shape(4, 4, 4, 3, 3), 1);
    xf_params p = xf_fx_conv3x3(XF_ACT_RELU);
    xf_fx_output(&f.g, xf_fx_op(&f.g, XF_OP_CONV, &p, x, w));
    setup_graph(&f, NULL);
    int offered = 0;
    for (int i = 0; i < xf_env_num_xfers(f.e); i++) offered += xf_env_num_locations(f.e, i);
    ck_assert_int_eq(offered, 1);
    xf_search_result r;
    xf_search_result_init(&r);
    run(&f, XF_SEARCH_GREEDY, NULL, &r);
    ck_assert_int_eq(r.n_applied, 0);
    ck_assert_int_eq(r.expanded, 0);
    ck_assert(r.best_ms == r.initial_ms);
    /* TASO with alpha 1 keeps nothing worse either; random may wander but
     * reports the start */
    run(&f, XF_SEARCH_TASO, NULL, &r);
    ck_assert(r.best_ms == r.initial_ms);
    ck_assert_int_eq(r.n_applied, 0);
    xf_search_options o = xf_search_options_default();
    o.budget = 10;
    run(&f, XF_SEARCH_RANDOM, &o, &r);
    ck_assert(r.best_ms == r.initial_ms);
    ck_assert_int_eq(r.n_applied, 0);
    ck_assert_int_eq(r.expanded, 10);
    xf_search_result_free(&r);
    teardown(&f);
}
END_TEST

START_TEST(taso_alpha_one_equals_greedy)
{
    fixture f;
    setup(&f, NULL);
    xf_search_result greedy, taso, wide;
    xf_search_result_init(&greedy);
    xf_search_result_init(&taso);
    xf_search_result_init(&wide);
    run(&f, XF_SEARCH_GREEDY, NULL, &greedy);
    xf_search_options o = xf_search_options_default();
    o.alpha = 1.0;
    run(&f, XF_SEARCH_TASO, &o, &taso);
    assert_close(taso.best_ms, greedy.best_ms, "taso(alpha=1) vs greedy");
    ck_assert_uint_eq(xf_graph_hash_mode(&taso.best, XF_HASH_IDENTITY), xf_graph_hash_mode(&greedy.best, XF_HASH_IDENTITY));
    ck_assert_int_eq(taso.n_applied, 5);
    ck_assert_int_eq(count_applied(&f, &taso, 1), 3);
    ck_assert_int_eq(count_applied(&f, &taso, 2), 2);
    ck_assert_int_ge(taso.seen, 6);
    ck_assert_int_ge(taso.expanded, 1);

    o.alpha = 1.05;
    o.budget = 40;
    run(&f, XF_SEARCH_TASO, &o, &wide);
    ck_assert(wide.best_ms <= greedy.best_ms + 1e-9 * greedy.best_ms);
    ck_assert_int_le(wide.expanded, 40);
    xf_search_result_free(&greedy);
    xf_search_result_free(&taso);
    xf_search_result_free(&wide);
    teardown(&f);
}
END_TEST

START_TEST(random_is_deterministic)
{
    xf_env_options eo = xf_env_options_default();
    eo.max_steps = 6;
    fixture f;
    setup(&f, &eo);
    xf_search_options o = xf_search_options_default();
    o.budget = 60;
    o.seed = 7;
    xf_search_result a, b;
    xf_search_result_init(&a);
    xf_search_result_init(&b);
    run(&f, XF_SEARCH_RANDOM, &o, &a);
    run(&f, XF_SEARCH_RANDOM, &o, &b);
    ck_assert_int_eq(a.expanded, 60);
    ck_assert_int_eq(b.expanded, 60);
    ck_assert(a.best_ms == b.best_ms);
    ck_assert(a.best_ms < a.initial_ms); /* 60 random steps find some improvement */
    ck_assert_int_eq(a.n_applied, b.n_applied);
    ck_assert_int_le(a.n_applied, 6);
    for (int i = 0; i < a.n_applied; i++) ck_assert_int_eq(a.applied[i], b.applied[i]);
    ck_assert_int_eq(a.seen, b.seen);
    ck_assert_uint_eq(xf_graph_hash_mode(&a.best, XF_HASH_IDENTITY), xf_graph_hash_mode(&b.best, XF_HASH_IDENTITY));
    xf_search_result_free(&a);
    xf_search_result_free(&b);
    teardown(&f);
}
END_TEST

START_TEST(budget_time_cap_and_bad_options)
{
    fixture f;
    setup(&f, NULL);
    xf_search_options o = xf_search_options_default();
    o.budget = 1;
    xf_search_result r;
    xf_search_result_init(&r);
    run(&f, XF_SEARCH_TASO, &o, &r);
    ck_assert_int_eq(r.expanded, 1);
    ck_assert(r.best_ms < r.initial_ms); /* successors of the start already improve */
    ck_assert_int_eq(r.n_applied, 1);

    o = xf_search_options_default();
    o.max_seconds = 1e-12;
    for (int k = 0; k < XF_SEARCH_KIND_COUNT; k++) {
        run(&f, (xf_search_kind)k, &o, &r);
        ck_assert_int_eq(r.expanded, 0);
        ck_assert(r.best_ms == r.initial_ms);
    }

    xf_error err;
    o = xf_search_options_default();
    o.budget = 0;
    ck_assert_int_eq(xf_search_run(f.e, XF_SEARCH_GREEDY, &o, &r, &err), XF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "budget"));
    o = xf_search_options_default();
    o.alpha = 0;
    ck_assert_int_eq(xf_search_run(f.e, XF_SEARCH_TASO, &o, &r, &err), XF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "alpha"));
    ck_assert_int_eq(xf_search_run(f.e, XF_SEARCH_KIND_COUNT, NULL, &r, &err), XF_ERR_INVALID);
    ck_assert_str_eq(xf_search_kind_name(XF_SEARCH_TASO), "taso");
    xf_search_result_free(&r);
    teardown(&f);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("agent_search");
    TCase *tc = tcase_create("search");
    tcase_add_test(tc, greedy_reaches_the_optimum);
    tcase_add_test(tc, greedy_never_increases_cost);
    tcase_add_test(tc, taso_alpha_one_equals_greedy);
    tcase_add_test(tc, random_is_deterministic);
    tcase_add_test(tc, budget_time_cap_and_bad_options);
    suite_add_tcase(s, tc);
    return xf_test_run(s);
}
