/*
 * test_agent_ppo.c — PPO (agent/rl/ppo.h): the policy network's loss gradient
 * against central finite differences (clipped surrogate with rows inside and
 * outside the clip range, value loss, entropy bonus, rows with and without a
 * location term; parameters sampled from every tensor, all state inputs);
 * GAE on a 4-step example computed by hand; masked rule and location heads
 * never sampling a masked action in 10,000 draws; PPO learning a contextual
 * bandit whose optimal (rule, location) per state is known (85% of the
 * states, from ~10% untrained); the model-free
 * agent reaching the optimal cost of a small real environment (the graph
 * and rules of test_agent_env.c, optimum from an exhaustive TASO search)
 * and being deterministic for a seed; the compact action set (the most
 * offered rules up to the cap, in rule-set order, mapped to and from the
 * environment's actions, its masks, its ids through a checkpoint section,
 * a missing id refused by name) and the agent's set after its warm-up;
 * checkpoints that reload into identical greedy actions, refuse an agent
 * of other sizes and a rule set that lacks one of the agent's rule ids;
 * under a target runtime, a run's candidates for the arbiter (the start,
 * the cheapest and the fastest measured graph).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/rl/rl.h"
#include "agent_fixture.h"
#include "testutil.h"

#define GC_H 1e-2f
#define GC_FLOOR 1e-2
#define GC_TOL 2e-2

static float *rnd(size_t n, xf_rng *r, float lo, float hi)
{
    float *x = malloc(n * sizeof(float));
    ck_assert_ptr_nonnull(x);
    for (size_t i = 0; i < n; i++) x[i] = xf_rng_uniform(r, lo, hi);
    return x;
}

static int rand_int(xf_rng *r, int n) { return (int)(xf_rng_next(r) % (uint64_t)n); }

static xf_ppo_hparams small_hp(void)
{
    xf_ppo_hparams hp = xf_ppo_hparams_default();
    hp.hidden = 8;
    hp.embed = 3;
    hp.entropy_coef = 0.1f; /* large enough for its gradient to show */
    return hp;
}

/* ----------------------------------------------------------- gradcheck */

enum { GS = 6, GN = 4, GA = GN + 1, GL = 5, GB = 8 };

typedef struct gc_ctx {
    xf_ppo_net net;
    xf_nn_params p;
    xf_ppo_work w;
    xf_ppo_hparams hp;
    xf_ppo_rows r;
    float *s;
} gc_ctx;

static double gc_loss(void *u)
{
    gc_ctx *c = u;
    xf_ppo_loss l;
    xf_ppo_loss_forward(&c->net, &c->p, &c->w, &c->r, &c->hp, &l);
    return l.total;
}

START_TEST(policy_loss_gradient_matches_finite_differences)
{
    gc_ctx c;
    xf_error err;
    xf_rng rng;
    xf_rng_seed(&rng, 7);
    c.hp = small_hp();
    xf_nn_params_init(&c.p);
    xf_ppo_work_init(&c.w);
    ck_assert_msg(xf_ppo_net_add(&c.net, &c.p, GS, GN, GL, &c.hp, &rng, &err) == XF_OK, "%s",
                  err.msg);
    /* the heads' 0.01 scaling would make their gradients tiny: undo it */
    float *rw = xf_nn_params_value(&c.p, c.net.rule.w);
    for (size_t i = 0; i < xf_nn_params_size(&c.p, c.net.rule.w); i++) rw[i] *= 100.0f;
    float *lw = xf_nn_params_value(&c.p, c.net.loc.layer[1].w);
    for (size_t i = 0; i < xf_nn_params_size(&c.p, c.net.loc.layer[1].w); i++) lw[i] *= 100.0f;
    ck_assert(xf_ppo_work_reserve(&c.w, &c.net, GB, &err) == XF_OK);

    c.s = rnd((size_t)GB * GS, &rng, -1, 1);
    uint8_t mask[GB * GA];
    int n_loc[GB], rule[GB], loc[GB];
    float old[GB], adv[GB], ret[GB];
    for (int b = 0; b < GB; b++) {
        for (int a = 0; a < GA; a++) mask[b * GA + a] = a == GN || rand_int(&rng, 3) > 0;
        int pick;
        do pick = rand_int(&rng, GA);
        while (!mask[b * GA + pick]);
        if (b == 0) pick = GN; /* a no-op row */
        if (b == 1) pick = 0, mask[b * GA] = 1;
        rule[b] = pick;
        n_loc[b] = pick == GN ? 0 : (b == 1 ? 1 : 2 + rand_int(&rng, GL - 1)); /* row 1: one */
        loc[b] = n_loc[b] > 0 ? rand_int(&rng, n_loc[b]) : 0;
        adv[b] = xf_rng_uniform(&rng, -2, 2);
        ret[b] = xf_rng_uniform(&rng, -1, 1);
    }
    xf_ppo_rows r = {GB, c.s, mask, n_loc, rule, loc, old, adv, ret};
    c.r = r;
    /* old log-probs: ratios well inside (rows even) or well outside the clip */
    xf_ppo_loss l;
    xf_ppo_loss_forward(&c.net, &c.p, &c.w, &c.r, &c.hp, &l);
    for (int b = 0; b < GB; b++) {
        float shift = b % 2 == 0 ? xf_rng_uniform(&rng, -0.08f, 0.08f)
                                 : (b % 4 == 1 ? 0.5f : -0.5f);
        old[b] = c.w.logp[b] + shift;
    }
    xf_ppo_loss_forward(&c.net, &c.p, &c.w, &c.r, &c.hp, &l);
    ck_assert(l.clip_frac > 0.3 && l.clip_frac < 0.7);
    ck_assert(isfinite(l.total) && l.entropy > 0);

    xf_nn_params_zero_grad(&c.p);
    float ds[GB * GS];
    memset(ds, 0, sizeof ds);
    xf_ppo_loss_backward(&c.net, &c.p, &c.w, &c.r, &c.hp, ds);

    /* every state input */
    size_t at = 0;
    double e = xf_nn_gradcheck(gc_loss, &c, c.s, ds, (size_t)GB * GS, GC_H, GC_FLOOR, &at);
    ck_assert_msg(e < GC_TOL, "d loss / d s: relative error %g at %zu", e, at);
    /* sampled parameters: up to 12 entries of every tensor */
    int checked = 0;
    for (int t = 0; t < xf_nn_params_count(&c.p); t++) {
        size_t n = xf_nn_params_size(&c.p, t);
        float *v = xf_nn_params_value(&c.p, t), *g = xf_nn_params_grad(&c.p, t);
        for (int k = 0; k < 12 && (size_t)k < n; k++) {
            size_t i = n <= 12 ? (size_t)k : (size_t)rand_int(&rng, (int)n);
            e = xf_nn_gradcheck(gc_loss, &c, v + i, g + i, 1, GC_H, GC_FLOOR, NULL);
            ck_assert_msg(e < GC_TOL, "d loss / d %s[%zu]: relative error %g (analytic %g)",
                          xf_nn_params_info(&c.p, t)->name, i, e, (double)g[i]);
            checked++;
        }
    }
    ck_assert_int_gt(checked, 100);
    free(c.s);
    xf_ppo_work_free(&c.w);
    xf_nn_params_free(&c.p);
}
END_TEST

