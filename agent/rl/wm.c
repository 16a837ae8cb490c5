/*
 * wm.c — the MDN-RNN world model's parameters and its step input: a learned
 * embedding per xfer (the no-op included), an LSTM over [z, embedding,
 * scaled location], and one linear layer on the LSTM's hidden state holding
 * the five heads (mixture over the next z, reward, done, next xfer mask,
 * next location counts). Training is in wm_train.c, sampling in wm_dream.c.
 */
#include "agent/rl/wm.h"

#include <math.h>

xf_wm_config xf_wm_config_default(int z_dim, int n_xfers)
{
    xf_wm_config c;
    c.z_dim = z_dim;
    c.n_xfers = n_xfers;
    c.max_locations = 200;
    c.embed = 16;
    c.hidden = 256;
    c.n_mix = 8;
    c.reward_weight = 1.0f;
    c.min_sigma = 0.05f;
    return c;
}

xf_status xf_wm_add(xf_wm *wm, xf_nn_params *p, const xf_wm_config *cfg, xf_rng *rng,
                    xf_error *err)
{
    const char *bad = cfg->z_dim < 1           ? "z_dim"
                      : cfg->n_xfers < 0       ? "n_xfers"
                      : cfg->max_locations < 1 ? "max_locations"
                      : cfg->embed < 1         ? "embed"
                      : cfg->hidden < 1        ? "hidden"
                      : cfg->n_mix < 1         ? "n_mix"
                                               : NULL;
    if (bad)
        return XF_FAIL(err, XF_ERR_INVALID,
                       "world model: %s out of range (z_dim %d, n_xfers %d, max_locations %d, "
                       "embed %d, hidden %d, n_mix %d: n_xfers must be >= 0, the others >= 1)",
                       bad, cfg->z_dim, cfg->n_xfers, cfg->max_locations, cfg->embed, cfg->hidden,
                       cfg->n_mix);
    if (!(cfg->min_sigma > 0))
        return XF_FAIL(err, XF_ERR_INVALID, "world model: min_sigma (%g) must be > 0",
                       (double)cfg->min_sigma);
    if (cfg->max_locations > UINT16_MAX)
        return XF_FAIL(err, XF_ERR_INVALID, "world model: max_locations %d above %d",
                       cfg->max_locations, UINT16_MAX);
    wm->cfg = *cfg;
    int D = cfg->z_dim, N = cfg->n_xfers, H = cfg->hidden;
    wm->in_dim = D + cfg->embed + 1;
    wm->mdn_dim = xf_nn_mdn_width(cfg->n_mix, D);
    int edims[2] = {N + 1, cfg->embed};
    xf_status st = xf_nn_params_add(p, "wm/embed", 2, edims, &wm->embed, err);
    if (st) return st;
    xf_nn_init_uniform(xf_nn_params_value(p, wm->embed), (size_t)(N + 1) * (size_t)cfg->embed,
                       -0.5f, 0.5f, rng);
    st = xf_nn_lstm_add(&wm->lstm, p, "wm/lstm", wm->in_dim, H, rng, err);
    wm->head_dim = wm->mdn_dim + 2 + 2 * N;
    if (!st) st = xf_nn_linear_add(&wm->head, p, "wm/head", H, wm->head_dim, 1, rng, err);
    return st;
}

void xf_wm_input(const xf_wm *wm, const xf_nn_params *p, float *x, const float *z, int xfer,
                 int loc)
{
    int D = wm->cfg.z_dim, E = wm->cfg.embed;
    const float *e = xf_nn_params_value(p, wm->embed) + (size_t)xfer * (size_t)E;
    for (int d = 0; d < D; d++) x[d] = z[d];
    for (int j = 0; j < E; j++) x[D + j] = e[j];
    x[D + E] = (float)loc / (float)wm->cfg.max_locations;
}

void xf_wm_mixture(const xf_wm *wm, float *mix, const float *head_row)
{
    int K = wm->cfg.n_mix, KD = K * wm->cfg.z_dim;
    double m = log((double)wm->cfg.min_sigma);
    for (int i = 0; i < K + KD; i++) mix[i] = head_row[i];
    for (int i = K + KD; i < K + 2 * KD; i++) {
        double u = head_row[i] - m;
        mix[i] = (float)(m + (u > 0 ? u + log1p(exp(-u)) : log1p(exp(u))));
    }
}

void xf_wm_mixture_backward(const xf_wm *wm, float *dhead_row, const float *dmix,
                            const float *head_row)
{
    int K = wm->cfg.n_mix, KD = K * wm->cfg.z_dim;
    double m = log((double)wm->cfg.min_sigma);
    for (int i = 0; i < K + KD; i++) dhead_row[i] += dmix[i];
    for (int i = K + KD; i < K + 2 * KD; i++)
        dhead_row[i] += (float)(dmix[i] / (1.0 + exp(m - head_row[i])));
}
