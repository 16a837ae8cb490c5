/*
 * wm_train.c — training the world model by truncated backpropagation
 * through time over recorded episodes.
 *
 * B episodes run side by side from their first step in chunks of T steps.
 * A chunk's forward feeds [z_t, e(xfer_t), loc_t / L] through the LSTM from
 * the state the previous chunk ended in (carried as a constant: gradients
 * stop at the chunk boundary) and scores the heads on h_{t+1} against
 * z_{t+1}, the reward, done and the next locations; rows whose episode has
 * ended are padding (weight 0). The backward runs the T steps in reverse,
 * the hidden and cell gradients flowing from step to step, and the
 * embedding rows of the chosen xfers get the input gradient. The loss is
 * the mean over the chunk's valid (row, step) pairs of
 *   nll(z_{t+1}) / D + w_r (r̂ − r)² + bce(done) + mean_j bce(mask_j)
 *   + mean_j bce(locs_j)
 * where bce(l, y) = softplus(l) − y·l is the logistic loss on a logit,
 * mask_j's target is 1 when rule j has a location and locs_j's the fraction
 * of the location cap it offers.
 */
#include "agent/rl/wm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static float *falloc(size_t n, int *fail)
{
    float *p = xf_calloc(n ? n : 1, sizeof *p);
    if (!p) *fail = 1;
    return p;
}

xf_status xf_wm_trainer_init(xf_wm_trainer *tr, const xf_wm *wm, int B, int T, xf_error *err)
{
    memset(tr, 0, sizeof *tr);
    if (B < 1 || T < 1)
        return XF_FAIL(err, XF_ERR_INVALID, "world-model trainer: batch %d and chunk %d must be >= 1",
                       B, T);
    tr->wm = wm;
    tr->B = B;
    tr->T = T;
    size_t b = (size_t)B, t = (size_t)T, H = (size_t)wm->cfg.hidden;
    int fail = 0;
    tr->x = falloc(t * b * (size_t)wm->in_dim, &fail);
    tr->h = falloc((t + 1) * b * H, &fail);
    tr->c = falloc((t + 1) * b * H, &fail);
    tr->head = falloc(t * b * (size_t)wm->head_dim, &fail);
    tr->post = falloc(t * b * (size_t)wm->cfg.n_mix, &fail);
    tr->mix = falloc(t * b * (size_t)wm->mdn_dim, &fail);
    tr->dmix = falloc((size_t)wm->mdn_dim, &fail);
    tr->target = falloc(t * b * (size_t)wm->cfg.z_dim, &fail);
    tr->dhead = falloc(b * (size_t)wm->head_dim, &fail);
    tr->dh = falloc(b * H, &fail);
    tr->dc = falloc(b * H, &fail);
    tr->dh_prev = falloc(b * H, &fail);
    tr->dc_prev = falloc(b * H, &fail);
    tr->dx = falloc(b * (size_t)wm->in_dim, &fail);
    tr->weight = falloc(t * b, &fail);
    tr->row = falloc(b, &fail);
    tr->ep = xf_calloc(b, sizeof *tr->ep);
    tr->cache = xf_calloc(t, sizeof *tr->cache);
    if (!tr->ep || !tr->cache) fail = 1;
    for (int s = 0; !fail && s < T; s++) {
        xf_nn_lstm_cache_init(&tr->cache[s]);
        if (xf_nn_lstm_cache_reserve(&tr->cache[s], B, wm->cfg.hidden, err)) fail = 2;
    }
    if (fail) {
        xf_wm_trainer_free(tr);
        return fail == 2 ? XF_ERR_NOMEM
                         : XF_FAIL(err, XF_ERR_NOMEM,
                                   "out of memory for world-model training (batch %d, chunk %d)",
                                   B, T);
    }
    return XF_OK;
}

void xf_wm_trainer_free(xf_wm_trainer *tr)
{
    if (tr->cache)
        for (int s = 0; s < tr->T; s++) xf_nn_lstm_cache_free(&tr->cache[s]);
    xf_free(tr->cache);
    xf_free(tr->x);
    xf_free(tr->h);
    xf_free(tr->c);
    xf_free(tr->head);
    xf_free(tr->post);
    xf_free(tr->mix);
    xf_free(tr->dmix);
    xf_free(tr->target);
    xf_free(tr->dhead);
    xf_free(tr->dh);
    xf_free(tr->dc);
    xf_free(tr->dh_prev);
    xf_free(tr->dc_prev);
    xf_free(tr->dx);
    xf_free(tr->weight);
    xf_free(tr->row);
    xf_free(tr->ep);
    memset(tr, 0, sizeof *tr);
}