/* ------------------------------------------------------------------ GAE */

START_TEST(gae_matches_a_hand_computed_example)
{
    /* γ 0.9, λ 0.8 (γλ = 0.72); the episode ends after step 1.
     * t3: δ = -1 + 0.9·0.6 - 0.2 = -0.66                A = -0.66
     * t2: δ = 2 + 0.9·0.2 - 0.3 = 1.88                  A = 1.88 + 0.72·(-0.66) = 1.4048
     * t1: done: δ = 0 - 0.4 = -0.4                      A = -0.4
     * t0: δ = 1 + 0.9·0.4 - 0.5 = 0.86                  A = 0.86 + 0.72·(-0.4) = 0.572 */
    const float reward[4] = {1, 0, 2, -1}, value[4] = {0.5f, 0.4f, 0.3f, 0.2f};
    const uint8_t done[4] = {0, 1, 0, 0};
    const double want_adv[4] = {0.572, -0.4, 1.4048, -0.66};
    float adv[4], ret[4];
    xf_ppo_gae(reward, value, done, 4, 0.6f, 0.9f, 0.8f, adv, ret);
    for (int t = 0; t < 4; t++) {
        ck_assert_msg(fabs(adv[t] - want_adv[t]) < 1e-5, "A[%d] = %g, want %g", t, adv[t],
                      want_adv[t]);
        ck_assert_msg(fabs(ret[t] - (want_adv[t] + value[t])) < 1e-5, "R[%d] = %g", t, ret[t]);
    }
    /* the buffer computes the same and then standardises */
    xf_ppo_buffer b;
    xf_ppo_buffer_init(&b, 1, 2);
    xf_error err;
    for (int t = 0; t < 4; t++) {
        float s = (float)t;
        ck_assert(xf_ppo_buffer_add(&b, &s, NULL, 0, 1, 0, 0.0f, value[t], reward[t], done[t],
                                    &err) == XF_OK);
    }
    xf_ppo_hparams hp = xf_ppo_hparams_default();
    hp.gamma = 0.9f;
    hp.lambda = 0.8f;
    hp.normalize_adv = 0;
    xf_ppo_buffer_finish(&b, 0.6f, &hp);
    for (int t = 0; t < 4; t++) ck_assert(fabs(b.adv[t] - want_adv[t]) < 1e-5);
    hp.normalize_adv = 1;
    xf_ppo_buffer_finish(&b, 0.6f, &hp);
    double m = 0, v = 0;
    for (int t = 0; t < 4; t++) m += b.adv[t];
    for (int t = 0; t < 4; t++) v += (b.adv[t] - m / 4) * (b.adv[t] - m / 4);
    ck_assert(fabs(m / 4) < 1e-5 && fabs(v / 4 - 1.0) < 1e-4);
    ck_assert(fabs(b.ret[2] - (1.4048 + 0.3)) < 1e-5); /* returns are not standardised */
    xf_ppo_buffer_free(&b);
}
END_TEST

/* --------------------------------------------------------------- masks */

START_TEST(masked_heads_never_sample_masked_actions)
{
    enum { S = 5, N = 7, A = N + 1, L = 9 };
    xf_nn_params p;
    xf_ppo_net net;
    xf_ppo_work w;
    xf_ppo_hparams hp = small_hp();
    xf_rng rng;
    xf_error err;
    xf_rng_seed(&rng, 3);
    xf_nn_params_init(&p);
    xf_ppo_work_init(&w);
    ck_assert(xf_ppo_net_add(&net, &p, S, N, L, &hp, &rng, &err) == XF_OK);
    /* sharp logits: a masked action with a large logit must still never come */
    float *bias = xf_nn_params_value(&p, net.rule.b);
    bias[2] = 8.0f;
    float *lb = xf_nn_params_value(&p, net.loc.layer[1].b);
    lb[L - 1] = 8.0f;
    int n_loc[A] = {3, 0, 0, 1, 9, 4, 0, 2};
    uint8_t mask[A];
    for (int a = 0; a < A; a++) mask[a] = a == N || n_loc[a] > 0;
    int counts[A] = {0}, loc_seen[A][L];
    memset(loc_seen, 0, sizeof loc_seen);
    float s[S];
    for (int k = 0; k < 10000; k++) {
        for (int i = 0; i < S; i++) s[i] = xf_rng_uniform(&rng, -1, 1);
        int rule, loc;
        float logp, value;
        ck_assert(xf_ppo_act(&net, &p, &w, s, mask, n_loc, 0, &rng, &rule, &loc, &logp, &value,
                             &err) == XF_OK);
        ck_assert_msg(rule >= 0 && rule < A && mask[rule], "draw %d: masked rule %d", k, rule);
        int n = n_loc[rule];
        ck_assert_msg(n < 2 ? loc == 0 : loc < n, "draw %d: rule %d location %d of %d", k, rule,
                      loc, n);
        ck_assert(logp <= 0.0f && isfinite(logp));
        if (k < 200) { /* the same action's log-prob and value, asked for */
            float elogp, evalue;
            ck_assert(xf_ppo_eval(&net, &p, &w, s, mask, n_loc, rule, loc, &elogp, &evalue,
                                  &err) == XF_OK);
            ck_assert_float_eq_tol(elogp, logp, 1e-6f);
            ck_assert_float_eq(evalue, value);
        }
        counts[rule]++;
        loc_seen[rule][loc]++;
    }
    for (int a = 0; a < A; a++)
        ck_assert_msg(mask[a] ? counts[a] > 0 : counts[a] == 0, "rule %d drawn %d times", a,
                      counts[a]);
    for (int l = 0; l < n_loc[0]; l++) ck_assert_int_gt(loc_seen[0][l], 0);
    ck_assert_int_gt(loc_seen[4][L - 1], 0); /* the favourite, where allowed */
    /* greedy: the masked favourite is skipped as well */
    int rule, loc;
    float logp, value;
    ck_assert(xf_ppo_act(&net, &p, &w, s, mask, n_loc, 1, &rng, &rule, &loc, &logp, &value,
                         &err) == XF_OK);
    ck_assert(mask[rule] && rule != 2);
    /* eval: a masked rule, a location the rule does not have */
    ck_assert_int_eq(xf_ppo_eval(&net, &p, &w, s, mask, n_loc, 2, 0, &logp, &value, &err),
                     XF_ERR_INVALID);
    xf_test_expect_contains(err.msg, "not offered");
    ck_assert_int_eq(xf_ppo_eval(&net, &p, &w, s, mask, n_loc, 0, 3, &logp, &value, &err),
                     XF_ERR_INVALID);
    xf_test_expect_contains(err.msg, "location 3");
    /* nothing allowed */
    memset(mask, 0, sizeof mask);
    ck_assert_int_eq(xf_ppo_act(&net, &p, &w, s, mask, n_loc, 0, &rng, &rule, &loc, &logp,
                                &value, &err),
                     XF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "mask"));
    xf_ppo_work_free(&w);
    xf_nn_params_free(&p);
}
END_TEST

