/*
 * ppo_net.c — the PPO policy network (agent/rl/ppo.h): a shared tanh trunk, a
 * rule head masked by the xfer mask, a location head fed with the trunk
 * output and a learned embedding of the chosen rule, masked to that rule's
 * location count, and a value network. Acting on one state, and the clipped
 * PPO loss with its backward over a batch of rows. The value network has
 * its own hidden layers (as in the usual PPO MLP policies), so the value
 * loss does not shape the policy's features.
 *
 * Rows whose chosen rule has at most one location (the no-op has none)
 * carry no location term: their location head runs with the batch but its
 * log-prob, entropy and gradient are left out, so the loss is exactly
 * log π(rule) for them.
 */
#include "agent/rl/ppo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

xf_ppo_hparams xf_ppo_hparams_default(void)
{
    xf_ppo_hparams h;
    h.gamma = 0.99f;
    h.lambda = 0.95f;
    h.clip = 0.2f;
    h.value_coef = 0.5f;
    h.entropy_coef = 0.01f;
    h.lr = 3e-4f;
    h.max_grad_norm = 0.5f;
    h.epochs = 4;
    h.minibatch = 64;
    h.normalize_adv = 1;
    h.hidden = 64;
    h.trunk_layers = 2;
    h.embed = 16;
    return h;
}

static void scale(float *w, size_t n, float k)
{
    for (size_t i = 0; i < n; i++) w[i] *= k;
}

xf_status xf_ppo_net_add(xf_ppo_net *net, xf_nn_params *p, int state_dim, int n_rules,
                         int max_locations, const xf_ppo_hparams *hp, xf_rng *rng,
                         xf_error *err)
{
    memset(net, 0, sizeof *net);
    if (state_dim < 1 || n_rules < 0 || max_locations < 1 || hp->hidden < 1 || hp->embed < 1 ||
        hp->trunk_layers < 1 || hp->trunk_layers > XF_NN_MLP_MAX_LAYERS)
        return XF_FAIL(err, XF_ERR_INVALID,
                       "PPO network: state %d, rules %d, locations %d, hidden %d, embed %d, "
                       "trunk layers %d (each must be at least 1, rules at least 0, layers at "
                       "most %d)",
                       state_dim, n_rules, max_locations, hp->hidden, hp->embed,
                       hp->trunk_layers, XF_NN_MLP_MAX_LAYERS);
    net->S = state_dim;
    net->A = n_rules + 1;
    net->L = max_locations;
    net->H = hp->hidden;
    net->E = hp->embed;
    int dims[XF_NN_MLP_MAX_LAYERS + 1];
    dims[0] = net->S;
    for (int l = 1; l <= hp->trunk_layers; l++) dims[l] = net->H;
    xf_status st = xf_nn_mlp_add(&net->trunk, p, "ppo/trunk", hp->trunk_layers, dims,
                                 XF_NN_ACT_TANH, XF_NN_ACT_TANH, rng, err);
    if (st != XF_OK) return st;
    st = xf_nn_linear_add(&net->rule, p, "ppo/rule", net->H, net->A, 1, rng, err);
    if (st != XF_OK) return st;
    scale(xf_nn_params_value(p, net->rule.w), xf_nn_params_size(p, net->rule.w), 0.01f);
    int edims[2] = {net->A, net->E};
    st = xf_nn_params_add(p, "ppo/rule_embed", 2, edims, &net->embed, err);
    if (st != XF_OK) return st;
    xf_nn_init_uniform(xf_nn_params_value(p, net->embed), xf_nn_params_size(p, net->embed), -1.0f,
                       1.0f, rng);
    int ldims[3] = {net->H + net->E, net->H, net->L};
    st = xf_nn_mlp_add(&net->loc, p, "ppo/loc", 2, ldims, XF_NN_ACT_TANH, XF_NN_ACT_NONE, rng,
                       err);
    if (st != XF_OK) return st;
    const xf_nn_linear *last = &net->loc.layer[1];
    scale(xf_nn_params_value(p, last->w), xf_nn_params_size(p, last->w), 0.01f);
    int vdims[4] = {net->S, net->H, net->H, 1};
    return xf_nn_mlp_add(&net->value, p, "ppo/value", 3, vdims, XF_NN_ACT_TANH, XF_NN_ACT_NONE,
                         rng, err);
}

/* ------------------------------------------------------------------ work */

void xf_ppo_work_init(xf_ppo_work *w)
{
    memset(w, 0, sizeof *w);
    xf_nn_mlp_cache_init(&w->trunk_c);
    xf_nn_mlp_cache_init(&w->loc_c);
    xf_nn_mlp_cache_init(&w->value_c);
}