void xf_wm_trainer_start(xf_wm_trainer *tr, const xf_wm_data *d, const int *ep, int nb)
{
    tr->data = d;
    for (int b = 0; b < tr->B; b++) tr->ep[b] = b < nb ? ep[b] : -1;
    tr->t0 = 0;
    tr->steps = 0;
    size_t n = (size_t)tr->B * (size_t)tr->wm->cfg.hidden;
    memset(tr->h, 0, n * sizeof *tr->h);
    memset(tr->c, 0, n * sizeof *tr->c);
}

/* Steps of row b's episode, 0 for an empty row. */
static int row_len(const xf_wm_trainer *tr, int b)
{
    return tr->ep[b] < 0 ? 0 : tr->data->ep[tr->ep[b]].T;
}

/* 1 while a chunk is left (some row's episode has steps from t0 on). */
static int trainer_more(const xf_wm_trainer *tr)
{
    for (int b = 0; b < tr->B; b++)
        if (row_len(tr, b) > tr->t0) return 1;
    return 0;
}

static double softplus(double l)
{
    return l > 0 ? l + log1p(exp(-l)) : log1p(exp(l));
}

static float sigm(float l)
{
    if (l >= 0.0f) return 1.0f / (1.0f + expf(-l));
    float e = expf(l);
    return e / (1.0f + e);
}

void xf_wm_chunk_forward(xf_wm_trainer *tr, const xf_nn_params *p, xf_wm_loss *loss)
{
    const xf_wm *wm = tr->wm;
    int B = tr->B, D = wm->cfg.z_dim, N = wm->cfg.n_xfers, H = wm->cfg.hidden;
    int I = wm->in_dim, W = wm->head_dim, K = wm->cfg.n_mix, M = wm->mdn_dim;
    float L = (float)wm->cfg.max_locations;
    const float *wx = xf_nn_params_value(p, wm->lstm.wx), *wh = xf_nn_params_value(p, wm->lstm.wh);
    const float *lb = xf_nn_params_value(p, wm->lstm.b);
    int steps = 0;
    for (int b = 0; b < B; b++) {
        int left = row_len(tr, b) - tr->t0;
        if (left > steps) steps = left;
    }
    if (steps > tr->T) steps = tr->T;
    tr->steps = steps;
    memset(loss, 0, sizeof *loss);
    float *nll = tr->row;
    for (int s = 0; s < steps; s++) {
        int t = tr->t0 + s;
        float *x = tr->x + (size_t)s * (size_t)B * (size_t)I;
        float *y = tr->target + (size_t)s * (size_t)B * (size_t)D;
        float *w = tr->weight + (size_t)s * (size_t)B;
        for (int b = 0; b < B; b++) {
            w[b] = t < row_len(tr, b) ? 1.0f : 0.0f;
            float *xr = x + (size_t)b * (size_t)I, *yr = y + (size_t)b * (size_t)D;
            if (w[b] == 0.0f) {
                memset(xr, 0, (size_t)I * sizeof *xr);
                memset(yr, 0, (size_t)D * sizeof *yr);
                continue;
            }
            const xf_wm_episode *e = &tr->data->ep[tr->ep[b]];
            xf_wm_input(wm, p, xr, e->z + (size_t)t * (size_t)D, e->xfer[t], e->loc[t]);
            memcpy(yr, e->z + (size_t)(t + 1) * (size_t)D, (size_t)D * sizeof *yr);
        }
        float *hs = tr->h + (size_t)(s + 1) * (size_t)B * (size_t)H;
        float *cs = tr->c + (size_t)(s + 1) * (size_t)B * (size_t)H;
        xf_nn_lstm_forward(hs, cs, &tr->cache[s], x, hs - (size_t)B * (size_t)H,
                           cs - (size_t)B * (size_t)H, wx, wh, lb, B, I, H);
        float *head = tr->head + (size_t)s * (size_t)B * (size_t)W;
        xf_nn_linear_apply(&wm->head, p, head, hs, B);
        float *post = tr->post + (size_t)s * (size_t)B * (size_t)K;
        float *mix = tr->mix + (size_t)s * (size_t)B * (size_t)M;
        for (int b = 0; b < B; b++)
            xf_wm_mixture(wm, mix + (size_t)b * (size_t)M, head + (size_t)b * (size_t)W);
        xf_nn_mdn_forward(nll, post, mix, y, B, K, D);
        for (int b = 0; b < B; b++) {
            if (w[b] == 0.0f) continue;
            const xf_wm_episode *e = &tr->data->ep[tr->ep[b]];
            const float *hr = head + (size_t)b * (size_t)W;
            const uint16_t *lc = e->locs + (size_t)t * (size_t)N;
            double dr = (double)hr[xf_wm_off_reward(wm)] - e->reward[t];
            double dn = softplus(hr[xf_wm_off_done(wm)]) - e->done[t] * (double)hr[xf_wm_off_done(wm)];
            double mk = 0.0, lo = 0.0;
            for (int j = 0; j < N; j++) {
                double lm = hr[xf_wm_off_mask(wm) + j], ll = hr[xf_wm_off_locs(wm) + j];
                mk += softplus(lm) - (lc[j] > 0 ? lm : 0.0);
                lo += softplus(ll) - (double)lc[j] / L * ll;
            }
            loss->nll += (double)nll[b] / D;
            loss->reward += dr * dr;
            loss->done += dn;
            loss->mask += N > 0 ? mk / N : 0.0;
            loss->locs += N > 0 ? lo / N : 0.0;
            loss->count++;
        }
    }
    tr->count = (double)loss->count;
    if (loss->count > 0) {
        double n = (double)loss->count;
        loss->nll /= n;
        loss->reward /= n;
        loss->done /= n;
        loss->mask /= n;
        loss->locs /= n;
    }
    loss->total = loss->nll + wm->cfg.reward_weight * loss->reward + loss->done + loss->mask +
                  loss->locs;
}