/* ---------------------------------------------------- contextual bandit */

enum { BS = 8, BN = 4, BA = BN + 1, BL = 3, BSTATES = 20 };

/* In how many states the greedy policy takes the paying (rule, location). */
static int bandit_greedy_optimal(const xf_ppo_net *net, const xf_nn_params *p, xf_ppo_work *w,
                                 float states[BSTATES][BS], uint8_t mask[BSTATES][BA],
                                 const int *n_loc, const int *best_rule, const int *best_loc,
                                 xf_rng *rng)
{
    int right = 0;
    for (int k = 0; k < BSTATES; k++) {
        int rule, loc;
        float logp, value;
        xf_error err;
        ck_assert(xf_ppo_act(net, p, w, states[k], mask[k], n_loc, 1, rng, &rule, &loc, &logp,
                             &value, &err) == XF_OK);
        right += rule == best_rule[k] && loc == best_loc[k];
    }
    return right;
}

START_TEST(ppo_learns_a_contextual_bandit)
{
    /* BSTATES fixed random states; in each, some rules are masked, one
     * (rule, location) pair pays 1, the other locations of its rule 0.3,
     * every other action 0. One-step episodes.
     * PPO with one network for all states can lock a state into an action
     * that pays 0 when its neighbours in the trunk's representation pay for
     * that action: once V(s) has learnt the 0, the advantage of what it
     * keeps doing is 0 and the right action is rarely sampled. Over seeds
     * 1-15 (ten tried) this left 0-2 of the 20 states wrong after 200
     * updates (more updates, a wider trunk or a larger entropy bonus did
     * not remove it), so the test asks for 85% of the states, against ~10%
     * for the untrained policy, which it also checks. */
    xf_rng rng;
    xf_rng_seed(&rng, 11);
    float states[BSTATES][BS];
    uint8_t mask[BSTATES][BA];
    int best_rule[BSTATES], best_loc[BSTATES];
    int n_loc[BA] = {BL, BL, BL, BL, 0};
    for (int k = 0; k < BSTATES; k++) {
        for (int i = 0; i < BS; i++) states[k][i] = 3.0f * xf_rng_normal(&rng);
        for (int a = 0; a < BA; a++) mask[k][a] = a == BN || rand_int(&rng, 4) > 0;
        best_rule[k] = rand_int(&rng, BN);
        mask[k][best_rule[k]] = 1;
        best_loc[k] = rand_int(&rng, BL);
    }
    xf_ppo_hparams hp = xf_ppo_hparams_default();
    hp.hidden = 64;
    hp.lr = 1e-3f;
    hp.minibatch = 64;
    hp.entropy_coef = 0.01f;
    xf_nn_params p;
    xf_ppo_net net;
    xf_ppo_work w;
    xf_ppo_buffer buf;
    xf_error err;
    xf_nn_params_init(&p);
    xf_ppo_work_init(&w);
    ck_assert(xf_ppo_net_add(&net, &p, BS, BN, BL, &hp, &rng, &err) == XF_OK);
    xf_ppo_buffer_init(&buf, BS, BA);
    xf_nn_adam adam = xf_nn_adam_default(hp.lr);
    int right_untrained = bandit_greedy_optimal(&net, &p, &w, states, mask, n_loc, best_rule,
                                                best_loc, &rng);
    for (int it = 0; it < 200; it++) {
        xf_ppo_buffer_clear(&buf);
        for (int k = 0; k < 256; k++) {
            int st = rand_int(&rng, BSTATES);
            int rule, loc;
            float logp, value;
            ck_assert(xf_ppo_act(&net, &p, &w, states[st], mask[st], n_loc, 0, &rng, &rule, &loc,
                                 &logp, &value, &err) == XF_OK);
            float r = rule != best_rule[st] ? 0.0f : loc == best_loc[st] ? 1.0f : 0.3f;
            ck_assert(xf_ppo_buffer_add(&buf, states[st], mask[st], n_loc[rule], rule, loc, logp,
                                        value, r, 1, &err) == XF_OK);
        }
        xf_ppo_buffer_finish(&buf, 0.0f, &hp);
        xf_ppo_update_stats stats;
        ck_assert(xf_ppo_update(&net, &p, &adam, &w, &buf, &hp, NULL, &rng, &stats, &err) ==
                  XF_OK);
        ck_assert(isfinite(stats.last.total) && stats.minibatches == hp.epochs * 4);
    }
    int right = bandit_greedy_optimal(&net, &p, &w, states, mask, n_loc, best_rule, best_loc,
                                      &rng);
    ck_assert_msg(right_untrained * 100 <= 30 * BSTATES,
                  "untrained policy already optimal in %d of %d states", right_untrained, BSTATES);
    ck_assert_msg(right * 100 >= 85 * BSTATES, "greedy policy optimal in %d of %d states", right,
                  BSTATES);
    xf_ppo_buffer_free(&buf);
    xf_ppo_work_free(&w);
    xf_nn_params_free(&p);
}
END_TEST

/* ------------------------------------------- the agent on a real graph */

/* The graph: relu(conv(x, w)) and matmul(a, m1), matmul(a, m2), twice over
 * (two independent copies). */
static void build_graph(xf_graph *g)
{
    xf_graph_init(g);
    for (int k = 0; k < 2; k++) {
        char nm[16];
        snprintf(nm, sizeof nm, "x%d", k);
        int x = xf_fx_input(g, nm, xf_fx_shape(4, 1, 4, 8, 8));
        snprintf(nm, sizeof nm, "w%d", k);
        int w = xf_fx_weight(g, nm, xf_fx_shape(4, 4, 4, 3, 3), (uint64_t)(1 + 10 * k));
        xf_params p = xf_fx_conv3x3(XF_ACT_NONE);
        xf_fx_output(g, xf_fx_op(g, XF_OP_RELU, NULL, xf_fx_op(g, XF_OP_CONV, &p, x, w), -1));
        snprintf(nm, sizeof nm, "a%d", k);
        int a = xf_fx_input(g, nm, xf_fx_shape(2, 8, 4, 0, 0));
        snprintf(nm, sizeof nm, "m1_%d", k);
        int m1 = xf_fx_weight(g, nm, xf_fx_shape(2, 4, 4, 0, 0), (uint64_t)(2 + 10 * k));
        snprintf(nm, sizeof nm, "m2_%d", k);
        int m2 = xf_fx_weight(g, nm, xf_fx_shape(2, 4, 4, 0, 0), (uint64_t)(3 + 10 * k));
        xf_fx_output(g, xf_fx_op(g, XF_OP_MATMUL, NULL, a, m1));
        xf_fx_output(g, xf_fx_op(g, XF_OP_MATMUL, NULL, a, m2));
    }
}