void xf_ppo_work_free(xf_ppo_work *w)
{
    xf_nn_mlp_cache_free(&w->trunk_c);
    xf_nn_mlp_cache_free(&w->loc_c);
    xf_nn_mlp_cache_free(&w->value_c);
    xf_free(w->rule_logits);
    xf_free(w->rule_logp);
    xf_free(w->loc_in);
    xf_free(w->loc_logp);
    xf_free(w->loc_mask);
    xf_free(w->logp);
    xf_free(w->ent);
    xf_free(w->d_logp);
    xf_free(w->d_ent);
    xf_free(w->d_rule_logp);
    xf_free(w->d_rule_logits);
    xf_free(w->d_loc_logp);
    xf_free(w->d_loc_logits);
    xf_free(w->d_loc_in);
    xf_free(w->d_t);
    xf_free(w->d_value);
    xf_ppo_work_init(w);
}

static int grow(float **x, size_t n)
{
    float *p = xf_realloc(*x, n * sizeof *p);
    if (!p) return 0;
    *x = p;
    return 1;
}

xf_status xf_ppo_work_reserve(xf_ppo_work *w, const xf_ppo_net *net, int rows, xf_error *err)
{
    if (rows <= w->cap) return XF_OK;
    xf_status st = xf_nn_mlp_cache_reserve(&w->trunk_c, &net->trunk, rows, err);
    if (st != XF_OK) return st;
    st = xf_nn_mlp_cache_reserve(&w->loc_c, &net->loc, rows, err);
    if (st == XF_OK) st = xf_nn_mlp_cache_reserve(&w->value_c, &net->value, rows, err);
    if (st != XF_OK) return st;
    size_t r = (size_t)rows, A = (size_t)net->A, L = (size_t)net->L;
    size_t HE = (size_t)(net->H + net->E), H = (size_t)net->H;
    uint8_t *mask = xf_realloc(w->loc_mask, r * L);
    if (mask) w->loc_mask = mask;
    int ok = mask && grow(&w->rule_logits, r * A) && grow(&w->rule_logp, r * A) &&
             grow(&w->loc_in, r * HE) && grow(&w->loc_logp, r * L) &&
             grow(&w->logp, r) && grow(&w->ent, r) && grow(&w->d_logp, r) &&
             grow(&w->d_ent, r) && grow(&w->d_rule_logp, r * A) &&
             grow(&w->d_rule_logits, r * A) && grow(&w->d_loc_logp, r * L) &&
             grow(&w->d_loc_logits, r * L) && grow(&w->d_loc_in, r * HE) &&
             grow(&w->d_t, r * H) && grow(&w->d_value, r);
    if (!ok)
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory for PPO work buffers (%d rows)", rows);
    w->cap = rows;
    return XF_OK;
}

/* -------------------------------------------------------------- forward */

/* Trunk, rule log-probs (masked) and values for B rows. */
static void forward_trunk(const xf_ppo_net *net, const xf_nn_params *p, xf_ppo_work *w,
                          const float *s, const uint8_t *mask, int B)
{
    w->t = xf_nn_mlp_forward(&net->trunk, p, &w->trunk_c, s, B);
    xf_nn_linear_apply(&net->rule, p, w->rule_logits, w->t, B);
    xf_nn_log_softmax_forward(w->rule_logp, w->rule_logits, mask, B, net->A);
    w->value = xf_nn_mlp_forward(&net->value, p, &w->value_c, s, B);
}

/* Location log-probs for B rows given each row's rule and location count
 * (rows with fewer than 2 locations get an unmasked row, unused). */
static void forward_loc(const xf_ppo_net *net, const xf_nn_params *p, xf_ppo_work *w,
                        const int *rule, const int *n_loc, int B)
{
    int H = net->H, E = net->E, HE = H + E, L = net->L;
    const float *emb = xf_nn_params_value(p, net->embed);
    for (int b = 0; b < B; b++) {
        float *row = w->loc_in + (size_t)b * (size_t)HE;
        memcpy(row, w->t + (size_t)b * (size_t)H, (size_t)H * sizeof(float));
        memcpy(row + H, emb + (size_t)rule[b] * (size_t)E, (size_t)E * sizeof(float));
        int n = n_loc[b] >= 2 ? (n_loc[b] < L ? n_loc[b] : L) : L;
        uint8_t *mk = w->loc_mask + (size_t)b * (size_t)L;
        for (int l = 0; l < L; l++) mk[l] = l < n;
    }
    const float *logits = xf_nn_mlp_forward(&net->loc, p, &w->loc_c, w->loc_in, B);
    xf_nn_log_softmax_forward(w->loc_logp, logits, w->loc_mask, B, L);
}

