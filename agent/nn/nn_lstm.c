/*
 * nn_lstm.c — one step of an LSTM cell over a batch (gates i|f|g|o from
 * x·Wx + h·Wh + b, sgemm-backed), its backward, the per-step cache and the
 * parameter layout (forget-gate bias initialised to 1). Sequences and
 * backpropagation through time are the caller's loop over steps.
 */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/nn/nn.h"

void xf_nn_lstm_cache_init(xf_nn_lstm_cache *c) { memset(c, 0, sizeof *c); }

void xf_nn_lstm_cache_free(xf_nn_lstm_cache *c)
{
    xf_free(c->gates);
    xf_free(c->tanh_c);
    xf_free(c->dz);
    xf_nn_lstm_cache_init(c);
}

xf_status xf_nn_lstm_cache_reserve(xf_nn_lstm_cache *c, int rows, int H, xf_error *err)
{
    if (rows <= c->cap_rows && H == c->hidden) return XF_OK;
    xf_nn_lstm_cache_free(c);
    size_t n = (size_t)rows * (size_t)H;
    c->gates = xf_malloc(4 * n * sizeof(float));
    c->tanh_c = xf_malloc(n * sizeof(float));
    c->dz = xf_malloc(4 * n * sizeof(float));
    if (!c->gates || !c->tanh_c || !c->dz) {
        xf_nn_lstm_cache_free(c);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory for an LSTM cache of %d x %d", rows, H);
    }
    c->cap_rows = rows;
    c->hidden = H;
    return XF_OK;
}

static float sigmoid(float x)
{
    if (x >= 0.0f) return 1.0f / (1.0f + expf(-x));
    float e = expf(x);
    return e / (1.0f + e);
}

void xf_nn_lstm_forward(float *h, float *c, xf_nn_lstm_cache *cache, const float *x,
                        const float *h_prev, const float *c_prev, const float *wx, const float *wh,
                        const float *b, int B, int I, int H)
{
    assert(B <= cache->cap_rows && H == cache->hidden);
    int G = 4 * H;
    float *z = cache->gates;
    xf_nn_linear_forward(z, x, wx, b, B, I, G);
    /* z += h_prev · wh, computed into the backward scratch (free here). */
    float *zh = cache->dz;
    xf_nn_linear_forward(zh, h_prev, wh, NULL, B, H, G);
    for (int r = 0; r < B; r++) {
        float *zr = z + (size_t)r * (size_t)G;
        const float *zhr = zh + (size_t)r * (size_t)G;
        const float *cp = c_prev + (size_t)r * (size_t)H;
        float *cr = c + (size_t)r * (size_t)H, *hr = h + (size_t)r * (size_t)H;
        float *tc = cache->tanh_c + (size_t)r * (size_t)H;
        for (int j = 0; j < G; j++) zr[j] += zhr[j];
        for (int j = 0; j < H; j++) {
            float ig = sigmoid(zr[j]), fg = sigmoid(zr[H + j]);
            float gg = tanhf(zr[2 * H + j]), og = sigmoid(zr[3 * H + j]);
            zr[j] = ig;
            zr[H + j] = fg;
            zr[2 * H + j] = gg;
            zr[3 * H + j] = og;
            cr[j] = fg * cp[j] + ig * gg;
            tc[j] = tanhf(cr[j]);
            hr[j] = og * tc[j];
        }
    }
}

void xf_nn_lstm_backward(float *dx, float *dh_prev, float *dc_prev, float *dwx, float *dwh,
                         float *db, const float *dh, const float *dc, xf_nn_lstm_cache *cache,
                         const float *x, const float *h_prev, const float *c_prev,
                         const float *wx, const float *wh, int B, int I, int H)
{
    assert(B <= cache->cap_rows && H == cache->hidden);
    int G = 4 * H;
    for (int r = 0; r < B; r++) {
        const float *gr = cache->gates + (size_t)r * (size_t)G;
        const float *tc = cache->tanh_c + (size_t)r * (size_t)H;
        const float *cp = c_prev + (size_t)r * (size_t)H;
        const float *dhr = dh + (size_t)r * (size_t)H;
        float *dzr = cache->dz + (size_t)r * (size_t)G;
        for (int j = 0; j < H; j++) {
            float ig = gr[j], fg = gr[H + j], gg = gr[2 * H + j], og = gr[3 * H + j];
            float dct = dhr[j] * og * (1.0f - tc[j] * tc[j]);
            if (dc) dct += dc[(size_t)r * (size_t)H + (size_t)j];
            if (dc_prev) dc_prev[(size_t)r * (size_t)H + (size_t)j] += dct * fg;
            dzr[j] = dct * gg * ig * (1.0f - ig);
            dzr[H + j] = dct * cp[j] * fg * (1.0f - fg);
            dzr[2 * H + j] = dct * ig * (1.0f - gg * gg);
            dzr[3 * H + j] = dhr[j] * tc[j] * og * (1.0f - og);
        }
    }
    xf_nn_linear_backward(dx, dwx, db, cache->dz, x, wx, B, I, G);
    xf_nn_linear_backward(dh_prev, dwh, NULL, cache->dz, h_prev, wh, B, H, G);
}

xf_status xf_nn_lstm_add(xf_nn_lstm *l, xf_nn_params *p, const char *name, int in, int hidden,
                         xf_rng *rng, xf_error *err)
{
    char nm[XF_NN_MAX_NAME + 8];
    int G = 4 * hidden;
    l->wx = l->wh = l->b = -1;
    l->in = in;
    l->hidden = hidden;
    int dx[2] = {in, G}, dh[2] = {hidden, G};
    snprintf(nm, sizeof nm, "%s.wx", name);
    xf_status st = xf_nn_params_add(p, nm, 2, dx, &l->wx, err);
    if (st != XF_OK) return st;
    snprintf(nm, sizeof nm, "%s.wh", name);
    st = xf_nn_params_add(p, nm, 2, dh, &l->wh, err);
    if (st != XF_OK) return st;
    snprintf(nm, sizeof nm, "%s.b", name);
    st = xf_nn_params_add(p, nm, 1, &G, &l->b, err);
    if (st != XF_OK) return st;
    xf_nn_init_xavier(xf_nn_params_value(p, l->wx), in, G, rng);
    xf_nn_init_xavier(xf_nn_params_value(p, l->wh), hidden, G, rng);
    xf_nn_init_const(xf_nn_params_value(p, l->b) + hidden, (size_t)hidden, 1.0f);
    return XF_OK;
}