static void fixture_open(xf_fx_env *f)
{
    xf_env_options eo = xf_env_options_default();
    eo.max_steps = 8;
    eo.max_locations = 4;
    xf_fx_env_open(f, build_graph, &eo);
}

/* An environment over f's graph whose rule set has the conv + relu rule
 * under id 11 instead of 1 (the matmul rule keeps id 2). */
static void other_ids_env(const xf_fx_env *f, xf_ruleset **rs, xf_env **e)
{
    xf_rule r[2];
    xf_fx_rule_conv_relu(&r[0]);
    xf_fx_rule_matmul_merge(&r[1]);
    int64_t ids[2] = {11, 2};
    xf_ruleset_options ro = xf_ruleset_options_default();
    xf_error err;
    ck_assert_msg(xf_ruleset_from_rules(r, ids, 2, &ro, rs, &err) == XF_OK, "%s", err.msg);
    xf_rule_free(&r[0]);
    xf_rule_free(&r[1]);
    xf_env_options eo = xf_env_options_default();
    eo.max_steps = 8;
    eo.max_locations = 4;
    ck_assert_msg(xf_env_create(*rs, f->cm, &f->g, &eo, e, &err) == XF_OK, "%s", err.msg);
}

START_TEST(compact_actions_map_to_and_from_the_environment)
{
    xf_fx_env f;
    fixture_open(&f);
    xf_error err;
    int N = xf_env_num_xfers(f.e);
    ck_assert_int_eq(N, 4); /* two rules, both directions */
    /* the most counted up to the cap, kept in rule-set order */
    int64_t count[4] = {0, 5, 2, 5};
    xf_actions s;
    xf_actions_init(&s);
    ck_assert_msg(xf_actions_choose(&s, f.rs, count, 2, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(s.M, 2);
    ck_assert_int_eq(s.env[0], 1);
    ck_assert_int_eq(s.env[1], 3);
    ck_assert(s.ids[0] == xf_ruleset_rule_id(f.rs, 1) && s.ids[1] == xf_ruleset_rule_id(f.rs, 3));
    ck_assert_int_eq(s.n_env, 4);
    int want_agent[5] = {-1, 0, -1, 1, 2};
    for (int i = 0; i <= 4; i++) ck_assert_int_eq(s.agent[i], want_agent[i]);
    /* ties go to the lower index; never-offered rules are left out */
    int64_t ties[4] = {3, 3, 3, 0};
    ck_assert(xf_actions_choose(&s, f.rs, ties, 2, &err) == XF_OK);
    ck_assert(s.M == 2 && s.env[0] == 0 && s.env[1] == 1);
    ck_assert(xf_actions_choose(&s, f.rs, ties, 10, &err) == XF_OK);
    ck_assert(s.M == 3 && s.env[2] == 2 && s.agent[3] == -1 && s.agent[4] == 3);
    ck_assert_int_eq(xf_actions_choose(&s, f.rs, ties, 0, &err), XF_ERR_INVALID);
    ck_assert_int_eq(s.M, 3); /* unchanged */
    /* the warm-up takes at most a tenth of a step budget */
    ck_assert_int_eq(xf_actions_warmup(300, 0), 300);
    ck_assert_int_eq(xf_actions_warmup(300, 1500), 150);
    ck_assert_int_eq(xf_actions_warmup(40, 20000), 40);
    ck_assert_int_eq(xf_actions_warmup(300, 5), 1);
    ck_assert_int_eq(xf_actions_warmup(0, 100), 0);

    /* the masks of the initial state: the environment's, restricted */
    int64_t offered[4] = {0, 0, 0, 0};
    xf_actions_count(f.e, offered);
    const uint8_t *em = xf_env_xfer_mask(f.e);
    for (int i = 0; i < 4; i++) ck_assert(offered[i] == (em[i] ? 1 : 0));
    uint8_t mask[4];
    int n_loc[4];
    xf_actions_mask(&s, f.e, mask, n_loc);
    for (int j = 0; j < 3; j++) {
        ck_assert_int_eq(n_loc[j], xf_env_num_locations(f.e, s.env[j]));
        ck_assert_int_eq(mask[j], em[s.env[j]]);
    }
    ck_assert(mask[3] == 1 && n_loc[3] == 0);

    /* ids through a checkpoint section, bound to a rule set again */
    const char *path = xf_test_tmp("actions.bin");
    FILE *fp = fopen(path, "wb");
    ck_assert_ptr_nonnull(fp);
    ck_assert(xf_actions_write(fp, &s));
    fclose(fp);
    xf_actions t;
    xf_actions_init(&t);
    fp = fopen(path, "rb");
    ck_assert_ptr_nonnull(fp);
    ck_assert_msg(xf_actions_read(fp, path, &t, &err) == XF_OK, "%s", err.msg);
    fclose(fp);
    ck_assert_int_eq(t.M, 3);
    ck_assert(memcmp(t.ids, s.ids, 3 * sizeof *t.ids) == 0);
    ck_assert_msg(xf_actions_bind(&t, f.rs, &err) == XF_OK, "%s", err.msg);
    ck_assert(memcmp(t.env, s.env, 3 * sizeof *t.env) == 0);
    ck_assert(memcmp(t.agent, s.agent, 5 * sizeof *t.agent) == 0);
    /* a truncated section */
    fp = fopen(path, "rb");
    char buf[12];
    ck_assert(fread(buf, 1, sizeof buf, fp) == sizeof buf);
    fclose(fp);
    fp = fopen(path, "wb");
    ck_assert(fwrite(buf, 1, sizeof buf, fp) == sizeof buf);
    fclose(fp);
    fp = fopen(path, "rb");
    ck_assert_int_eq(xf_actions_read(fp, path, &t, &err), XF_ERR_PARSE);
    ck_assert_ptr_nonnull(strstr(err.msg, "truncated"));
    fclose(fp);

    /* an id the rule set lacks is named; the mapping stays as it was */
    xf_ruleset *rs2;
    xf_env *e2;
    other_ids_env(&f, &rs2, &e2);
    int j1 = -1; /* the first agent action of the conv + relu rule (id ±1) */
    for (int j = 0; j < t.M && j1 < 0; j++)
        if (t.ids[j] == 1 || t.ids[j] == -1) j1 = j;
    ck_assert_int_ge(j1, 0);
    ck_assert_int_eq(xf_actions_bind(&t, rs2, &err), XF_ERR_MISMATCH);
    char want[64];
    snprintf(want, sizeof want, "rule id %lld (agent action %d)", (long long)t.ids[j1], j1);
    ck_assert_msg(strstr(err.msg, want) != NULL, "%s", err.msg);
    ck_assert(memcmp(t.env, s.env, 3 * sizeof *t.env) == 0 && t.n_env == 4);

    xf_env_free(e2);
    xf_ruleset_free(rs2);
    xf_actions_free(&t);
    xf_actions_free(&s);
    xf_fx_env_close(&f);
}
END_TEST

static xf_ppo_agent_options agent_options(const xf_fx_env *f)
{
    xf_ppo_agent_options o = xf_ppo_agent_options_default();
    o.gnn.hidden = 16;
    o.gnn.latent = 16;
    o.hp.hidden = 32;
    o.hp.lr = 1e-3f;
    o.cm = f->cm;
    o.max_locations = 4;
    o.max_env_steps = 1500;
    o.warmup_steps = 40;
    o.max_seconds = 0;
    o.seed = 5;
    return o;
}

static void on_progress(void *user, const xf_ppo_progress *p)
{
    (void)user;
    ck_assert(p->phase && p->best_ms <= p->initial_ms && p->steps > 0);
}

/* add(x0, x1) => add(x1, x0) (kind 0); add(add(x0, x1), x2) =>
 * add(x0, add(x1, x2)) (kind 1, a re-association); add(add(x0, x1), x2) =>
 * add(x2, add(x1, x0)) (kind 2, operands swapped at both adds). */
static void add_rule(xf_rule *r, int kind)
{
    xf_rule_init(r);
    xf_graph *side[2] = {&r->src, &r->dst};
    for (int s = 0; s < 2; s++) {
        int x[3];
        const char *names[3] = {"x0", "x1", "x2"};
        for (int i = 0; i < (kind ? 3 : 2); i++)
            x[i] = xf_fx_input(side[s], names[i], xf_fx_shape(2, 4, 4, 0, 0));
        xf_graph *g = side[s];
        int out;
        if (kind == 0) out = s ? xf_fx_op(g, XF_OP_ADD, NULL, x[1], x[0])
                               : xf_fx_op(g, XF_OP_ADD, NULL, x[0], x[1]);
        else if (s == 0) out = xf_fx_op(g, XF_OP_ADD, NULL, xf_fx_op(g, XF_OP_ADD, NULL, x[0], x[1]), x[2]);
        else if (kind == 1) out = xf_fx_op(g, XF_OP_ADD, NULL, x[0], xf_fx_op(g, XF_OP_ADD, NULL, x[1], x[2]));
        else out = xf_fx_op(g, XF_OP_ADD, NULL, x[2], xf_fx_op(g, XF_OP_ADD, NULL, x[1], x[0]));
        xf_fx_output(g, out);
    }
}

/* The three rules above as ids 1, 2, 3 (and their reverses). */
static xf_ruleset *add_rules(int commutative)
{
    xf_rule r[3];
    for (int k = 0; k < 3; k++) add_rule(&r[k], k);
    int64_t ids[3] = {1, 2, 3};
    xf_ruleset_options ro = xf_ruleset_options_default();
    ro.commutative = commutative;
    xf_ruleset *rs = NULL;
    xf_error err;
    ck_assert_msg(xf_ruleset_from_rules(r, ids, 3, &ro, &rs, &err) == XF_OK, "%s", err.msg);
    for (int k = 0; k < 3; k++) xf_rule_free(&r[k]);
    return rs;
}

/* A rule that only swaps operands of an add enables nothing when the matcher
 * binds adds either way round, and ONNX Runtime's fusions read the order it
 * changes: the agents never count it for their action set, never take it at
 * random, and mask it in a set that holds it (an older checkpoint's). */
START_TEST(agents_never_take_a_rule_that_only_swaps_operands)
{
    xf_ruleset *ordered = add_rules(0);
    for (int i = 0; i < xf_ruleset_count(ordered); i++)
        ck_assert_msg(!xf_ruleset_swaps_only(ordered, i), "%s", xf_ruleset_text(ordered, i));
    xf_ruleset_free(ordered);

    xf_ruleset *rs = add_rules(1);
    int N = xf_ruleset_count(rs), swaps = 0;
    for (int i = 0; i < N; i++) {
        int64_t id = xf_ruleset_rule_id(rs, i);
        int want = id == 1 || id == 3 || id == -3;
        ck_assert_msg(xf_ruleset_swaps_only(rs, i) == want, "%s", xf_ruleset_text(rs, i));
        swaps += want;
    }
    ck_assert_int_ge(swaps, 2);

    xf_graph g;
    xf_fx_two_adds(&g);
    xf_cost_model *cm = xf_fx_cost_model();
    xf_env_options eo = xf_env_options_default();
    eo.max_steps = 8;
    xf_env *e = NULL;
    xf_error err;
    ck_assert_msg(xf_env_create(rs, cm, &g, &eo, &e, &err) == XF_OK, "%s", err.msg);
    const uint8_t *offered = xf_env_xfer_mask(e);
    int64_t *count = xf_calloc((size_t)N, sizeof *count);
    ck_assert_ptr_nonnull(count);
    xf_actions_count(e, count);
    int others = 0;
    for (int i = 0; i < N; i++) {
        if (xf_ruleset_swaps_only(rs, i)) {
            ck_assert_msg(offered[i], "the swap %s is offered", xf_ruleset_text(rs, i));
            ck_assert_int_eq(count[i], 0);
        } else {
            ck_assert_int_eq(count[i], offered[i] ? 1 : 0);
            others += offered[i] != 0;
        }
    }
    ck_assert_int_ge(others, 1); /* the re-association */
    xf_rng rng;
    xf_rng_seed(&rng, 7);
    for (int k = 0; k < 200; k++) {
        int rule = -1, loc = -1;
        ck_assert(xf_actions_random(e, &rng, &rule, &loc));
        ck_assert_msg(!xf_ruleset_swaps_only(rs, rule), "drew %s", xf_ruleset_text(rs, rule));
        ck_assert(loc >= 0 && loc < xf_env_num_locations(e, rule));
    }
    xf_actions s;
    xf_actions_init(&s);
    ck_assert_msg(xf_actions_choose(&s, rs, count, 16, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(s.M, others);
    for (int j = 0; j < s.M; j++) ck_assert(!xf_ruleset_swaps_only(rs, s.env[j]));
    /* a set holding every rule (as a checkpoint trained with the swaps) */
    xf_actions_free(&s);
    s.ids = xf_malloc((size_t)N * sizeof *s.ids);
    ck_assert_ptr_nonnull(s.ids);
    for (int i = 0; i < N; i++) s.ids[i] = xf_ruleset_rule_id(rs, i);
    s.M = N;
    ck_assert_msg(xf_actions_bind(&s, rs, &err) == XF_OK, "%s", err.msg);
    uint8_t *mask = xf_malloc((size_t)N + 1);
    int *n_loc = xf_malloc(((size_t)N + 1) * sizeof *n_loc);
    ck_assert(mask && n_loc);
    xf_actions_mask(&s, e, mask, n_loc);
    for (int j = 0; j < N; j++) {
        int swap = xf_ruleset_swaps_only(rs, s.env[j]);
        ck_assert_int_eq(mask[j], swap ? 0 : offered[s.env[j]]);
        ck_assert_int_eq(n_loc[j], swap ? 0 : xf_env_num_locations(e, s.env[j]));
    }
    xf_free(mask);
    xf_free(n_loc);
    xf_actions_free(&s);
    xf_free(count);
    xf_env_free(e);
    xf_cost_close(cm);
    xf_graph_free(&g);
    xf_ruleset_free(rs);
}
END_TEST

/* The optimum of f's graph into *ref (initialised here): exhaustive TASO
 * search over this small space. */
static void optimum(xf_fx_env *f, xf_search_result *ref)
{
    xf_error err;
    xf_search_options so = xf_search_options_default();
    so.alpha = 10.0;
    so.budget = 10000;
    xf_search_result_init(ref);
    ck_assert_msg(xf_search_run(f->e, XF_SEARCH_TASO, &so, ref, &err) == XF_OK, "%s", err.msg);
}

START_TEST(agent_reaches_the_optimal_cost)
{
    xf_fx_env f;
    fixture_open(&f);
    xf_error err;
    xf_search_result ref;
    optimum(&f, &ref);
    ck_assert(ref.best_ms < ref.initial_ms * 0.99);
    /* merging the matmuls costs a split kernel: the optimum fuses both convs */
    ck_assert_int_eq(ref.n_applied, 2);
    ck_assert(xf_ruleset_rule_id(f.rs, ref.applied[0]) == 1 &&
              xf_ruleset_rule_id(f.rs, ref.applied[1]) == 1);

    xf_ppo_agent_options o = agent_options(&f);
    o.progress = on_progress;
    xf_ppo_agent *a = NULL;
    ck_assert_msg(xf_ppo_agent_create(&o, &a, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(xf_ppo_agent_actions(a)->M, 0);
    xf_search_result res;
    xf_search_result_init(&res);
    ck_assert_msg(xf_ppo_agent_train(a, f.e, &res, &err) == XF_OK, "%s", err.msg);
    /* the action set: every rule offered in the initial state is in it
     * (the warm-up counts that state), each action maps to its rule */
    const xf_actions *act = xf_ppo_agent_actions(a);
    ck_assert(act->M >= 2 && act->M <= xf_env_num_xfers(f.e));
    ck_assert(xf_env_reset(f.e, &err) == XF_OK);
    for (int i = 0; i < xf_env_num_xfers(f.e); i++)
        if (xf_env_xfer_mask(f.e)[i]) ck_assert_int_ge(act->agent[i], 0);
    for (int j = 0; j < act->M; j++) {
        ck_assert_int_eq(act->agent[act->env[j]], j);
        ck_assert(act->ids[j] == xf_ruleset_rule_id(f.rs, act->env[j]));
    }
    ck_assert(xf_env_set_graph(f.e, &res.best, &err) == XF_OK);
    ck_assert_msg(fabs(res.best_ms - ref.best_ms) < 1e-9 * ref.initial_ms,
                  "ppo best %.6f ms, optimum %.6f ms (initial %.6f)", res.best_ms, ref.best_ms,
                  res.initial_ms);
    ck_assert(fabs(res.initial_ms - ref.initial_ms) < 1e-12);
    ck_assert(res.expanded > 0 && res.expanded <= o.max_env_steps);
    ck_assert(res.seen >= 4 && res.n_applied >= 2);
    ck_assert(fabs(xf_env_cost(f.e) - res.best_ms) < 1e-12); /* env holds the best graph */
    ck_assert_uint_eq(xf_graph_hash_mode(&res.best, XF_HASH_IDENTITY), xf_graph_hash_mode(xf_env_graph(f.e), XF_HASH_IDENTITY));

    /* the trained greedy policy reaches the optimum on its own */
    xf_search_result run;
    xf_search_result_init(&run);
    ck_assert_msg(xf_ppo_agent_run(a, f.e, 1, &run, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(fabs(run.best_ms - ref.best_ms) < 1e-9 * ref.initial_ms,
                  "greedy episode best %.6f ms, optimum %.6f ms", run.best_ms, ref.best_ms);
    ck_assert_int_eq(run.n_applied, 2);

    /* deterministic: the same seed gives the same training */
    xf_ppo_agent *b = NULL;
    ck_assert(xf_ppo_agent_create(&o, &b, &err) == XF_OK);
    xf_search_result res2;
    xf_search_result_init(&res2);
    ck_assert(xf_ppo_agent_train(b, f.e, &res2, &err) == XF_OK);
    ck_assert(res2.best_ms == res.best_ms && res2.expanded == res.expanded &&
              res2.seen == res.seen && res2.n_applied == res.n_applied);
    xf_nn_params *pa = xf_ppo_agent_params(a), *pb = xf_ppo_agent_params(b);
    ck_assert_uint_eq(xf_nn_params_total(pa), xf_nn_params_total(pb));
    ck_assert(memcmp(pa->value, pb->value, xf_nn_params_total(pa) * sizeof(float)) == 0);
    ck_assert_int_eq(xf_ppo_agent_actions(b)->M, act->M);

    xf_search_result_free(&res2);
    xf_search_result_free(&run);
    xf_search_result_free(&res);
    xf_search_result_free(&ref);
    xf_ppo_agent_free(b);
    xf_ppo_agent_free(a);
    xf_fx_env_close(&f);
}
END_TEST

/* The polish that ends training (xf_agent_run_polish): an agent whose
 * budget (one real step) cannot reach the optimum on its own (two conv
 * fusions) ends there once the polish has taken the rewrites its best graph
 * left untaken; the result keeps the agent's own best apart
 * (unpolished_ms) and the path of the polished graph; with the polish off
 * the agent's best stands. PPO and the world-model agent alike. */
static void expect_polished(xf_fx_env *f, const xf_search_result *ref, const xf_search_result *res,
                            const char *who)
{
    ck_assert_msg(fabs(res->best_ms - ref->best_ms) < 1e-9 * ref->initial_ms,
                  "%s polished %.6f ms, optimum %.6f ms", who, res->best_ms, ref->best_ms);
    ck_assert_msg(res->unpolished_ms > res->best_ms + 1e-6 * ref->initial_ms,
                  "%s alone %.6f ms: one step cannot make both fusions", who, res->unpolished_ms);
    ck_assert(res->polish_steps >= 1 && res->polish_steps <= 2);
    ck_assert_int_eq(res->n_applied, 2); /* the agent's step, if any, and the polish's */
    for (int k = 0; k < res->n_applied; k++)
        ck_assert(xf_ruleset_rule_id(f->rs, res->applied[k]) == 1);
    ck_assert(fabs(xf_env_cost(f->e) - res->best_ms) < 1e-12); /* env holds the best graph */
    /* a local optimum: no rewrite offered there lowers the cost */
    xf_error err;
    for (int x = 0; x < xf_env_num_xfers(f->e); x++)
        for (int l = 0; l < xf_env_num_locations(f->e, x); l++) {
            double ms, bytes;
            ck_assert_msg(xf_env_peek(f->e, x, l, &ms, &bytes, &err) == XF_OK, "%s", err.msg);
            ck_assert(ms >= res->best_ms - 1e-12);
        }
}

/* res as expect_polished says with the polish; without it the agent's
 * own best stands (above the optimum) and nothing says a polish ran. */
static void expect_result(xf_fx_env *f, const xf_search_result *ref, const xf_search_result *res,
                          int polish, const char *who)
{
    if (polish) {
        expect_polished(f, ref, res, who);
        return;
    }
    ck_assert(res->unpolished_ms == 0 && res->polish_steps == 0);
    ck_assert_msg(res->best_ms > ref->best_ms + 1e-6 * ref->initial_ms, "%s alone at the optimum",
                  who);
}

START_TEST(training_ends_with_the_polish_of_the_best_graph)
{
    xf_fx_env f;
    fixture_open(&f);
    xf_error err;
    xf_search_result ref;
    optimum(&f, &ref);
    for (int polish = 1; polish >= 0; polish--) {
        xf_ppo_agent_options o = agent_options(&f);
        o.max_env_steps = 1;
        o.polish = polish;
        xf_ppo_agent *a = NULL;
        ck_assert_msg(xf_ppo_agent_create(&o, &a, &err) == XF_OK, "%s", err.msg);
        xf_search_result res;
        xf_search_result_init(&res);
        ck_assert_msg(xf_ppo_agent_train(a, f.e, &res, &err) == XF_OK, "%s", err.msg);
        expect_result(&f, &ref, &res, polish, "ppo");
        xf_search_result_free(&res);
        xf_ppo_agent_free(a);

        xf_wm_agent_options w = xf_wm_agent_options_default();
        w.gnn.hidden = 16;
        w.gnn.latent = 8;
        w.wm_hidden = 16;
        w.cm = f.cm;
        w.max_locations = 4;
        w.max_env_steps = 1;
        w.max_seconds = 0;
        w.polish = polish;
        xf_wm_agent_stats ws;
        xf_search_result_init(&res);
        ck_assert_msg(xf_wm_optimise(f.e, &w, &res, &ws, &err) == XF_OK, "%s", err.msg);
        expect_result(&f, &ref, &res, polish, "wm");
        xf_search_result_free(&res);
    }
    xf_search_result_free(&ref);
    xf_fx_env_close(&f);
}
END_TEST

START_TEST(checkpoint_reload_gives_identical_actions)
{
    xf_fx_env f;
    fixture_open(&f);
    xf_error err;
    xf_ppo_agent_options o = agent_options(&f);
    o.max_env_steps = 300;
    xf_ppo_agent *a = NULL, *b = NULL;
    ck_assert(xf_ppo_agent_create(&o, &a, &err) == XF_OK);
    xf_search_result ra, rb;
    xf_search_result_init(&ra);
    xf_search_result_init(&rb);
    const char *path = xf_test_tmp("ppo_agent.ckpt");
    /* nothing to save or run before training */
    ck_assert_int_eq(xf_ppo_agent_save(a, path, &err), XF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "no actions"));
    ck_assert_int_eq(xf_ppo_agent_run(a, f.e, 1, &ra, &err), XF_ERR_INVALID);
    ck_assert(xf_ppo_agent_train(a, f.e, &ra, &err) == XF_OK);
    ck_assert_msg(xf_ppo_agent_save(a, path, &err) == XF_OK, "%s", err.msg);
    const xf_actions *act = xf_ppo_agent_actions(a);

    xf_ppo_agent_options o2 = o;
    o2.seed = 99; /* other initial weights */
    ck_assert(xf_ppo_agent_create(&o2, &b, &err) == XF_OK);
    ck_assert_msg(xf_ppo_agent_load(b, path, f.e, &err) == XF_OK, "%s", err.msg);
    xf_nn_params *pa = xf_ppo_agent_params(a), *pb = xf_ppo_agent_params(b);
    size_t n = xf_nn_params_total(pa);
    ck_assert_uint_eq(xf_nn_params_total(pb), n);
    ck_assert(memcmp(pa->value, pb->value, n * sizeof(float)) == 0);
    ck_assert(memcmp(pa->m, pb->m, n * sizeof(float)) == 0);
    const xf_actions *bct = xf_ppo_agent_actions(b);
    ck_assert_int_eq(bct->M, act->M);
    ck_assert(memcmp(bct->ids, act->ids, (size_t)act->M * sizeof *act->ids) == 0);
    ck_assert(memcmp(bct->env, act->env, (size_t)act->M * sizeof *act->env) == 0);

    /* greedy episodes take the same actions */
    ck_assert(xf_ppo_agent_run(a, f.e, 1, &ra, &err) == XF_OK);
    ck_assert(xf_ppo_agent_run(b, f.e, 1, &rb, &err) == XF_OK);
    ck_assert_int_eq(ra.n_applied, rb.n_applied);
    for (int i = 0; i < ra.n_applied; i++) ck_assert_int_eq(ra.applied[i], rb.applied[i]);
    ck_assert(ra.best_ms == rb.best_ms && ra.expanded == rb.expanded);

    /* an agent of other sizes refuses it, naming the size */
    xf_ppo_agent *c = NULL;
    xf_ppo_agent_options o3 = o;
    o3.hp.hidden = 16;
    ck_assert(xf_ppo_agent_create(&o3, &c, &err) == XF_OK);
    ck_assert_int_eq(xf_ppo_agent_load(c, path, f.e, &err), XF_ERR_MISMATCH);
    ck_assert_msg(strstr(err.msg, "PPO hidden 32, this agent 16"), "%s", err.msg);
    ck_assert_int_eq(xf_ppo_agent_actions(c)->M, 0);
    ck_assert_int_eq(xf_ppo_agent_load(c, "/nonexistent/x.ckpt", f.e, &err), XF_ERR_IO);
    ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/x.ckpt"));

    /* a rule set without one of the checkpoint's rule ids refuses it,
     * naming the id and the file; the agent keeps what it had */
    xf_ruleset *rs2;
    xf_env *e2;
    other_ids_env(&f, &rs2, &e2);
    int j1 = -1;
    for (int j = 0; j < act->M && j1 < 0; j++)
        if (act->ids[j] == 1 || act->ids[j] == -1) j1 = j;
    ck_assert_int_ge(j1, 0);
    char want[64];
    snprintf(want, sizeof want, "rule id %lld (agent action %d)", (long long)act->ids[j1], j1);
    ck_assert_int_eq(xf_ppo_agent_load(b, path, e2, &err), XF_ERR_MISMATCH);
    ck_assert_msg(strstr(err.msg, want) && strstr(err.msg, path), "%s", err.msg);
    ck_assert(memcmp(pa->value, xf_ppo_agent_params(b)->value, n * sizeof(float)) == 0);
    /* and so does a run of the trained agent there */
    ck_assert_int_eq(xf_ppo_agent_run(a, e2, 1, &rb, &err), XF_ERR_MISMATCH);
    ck_assert_msg(strstr(err.msg, want) != NULL, "%s", err.msg);

    xf_env_free(e2);
    xf_ruleset_free(rs2);
    xf_ppo_agent_free(c);
    xf_search_result_free(&ra);
    xf_search_result_free(&rb);
    xf_ppo_agent_free(b);
    xf_ppo_agent_free(a);
    xf_fx_env_close(&f);
}
END_TEST

/* Steps e to its cheapest offered successor (peeked) up to n times; the
 * target time of each graph in ms[], its identity hash in hash[], the
 * steps taken returned. Every step goes through the run's bookkeeping. */
static int descend(xf_agent_run *run, xf_env *e, int n, double *ms, uint64_t *hash)
{
    xf_error err;
    int k = 0;
    for (; k < n; k++) {
        const uint8_t *mask = xf_env_xfer_mask(e);
        int best_r = -1, best_l = 0;
        double best = xf_env_cost(e);
        for (int r = 0; r < xf_env_num_xfers(e); r++)
            for (int l = 0; mask[r] && l < xf_env_num_locations(e, r); l++) {
                double c, b;
                ck_assert_msg(xf_env_peek(e, r, l, &c, &b, &err) == XF_OK, "%s", err.msg);
                if (c < best - 1e-12) best = c, best_r = r, best_l = l;
            }
        if (best_r < 0) break;
        xf_env_step_result sr;
        ck_assert_msg(xf_env_step(e, best_r, best_l, &sr, &err) == XF_OK, "%s", err.msg);
        ck_assert(sr.valid);
        ck_assert_msg(xf_agent_run_step(run, best_r, &sr, &err) == XF_OK, "%s", err.msg);
        ms[k] = sr.target_ms;
        hash[k] = sr.hash;
    }
    return k;
}

/* Under a target (the sparse reward timing every step here), a learning
 * agent's run hands the arbiter the start graph and its cheapest distinct
 * graphs (here each of the five it stepped to, the cheapest being the best
 * and the target's fastest among them), cheapest first, each with its
 * path, as a search hands its cheapest few; without a target it hands the
 * best graph alone. Handing only the start, the cheapest and the fastest
 * measured left the arbiter 3 graphs to TASO's 12. */
START_TEST(a_run_under_a_target_hands_its_cheapest_graphs_to_the_arbiter)
{
    xf_error err;
    for (int with_target = 0; with_target < 2; with_target++) {
        xf_target *t = with_target ? xf_fx_target() : NULL;
        if (with_target && !t) XF_SKIP("ONNX Runtime is not installed (tools/setup.sh)");
        xf_env_options eo = xf_env_options_default();
        eo.target = t;
        eo.target_every = t ? 1 : 0;
        xf_fx_env f;
        xf_fx_env_open(&f, xf_fx_search_graph, &eo);
        xf_search_result res;
        xf_search_result_init(&res);
        xf_agent_run run;
        ck_assert_msg(xf_agent_run_begin(&run, f.e, &res, NULL, &err) == XF_OK, "%s", err.msg);
        uint64_t start_hash = xf_env_hash(f.e);
        double ms[8];
        uint64_t hash[8];
        int n = descend(&run, f.e, 5, ms, hash);
        ck_assert_int_eq(n, 5); /* the graph's five rewrites, each cheaper */
        ck_assert_msg(xf_agent_run_end(&run, XF_OK, &err) == XF_OK, "%s", err.msg);
        ck_assert_uint_eq(xf_env_hash(f.e), hash[4]); /* left holding the best */
        ck_assert_int_eq(res.n_applied, 5);
        if (!t) {
            ck_assert_int_eq(res.n_candidates, 0);
            xf_search_result_free(&res);
            xf_fx_env_close(&f);
            continue;
        }
        for (int k = 0; k < n; k++) ck_assert(ms[k] > 0);
        ck_assert_int_eq(res.n_candidates, 6);
        int seen[6] = {0};
        for (int c = 0; c < res.n_candidates; c++) {
            const xf_search_candidate *sc = &res.candidates[c];
            if (c > 0) ck_assert(sc->ms >= res.candidates[c - 1].ms);
            uint64_t h = xf_graph_hash_mode(&sc->g, XF_HASH_IDENTITY);
            int at = h == start_hash ? 0 : -1;
            for (int k = 0; k < n && at < 0; k++)
                if (h == hash[k]) at = k + 1;
            ck_assert_int_ge(at, 0);
            ck_assert_int_eq(seen[at]++, 0);
            ck_assert_int_eq(sc->n_applied, at); /* the path to it */
            for (int i = 0; i < at; i++) ck_assert_int_eq(sc->applied[i], res.applied[i]);
            if (at == 0) ck_assert_double_eq_tol(sc->ms, res.initial_ms, 1e-12);
            if (at == 5) {
                ck_assert_int_eq(c, 0); /* the best is the cheapest */
                ck_assert_double_eq_tol(sc->ms, res.best_ms, 1e-12);
            }
        }
        xf_search_result_free(&res);
        xf_fx_env_close(&f);
        xf_target_close(t);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("agent_ppo");
    TCase *tc = tcase_create("ppo");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, policy_loss_gradient_matches_finite_differences);
    tcase_add_test(tc, gae_matches_a_hand_computed_example);
    tcase_add_test(tc, masked_heads_never_sample_masked_actions);
    tcase_add_test(tc, ppo_learns_a_contextual_bandit);
    tcase_add_test(tc, compact_actions_map_to_and_from_the_environment);
    tcase_add_test(tc, agents_never_take_a_rule_that_only_swaps_operands);
    tcase_add_test(tc, agent_reaches_the_optimal_cost);
    tcase_add_test(tc, training_ends_with_the_polish_of_the_best_graph);
    tcase_add_test(tc, checkpoint_reload_gives_identical_actions);
    tcase_add_test(tc, a_run_under_a_target_hands_its_cheapest_graphs_to_the_arbiter);
    suite_add_tcase(s, tc);
    return xf_test_run(s);
}