void xf_wm_chunk_backward(xf_wm_trainer *tr, const xf_nn_params *p)
{
    const xf_wm *wm = tr->wm;
    if (tr->count <= 0) return;
    int B = tr->B, D = wm->cfg.z_dim, N = wm->cfg.n_xfers, H = wm->cfg.hidden;
    int I = wm->in_dim, W = wm->head_dim, K = wm->cfg.n_mix, E = wm->cfg.embed, M = wm->mdn_dim;
    float L = (float)wm->cfg.max_locations;
    const float *wx = xf_nn_params_value(p, wm->lstm.wx), *wh = xf_nn_params_value(p, wm->lstm.wh);
    float *gwx = xf_nn_params_grad(p, wm->lstm.wx), *gwh = xf_nn_params_grad(p, wm->lstm.wh);
    float *gb = xf_nn_params_grad(p, wm->lstm.b), *gembed = xf_nn_params_grad(p, wm->embed);
    size_t BH = (size_t)B * (size_t)H;
    float inv = (float)(1.0 / tr->count);
    float *dn = tr->row;
    memset(tr->dh, 0, BH * sizeof *tr->dh);
    memset(tr->dc, 0, BH * sizeof *tr->dc);
    for (int s = tr->steps - 1; s >= 0; s--) {
        int t = tr->t0 + s;
        const float *x = tr->x + (size_t)s * (size_t)B * (size_t)I;
        const float *y = tr->target + (size_t)s * (size_t)B * (size_t)D;
        const float *w = tr->weight + (size_t)s * (size_t)B;
        const float *head = tr->head + (size_t)s * (size_t)B * (size_t)W;
        const float *post = tr->post + (size_t)s * (size_t)B * (size_t)K;
        memset(tr->dhead, 0, (size_t)B * (size_t)W * sizeof *tr->dhead);
        for (int b = 0; b < B; b++) {
            dn[b] = w[b] * inv / (float)D;
            if (w[b] == 0.0f) continue;
            const xf_wm_episode *e = &tr->data->ep[tr->ep[b]];
            const float *hr = head + (size_t)b * (size_t)W;
            float *g = tr->dhead + (size_t)b * (size_t)W;
            const uint16_t *lc = e->locs + (size_t)t * (size_t)N;
            int orw = xf_wm_off_reward(wm), odn = xf_wm_off_done(wm);
            int omk = xf_wm_off_mask(wm), olc = xf_wm_off_locs(wm);
            g[orw] = inv * wm->cfg.reward_weight * 2.0f * (hr[orw] - e->reward[t]);
            g[odn] = inv * (sigm(hr[odn]) - (float)e->done[t]);
            for (int j = 0; j < N; j++) {
                g[omk + j] = inv / (float)N * (sigm(hr[omk + j]) - (lc[j] > 0 ? 1.0f : 0.0f));
                g[olc + j] = inv / (float)N * (sigm(hr[olc + j]) - (float)lc[j] / L);
            }
        }
        const float *mix = tr->mix + (size_t)s * (size_t)B * (size_t)M;
        for (int b = 0; b < B; b++) {
            if (w[b] == 0.0f) continue;
            size_t bm = (size_t)b * (size_t)M;
            memset(tr->dmix, 0, (size_t)M * sizeof *tr->dmix);
            xf_nn_mdn_backward(tr->dmix, dn + b, post + (size_t)b * (size_t)K, mix + bm,
                               y + (size_t)b * (size_t)D, 1, K, D);
            xf_wm_mixture_backward(wm, tr->dhead + (size_t)b * (size_t)W, tr->dmix,
                                   head + (size_t)b * (size_t)W);
        }
        const float *hs = tr->h + (size_t)(s + 1) * BH;
        /* dh holds the gradient from step s + 1; add the heads'. */
        xf_nn_linear_apply_backward(&wm->head, p, tr->dh, tr->dhead, hs, B);
        memset(tr->dx, 0, (size_t)B * (size_t)I * sizeof *tr->dx);
        memset(tr->dh_prev, 0, BH * sizeof *tr->dh_prev);
        memset(tr->dc_prev, 0, BH * sizeof *tr->dc_prev);
        xf_nn_lstm_backward(tr->dx, tr->dh_prev, tr->dc_prev, gwx, gwh, gb, tr->dh, tr->dc,
                            &tr->cache[s], x, hs - BH, tr->c + (size_t)s * BH, wx, wh, B, I, H);
        for (int b = 0; b < B; b++) {
            if (w[b] == 0.0f) continue;
            const xf_wm_episode *e = &tr->data->ep[tr->ep[b]];
            float *ge = gembed + (size_t)e->xfer[t] * (size_t)E;
            const float *dxr = tr->dx + (size_t)b * (size_t)I + D;
            for (int j = 0; j < E; j++) ge[j] += dxr[j];
        }
        float *tmp = tr->dh;
        tr->dh = tr->dh_prev;
        tr->dh_prev = tmp;
        tmp = tr->dc;
        tr->dc = tr->dc_prev;
        tr->dc_prev = tmp;
    }
}

