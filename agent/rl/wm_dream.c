/*
 * wm_dream.c — the dream: an environment that steps the world model instead
 * of the real one, with the same shape as xf_env for the controller (a
 * state vector, an xfer mask with the no-op, locations per xfer, rewards,
 * done).
 *
 * The state is [z_t, h_t] as in World Models: h_t the LSTM's hidden state
 * after the previous step, z_t the latent of the current graph (sampled).
 * A step feeds [z_t, e(xfer), loc / L] through the LSTM and reads the heads
 * on h_{t+1}: z_{t+1} from the mixture at temperature τ, the reward, done
 * (logit > 0) and the masks of the next state (rule j offered when its mask
 * logit is > 0, with max(1, round(sigmoid(locs_j)·L)) locations). Actions
 * the masks exclude are invalid: penalty, state unchanged, as in the real
 * environment. Every step is timed.
 */
#include "agent/rl/wm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct xf_dream {
    const xf_wm *wm;
    const xf_nn_params *p;
    xf_dream_options opt;
    xf_rng rng;
    float *z0;        /* D */
    uint16_t *locs0;  /* N */
    float *state;     /* D + H: [z | h] */
    float *c, *h_new, *c_new; /* H */
    float *x;         /* in_dim */
    float *head;      /* head_dim */
    float *mix;       /* mdn_dim: mixture parameters of head */
    uint8_t *mask;    /* N + 1 */
    int *locs;        /* N */
    xf_nn_lstm_cache cache;
    int steps;
    int64_t n_steps;
    double seconds;
};

xf_dream_options xf_dream_options_default(void)
{
    xf_dream_options o;
    o.tau = 1.0f;
    o.max_steps = 200;
    o.invalid_penalty = -1.0f;
    o.seed = 1;
    return o;
}

void xf_dream_free(xf_dream *d)
{
    if (!d) return;
    xf_free(d->z0);
    xf_free(d->locs0);
    xf_free(d->state);
    xf_free(d->c);
    xf_free(d->h_new);
    xf_free(d->c_new);
    xf_free(d->x);
    xf_free(d->head);
    xf_free(d->mix);
    xf_free(d->mask);
    xf_free(d->locs);
    xf_nn_lstm_cache_free(&d->cache);
    xf_free(d);
}

xf_status xf_dream_create(const xf_wm *wm, const xf_nn_params *p, const float *z0,
                          const uint16_t *locs0, const xf_dream_options *opt, xf_dream **out,
                          xf_error *err)
{
    *out = NULL;
    xf_dream_options o = opt ? *opt : xf_dream_options_default();
    if (o.max_steps < 1)
        return XF_FAIL(err, XF_ERR_INVALID, "dream: max_steps %d must be >= 1", o.max_steps);
    int D = wm->cfg.z_dim, N = wm->cfg.n_xfers, H = wm->cfg.hidden;
    xf_dream *d = xf_calloc(1, sizeof *d);
    if (!d) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory creating a dream");
    d->wm = wm;
    d->p = p;
    d->opt = o;
    xf_rng_seed(&d->rng, o.seed);
    xf_nn_lstm_cache_init(&d->cache);
    d->z0 = xf_malloc((size_t)D * sizeof *d->z0);
    d->locs0 = xf_malloc((size_t)N * sizeof *d->locs0);
    d->state = xf_calloc((size_t)(D + H), sizeof *d->state);
    d->c = xf_calloc((size_t)H, sizeof *d->c);
    d->h_new = xf_calloc((size_t)H, sizeof *d->h_new);
    d->c_new = xf_calloc((size_t)H, sizeof *d->c_new);
    d->x = xf_calloc((size_t)wm->in_dim, sizeof *d->x);
    d->head = xf_calloc((size_t)wm->head_dim, sizeof *d->head);
    d->mix = xf_calloc((size_t)wm->mdn_dim, sizeof *d->mix);
    d->mask = xf_calloc((size_t)N + 1, sizeof *d->mask);
    d->locs = xf_calloc((size_t)N, sizeof *d->locs);
    if (!d->z0 || !d->locs0 || !d->state || !d->c || !d->h_new || !d->c_new || !d->x ||
        !d->head || !d->mix || !d->mask || !d->locs) {
        xf_dream_free(d);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory creating a dream");
    }
    xf_status st = xf_nn_lstm_cache_reserve(&d->cache, 1, H, err);
    if (st) {
        xf_dream_free(d);
        return st;
    }
    memcpy(d->z0, z0, (size_t)D * sizeof *z0);
    for (int j = 0; j < N; j++)
        d->locs0[j] = (uint16_t)(locs0[j] < wm->cfg.max_locations ? locs0[j] : wm->cfg.max_locations);
    xf_dream_reset(d);
    *out = d;
    return XF_OK;
}

