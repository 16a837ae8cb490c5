/*
 * ppo_update.c — the data side of PPO (agent/rl/ppo.h): the rollout buffer,
 * GAE(γ, λ) advantages and returns, and the update that runs epochs of
 * shuffled minibatches through the clipped loss, clips the gradient norm
 * and takes Adam steps. With a state hook the states are recomputed and
 * differentiated through the encoder at every minibatch, so the GNN is
 * trained end to end with the policy.
 */
#include "agent/rl/ppo.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void xf_ppo_gae(const float *reward, const float *value, const uint8_t *done, int T,
                float last_value, float gamma, float lambda, float *adv, float *ret)
{
    double next_adv = 0.0, next_value = last_value;
    for (int t = T - 1; t >= 0; t--) {
        double keep = done[t] ? 0.0 : 1.0;
        double delta = (double)reward[t] + gamma * next_value * keep - (double)value[t];
        double a = delta + (double)gamma * (double)lambda * keep * next_adv;
        adv[t] = (float)a;
        ret[t] = (float)(a + (double)value[t]);
        next_adv = a;
        next_value = value[t];
    }
}

/* ---------------------------------------------------------------- buffer */

void xf_ppo_buffer_init(xf_ppo_buffer *b, int state_dim, int n_actions)
{
    memset(b, 0, sizeof *b);
    b->S = state_dim;
    b->A = n_actions;
}

void xf_ppo_buffer_free(xf_ppo_buffer *b)
{
    xf_free(b->s);
    xf_free(b->mask);
    xf_free(b->n_loc);
    xf_free(b->rule);
    xf_free(b->loc);
    xf_free(b->logp);
    xf_free(b->value);
    xf_free(b->reward);
    xf_free(b->done);
    xf_free(b->adv);
    xf_free(b->ret);
    xf_ppo_buffer_init(b, b->S, b->A);
}

void xf_ppo_buffer_clear(xf_ppo_buffer *b) { b->n = 0; }

#define GROW(ptr, n)                                                                              \
    do {                                                                                          \
        void *np_ = xf_realloc((ptr), (n) * sizeof *(ptr));                                          \
        if (!np_) goto nomem;                                                                     \
        (ptr) = np_;                                                                              \
    } while (0)

static xf_status buffer_grow(xf_ppo_buffer *b, xf_error *err)
{
    size_t cap = b->cap ? 2 * (size_t)b->cap : 256;
    GROW(b->s, cap * (size_t)b->S);
    GROW(b->mask, cap * (size_t)b->A);
    GROW(b->n_loc, cap);
    GROW(b->rule, cap);
    GROW(b->loc, cap);
    GROW(b->logp, cap);
    GROW(b->value, cap);
    GROW(b->reward, cap);
    GROW(b->done, cap);
    GROW(b->adv, cap);
    GROW(b->ret, cap);
    b->cap = (int)cap;
    return XF_OK;
nomem:
    return XF_FAIL(err, XF_ERR_NOMEM, "out of memory growing the PPO rollout buffer to %zu steps",
                   cap);
}

xf_status xf_ppo_buffer_add(xf_ppo_buffer *b, const float *s, const uint8_t *mask, int n_loc,
                            int rule, int loc, float logp, float value, float reward, int done,
                            xf_error *err)
{
    if (b->n == b->cap) {
        xf_status st = buffer_grow(b, err);
        if (st != XF_OK) return st;
    }
    size_t i = (size_t)b->n;
    memcpy(b->s + i * (size_t)b->S, s, (size_t)b->S * sizeof(float));
    if (mask)
        memcpy(b->mask + i * (size_t)b->A, mask, (size_t)b->A);
    else
        memset(b->mask + i * (size_t)b->A, 1, (size_t)b->A);
    b->n_loc[i] = n_loc;
    b->rule[i] = rule;
    b->loc[i] = loc;
    b->logp[i] = logp;
    b->value[i] = value;
    b->reward[i] = reward;
    b->done[i] = (uint8_t)(done != 0);
    b->n++;
    return XF_OK;
}

void xf_ppo_buffer_finish(xf_ppo_buffer *b, float last_value, const xf_ppo_hparams *hp)
{
    xf_ppo_gae(b->reward, b->value, b->done, b->n, last_value, hp->gamma, hp->lambda, b->adv,
               b->ret);
    if (!hp->normalize_adv || b->n < 2) return;
    double mean = 0.0, var = 0.0;
    for (int i = 0; i < b->n; i++) mean += b->adv[i];
    mean /= b->n;
    for (int i = 0; i < b->n; i++) var += (b->adv[i] - mean) * (b->adv[i] - mean);
    double sd = sqrt(var / b->n) + 1e-8;
    for (int i = 0; i < b->n; i++) b->adv[i] = (float)((b->adv[i] - mean) / sd);
}

void xf_ppo_buffer_imitate_from(xf_ppo_buffer *b, int from)
{
    for (int i = from < 0 ? 0 : from; i < b->n; i++)
        if (b->adv[i] < 1.0f) b->adv[i] = 1.0f;
}

/* ---------------------------------------------------------------- update */

/* One minibatch gathered into contiguous rows. */
typedef struct gathered {
    float *s, *ds, *old_logp, *adv, *ret;
    uint8_t *mask;
    int *n_loc, *rule, *loc, *idx;
} gathered;