static int pick(const float *logp, const uint8_t *mask, int C, int greedy, xf_rng *rng)
{
    if (greedy) return xf_nn_argmax(logp, mask, C);
    /* inverse CDF over exp(logp); masked entries are -inf, i.e. 0 */
    double u = (double)xf_rng_uniform(rng, 0.0f, 1.0f), acc = 0.0;
    int last = -1;
    for (int c = 0; c < C; c++) {
        if (mask && !mask[c]) continue;
        double pc = exp((double)logp[c]);
        if (pc <= 0.0) continue;
        last = c;
        acc += pc;
        if (u < acc) return c;
    }
    return last;
}

xf_status xf_ppo_act(const xf_ppo_net *net, const xf_nn_params *p, xf_ppo_work *w,
                     const float *s, const uint8_t *mask, const int *n_loc_per_rule, int greedy,
                     xf_rng *rng, int *rule, int *loc, float *logp, float *value, xf_error *err)
{
    *rule = -1;
    *loc = 0;
    *logp = 0.0f;
    *value = 0.0f;
    xf_status st = xf_ppo_work_reserve(w, net, 1, err);
    if (st != XF_OK) return st;
    forward_trunk(net, p, w, s, mask, 1);
    *value = w->value[0];
    int r = pick(w->rule_logp, mask, net->A, greedy, rng);
    if (r < 0) return XF_FAIL(err, XF_ERR_INVALID, "PPO act: the xfer mask allows no action");
    *rule = r;
    *logp = w->rule_logp[r];
    int n = n_loc_per_rule[r] < net->L ? n_loc_per_rule[r] : net->L;
    if (n < 2) return XF_OK;
    forward_loc(net, p, w, &r, &n, 1);
    int l = pick(w->loc_logp, w->loc_mask, net->L, greedy, rng);
    *loc = l;
    *logp += w->loc_logp[l];
    return XF_OK;
}

xf_status xf_ppo_eval(const xf_ppo_net *net, const xf_nn_params *p, xf_ppo_work *w,
                      const float *s, const uint8_t *mask, const int *n_loc_per_rule, int rule,
                      int loc, float *logp, float *value, xf_error *err)
{
    *logp = 0.0f;
    *value = 0.0f;
    if (rule < 0 || rule >= net->A || (mask && !mask[rule]))
        return XF_FAIL(err, XF_ERR_INVALID, "PPO eval: rule action %d is not offered", rule);
    xf_status st = xf_ppo_work_reserve(w, net, 1, err);
    if (st != XF_OK) return st;
    forward_trunk(net, p, w, s, mask, 1);
    *value = w->value[0];
    *logp = w->rule_logp[rule];
    int n = n_loc_per_rule[rule] < net->L ? n_loc_per_rule[rule] : net->L;
    if (n < 2) return XF_OK;
    if (loc < 0 || loc >= n)
        return XF_FAIL(err, XF_ERR_INVALID, "PPO eval: location %d of rule action %d (of %d)",
                       loc, rule, n);
    forward_loc(net, p, w, &rule, &n, 1);
    *logp += w->loc_logp[loc];
    return XF_OK;
}

xf_status xf_ppo_rank(const xf_ppo_net *net, const xf_nn_params *p, xf_ppo_work *w,
                      const float *s, const uint8_t *mask, const float **rule_logp, xf_error *err)
{
    xf_status st = xf_ppo_work_reserve(w, net, 1, err);
    if (st != XF_OK) return st;
    forward_trunk(net, p, w, s, mask, 1);
    *rule_logp = w->rule_logp;
    return XF_OK;
}

/* ----------------------------------------------------------------- loss */