/* Moves to the next chunk, carrying the LSTM state. */
static void chunk_next(xf_wm_trainer *tr)
{
    size_t BH = (size_t)tr->B * (size_t)tr->wm->cfg.hidden;
    memmove(tr->h, tr->h + (size_t)tr->steps * BH, BH * sizeof *tr->h);
    memmove(tr->c, tr->c + (size_t)tr->steps * BH, BH * sizeof *tr->c);
    tr->t0 += tr->steps;
    tr->steps = 0;
}

static void add_loss(xf_wm_loss *acc, const xf_wm_loss *l)
{
    double n = (double)l->count;
    acc->total += l->total * n;
    acc->nll += l->nll * n;
    acc->reward += l->reward * n;
    acc->done += l->done * n;
    acc->mask += l->mask * n;
    acc->locs += l->locs * n;
    acc->count += l->count;
}

static void mean_loss(xf_wm_loss *acc)
{
    if (acc->count == 0) return;
    double n = (double)acc->count;
    acc->total /= n;
    acc->nll /= n;
    acc->reward /= n;
    acc->done /= n;
    acc->mask /= n;
    acc->locs /= n;
}

xf_status xf_wm_train_pass(xf_wm_trainer *tr, xf_nn_params *p, xf_nn_adam *adam,
                           const xf_wm_data *d, const int *ep, int n, float clip,
                           xf_wm_loss *loss, xf_error *err)
{
    xf_wm_loss acc, l;
    memset(&acc, 0, sizeof acc);
    for (int i = 0; i < n; i += tr->B) {
        xf_wm_trainer_start(tr, d, ep + i, n - i < tr->B ? n - i : tr->B);
        while (trainer_more(tr)) {
            xf_nn_params_zero_grad(p);
            xf_wm_chunk_forward(tr, p, &l);
            if (!isfinite(l.total))
                return XF_FAIL(err, XF_ERR_INTERNAL,
                               "world-model loss is not finite (nll %g, reward %g) at step %d of "
                               "episode %d", l.nll, l.reward, tr->t0, ep[i]);
            xf_wm_chunk_backward(tr, p);
            if (clip > 0) xf_nn_clip_grad_norm(p, clip);
            xf_nn_adam_step(adam, p);
            add_loss(&acc, &l);
            chunk_next(tr);
        }
    }
    mean_loss(&acc);
    if (loss) *loss = acc;
    return XF_OK;
}

void xf_wm_eval(xf_wm_trainer *tr, const xf_nn_params *p, const xf_wm_data *d, const int *ep,
                int n, xf_wm_loss *loss)
{
    xf_wm_loss acc, l;
    memset(&acc, 0, sizeof acc);
    for (int i = 0; i < n; i += tr->B) {
        xf_wm_trainer_start(tr, d, ep + i, n - i < tr->B ? n - i : tr->B);
        while (trainer_more(tr)) {
            xf_wm_chunk_forward(tr, p, &l);
            add_loss(&acc, &l);
            chunk_next(tr);
        }
    }
    mean_loss(&acc);
    *loss = acc;
}