void xf_dream_reset(xf_dream *d)
{
    int D = d->wm->cfg.z_dim, N = d->wm->cfg.n_xfers, H = d->wm->cfg.hidden;
    memcpy(d->state, d->z0, (size_t)D * sizeof *d->state);
    memset(d->state + D, 0, (size_t)H * sizeof *d->state);
    memset(d->c, 0, (size_t)H * sizeof *d->c);
    for (int j = 0; j < N; j++) {
        d->locs[j] = d->locs0[j];
        d->mask[j] = d->locs0[j] > 0;
    }
    d->mask[N] = 1;
    d->steps = 0;
}

void xf_dream_step(xf_dream *d, int xfer, int loc, xf_dream_step_result *r)
{
    const xf_wm *wm = d->wm;
    int D = wm->cfg.z_dim, N = wm->cfg.n_xfers, H = wm->cfg.hidden;
    d->steps++;
    r->reward = 0.0f;
    r->valid = 1;
    if (xfer == N) {
        r->done = 1;
        return;
    }
    if (xfer < 0 || xfer >= N || !d->mask[xfer] || loc < 0 || loc >= d->locs[xfer]) {
        r->valid = 0;
        r->reward = d->opt.invalid_penalty;
        r->done = d->steps >= d->opt.max_steps;
        return;
    }
    double t0 = xf_clock_now();
    const xf_nn_params *p = d->p;
    xf_wm_input(wm, p, d->x, d->state, xfer, loc);
    xf_nn_lstm_forward(d->h_new, d->c_new, &d->cache, d->x, d->state + D, d->c,
                       xf_nn_params_value(p, wm->lstm.wx), xf_nn_params_value(p, wm->lstm.wh),
                       xf_nn_params_value(p, wm->lstm.b), 1, wm->in_dim, H);
    xf_nn_linear_apply(&wm->head, p, d->head, d->h_new, 1);
    xf_wm_mixture(wm, d->mix, d->head);
    xf_nn_mdn_sample(d->state, d->mix, 1, wm->cfg.n_mix, D, d->opt.tau, &d->rng);
    memcpy(d->state + D, d->h_new, (size_t)H * sizeof *d->state);
    memcpy(d->c, d->c_new, (size_t)H * sizeof *d->c);
    const float *ml = d->head + xf_wm_off_mask(wm), *ll = d->head + xf_wm_off_locs(wm);
    int any = 0;
    float L = (float)wm->cfg.max_locations;
    for (int j = 0; j < N; j++) {
        d->mask[j] = ml[j] > 0.0f;
        int n = 0;
        if (d->mask[j]) {
            n = (int)lrintf(L / (1.0f + expf(-ll[j])));
            n = n < 1 ? 1 : n > wm->cfg.max_locations ? wm->cfg.max_locations : n;
            any = 1;
        }
        d->locs[j] = n;
    }
    r->reward = d->head[xf_wm_off_reward(wm)];
    r->done = d->head[xf_wm_off_done(wm)] > 0.0f || !any || d->steps >= d->opt.max_steps;
    d->seconds += xf_clock_now() - t0;
    d->n_steps++;
}

int xf_dream_state_dim(const xf_dream *d) { return d->wm->cfg.z_dim + d->wm->cfg.hidden; }
const float *xf_dream_state(const xf_dream *d) { return d->state; }
int xf_dream_num_xfers(const xf_dream *d) { return d->wm->cfg.n_xfers; }
const uint8_t *xf_dream_xfer_mask(const xf_dream *d) { return d->mask; }

int xf_dream_num_locations(const xf_dream *d, int xfer)
{
    return xfer < 0 || xfer >= d->wm->cfg.n_xfers ? 0 : d->locs[xfer];
}

void xf_dream_timing(const xf_dream *d, int64_t *steps, double *seconds)
{
    *steps = d->n_steps;
    *seconds = d->seconds;
}