void xf_ppo_loss_forward(const xf_ppo_net *net, const xf_nn_params *p, xf_ppo_work *w,
                         const xf_ppo_rows *r, const xf_ppo_hparams *hp, xf_ppo_loss *out)
{
    int B = r->B, A = net->A, L = net->L;
    forward_trunk(net, p, w, r->s, r->mask, B);
    forward_loc(net, p, w, r->rule, r->n_loc, B);
    xf_nn_entropy_forward(w->ent, w->rule_logp, B, A);
    double pol = 0.0, val = 0.0, ent = 0.0, kl = 0.0, clipped = 0.0;
    for (int b = 0; b < B; b++) {
        double lp = w->rule_logp[(size_t)b * (size_t)A + (size_t)r->rule[b]];
        if (r->n_loc[b] >= 2) {
            const float *ll = w->loc_logp + (size_t)b * (size_t)L;
            float e;
            xf_nn_entropy_forward(&e, ll, 1, L);
            w->ent[b] += e;
            lp += ll[r->loc[b]];
        }
        w->logp[b] = (float)lp;
        double ratio = exp(lp - (double)r->old_logp[b]);
        double a = r->adv[b];
        double lo = 1.0 - hp->clip, hi = 1.0 + hp->clip;
        double rc = ratio < lo ? lo : ratio > hi ? hi : ratio;
        pol -= fmin(ratio * a, rc * a);
        double dv = (double)w->value[b] - (double)r->ret[b];
        val += dv * dv;
        ent += w->ent[b];
        kl += (double)r->old_logp[b] - lp;
        clipped += fabs(ratio - 1.0) > hp->clip;
    }
    out->policy = pol / B;
    out->value = val / B;
    out->entropy = ent / B;
    out->approx_kl = kl / B;
    out->clip_frac = clipped / B;
    out->total = out->policy + hp->value_coef * out->value - hp->entropy_coef * out->entropy;
}

void xf_ppo_loss_backward(const xf_ppo_net *net, const xf_nn_params *p, xf_ppo_work *w,
                          const xf_ppo_rows *r, const xf_ppo_hparams *hp, float *ds)
{
    int B = r->B, A = net->A, L = net->L, H = net->H, E = net->E, HE = H + E;
    size_t nA = (size_t)B * (size_t)A, nL = (size_t)B * (size_t)L;
    memset(w->d_rule_logp, 0, nA * sizeof(float));
    memset(w->d_rule_logits, 0, nA * sizeof(float));
    memset(w->d_loc_logp, 0, nL * sizeof(float));
    memset(w->d_loc_logits, 0, nL * sizeof(float));
    memset(w->d_loc_in, 0, (size_t)B * (size_t)HE * sizeof(float));
    memset(w->d_t, 0, (size_t)B * (size_t)H * sizeof(float));
    float inv = 1.0f / (float)B;
    for (int b = 0; b < B; b++) {
        double ratio = exp((double)w->logp[b] - (double)r->old_logp[b]);
        double a = r->adv[b];
        double lo = 1.0 - hp->clip, hi = 1.0 + hp->clip;
        double rc = ratio < lo ? lo : ratio > hi ? hi : ratio;
        /* d(−min(ρA, clip(ρ)A))/d log π: −ρA where the unclipped term is the min */
        w->d_logp[b] = ratio * a <= rc * a ? (float)(-ratio * a) * inv : 0.0f;
        w->d_ent[b] = -hp->entropy_coef * inv;
        w->d_value[b] = hp->value_coef * 2.0f * (w->value[b] - r->ret[b]) * inv;
        w->d_rule_logp[(size_t)b * (size_t)A + (size_t)r->rule[b]] += w->d_logp[b];
        if (r->n_loc[b] >= 2) {
            float *dl = w->d_loc_logp + (size_t)b * (size_t)L;
            dl[r->loc[b]] += w->d_logp[b];
            xf_nn_entropy_backward(dl, &w->d_ent[b], w->loc_logp + (size_t)b * (size_t)L, 1, L);
        }
    }
    xf_nn_entropy_backward(w->d_rule_logp, w->d_ent, w->rule_logp, B, A);
    xf_nn_log_softmax_backward(w->d_rule_logits, w->d_rule_logp, w->rule_logp, B, A);
    xf_nn_linear_apply_backward(&net->rule, p, w->d_t, w->d_rule_logits, w->t, B);
    xf_nn_log_softmax_backward(w->d_loc_logits, w->d_loc_logp, w->loc_logp, B, L);
    xf_nn_mlp_backward(&net->loc, p, &w->loc_c, w->d_loc_in, w->d_loc_logits, w->loc_in, B);
    float *demb = xf_nn_params_grad(p, net->embed);
    for (int b = 0; b < B; b++) {
        if (r->n_loc[b] < 2) continue; /* no location term: nothing flows back */
        const float *d = w->d_loc_in + (size_t)b * (size_t)HE;
        float *dt = w->d_t + (size_t)b * (size_t)H;
        for (int i = 0; i < H; i++) dt[i] += d[i];
        float *de = demb + (size_t)r->rule[b] * (size_t)E;
        for (int i = 0; i < E; i++) de[i] += d[H + i];
    }
    xf_nn_mlp_backward(&net->trunk, p, &w->trunk_c, ds, w->d_t, r->s, B);
    xf_nn_mlp_backward(&net->value, p, &w->value_c, ds, w->d_value, r->s, B);
}