static void gathered_free(gathered *g)
{
    xf_free(g->s);
    xf_free(g->ds);
    xf_free(g->old_logp);
    xf_free(g->adv);
    xf_free(g->ret);
    xf_free(g->mask);
    xf_free(g->n_loc);
    xf_free(g->rule);
    xf_free(g->loc);
    xf_free(g->idx);
}

static xf_status gathered_alloc(gathered *g, int rows, int S, int A, int n, xf_error *err)
{
    size_t r = (size_t)rows;
    memset(g, 0, sizeof *g);
    g->s = xf_malloc(r * (size_t)S * sizeof *g->s);
    g->ds = xf_malloc(r * (size_t)S * sizeof *g->ds);
    g->old_logp = xf_malloc(r * sizeof *g->old_logp);
    g->adv = xf_malloc(r * sizeof *g->adv);
    g->ret = xf_malloc(r * sizeof *g->ret);
    g->mask = xf_malloc(r * (size_t)A);
    g->n_loc = xf_malloc(r * sizeof *g->n_loc);
    g->rule = xf_malloc(r * sizeof *g->rule);
    g->loc = xf_malloc(r * sizeof *g->loc);
    g->idx = xf_malloc((size_t)n * sizeof *g->idx);
    if (g->s && g->ds && g->old_logp && g->adv && g->ret && g->mask && g->n_loc && g->rule &&
        g->loc && g->idx)
        return XF_OK;
    gathered_free(g);
    return XF_FAIL(err, XF_ERR_NOMEM, "out of memory for a PPO minibatch of %d rows", rows);
}

static void gather(gathered *g, const xf_ppo_buffer *b, const int *rows, int B, int copy_states)
{
    for (int k = 0; k < B; k++) {
        size_t i = (size_t)rows[k];
        if (copy_states)
            memcpy(g->s + (size_t)k * (size_t)b->S, b->s + i * (size_t)b->S,
                   (size_t)b->S * sizeof(float));
        memcpy(g->mask + (size_t)k * (size_t)b->A, b->mask + i * (size_t)b->A, (size_t)b->A);
        g->n_loc[k] = b->n_loc[i];
        g->rule[k] = b->rule[i];
        g->loc[k] = b->loc[i];
        g->old_logp[k] = b->logp[i];
        g->adv[k] = b->adv[i];
        g->ret[k] = b->ret[i];
    }
}

xf_status xf_ppo_update(const xf_ppo_net *net, xf_nn_params *p, xf_nn_adam *opt,
                        xf_ppo_work *w, const xf_ppo_buffer *b, const xf_ppo_hparams *hp,
                        const xf_ppo_state_hook *hook, xf_rng *rng, xf_ppo_update_stats *stats,
                        xf_error *err)
{
    if (stats) memset(stats, 0, sizeof *stats);
    if (b->n == 0) return XF_OK;
    int mb = hp->minibatch > 0 && hp->minibatch < b->n ? hp->minibatch : b->n;
    xf_status st = xf_ppo_work_reserve(w, net, mb, err);
    if (st != XF_OK) return st;
    gathered g;
    st = gathered_alloc(&g, mb, b->S, b->A, b->n, err);
    if (st != XF_OK) return st;
    for (int i = 0; i < b->n; i++) g.idx[i] = i;
    xf_ppo_loss sum;
    memset(&sum, 0, sizeof sum);
    double norm_sum = 0.0;
    int count = 0;
    for (int epoch = 0; epoch < hp->epochs; epoch++) {
        for (int i = b->n - 1; i > 0; i--) {
            int j = (int)(xf_rng_next(rng) % (uint64_t)(i + 1));
            int t = g.idx[i];
            g.idx[i] = g.idx[j];
            g.idx[j] = t;
        }
        for (int start = 0; start < b->n; start += mb) {
            int B = b->n - start < mb ? b->n - start : mb;
            const int *rows = g.idx + start;
            gather(&g, b, rows, B, hook == NULL);
            xf_nn_params_zero_grad(p);
            if (hook) {
                st = hook->forward(hook->user, rows, B, g.s, err);
                if (st != XF_OK) goto out;
            }
            xf_ppo_rows r = {B, g.s, g.mask, g.n_loc, g.rule, g.loc, g.old_logp, g.adv, g.ret};
            xf_ppo_loss l;
            xf_ppo_loss_forward(net, p, w, &r, hp, &l);
            if (hook) memset(g.ds, 0, (size_t)B * (size_t)b->S * sizeof(float));
            xf_ppo_loss_backward(net, p, w, &r, hp, hook ? g.ds : NULL);
            if (hook) {
                st = hook->backward(hook->user, rows, B, g.ds, err);
                if (st != XF_OK) goto out;
            }
            norm_sum += xf_nn_clip_grad_norm(p, hp->max_grad_norm);
            xf_nn_adam_step(opt, p);
            sum.total += l.total;
            sum.policy += l.policy;
            sum.value += l.value;
            sum.entropy += l.entropy;
            sum.approx_kl += l.approx_kl;
            sum.clip_frac += l.clip_frac;
            count++;
        }
    }
    if (stats && count > 0) {
        stats->minibatches = count;
        stats->grad_norm = (float)(norm_sum / count);
        stats->last.total = sum.total / count;
        stats->last.policy = sum.policy / count;
        stats->last.value = sum.value / count;
        stats->last.entropy = sum.entropy / count;
        stats->last.approx_kl = sum.approx_kl / count;
        stats->last.clip_frac = sum.clip_frac / count;
    }
out:
    gathered_free(&g);
    return st;
}
