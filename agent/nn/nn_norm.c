/*
 * nn_norm.c — layer normalisation over the rows of a [B,C] buffer (biased
 * variance, learned gain and bias), keeping each row's mean and reciprocal
 * standard deviation for the backward. Rows are short (the GNN's and
 * policy's widths, 64-256), so sums accumulate in float, in SIMD lanes
 * (omp simd reductions): this is the hottest loop of a learning agent's
 * real step, and double accumulation kept it scalar.
 */
#include <math.h>

#include "agent/nn/nn.h"

void xf_nn_layernorm_forward(float *out, float *mean, float *rstd, const float *in,
                             const float *gamma, const float *beta, int B, int C)
{
    for (int r = 0; r < B; r++) {
        const float *x = in + (size_t)r * (size_t)C;
        float *y = out + (size_t)r * (size_t)C;
        float s = 0.0f;
#pragma omp simd reduction(+ : s)
        for (int c = 0; c < C; c++) s += x[c];
        float mu = s / (float)C;
        float v = 0.0f;
#pragma omp simd reduction(+ : v)
        for (int c = 0; c < C; c++) v += (x[c] - mu) * (x[c] - mu);
        float rs = 1.0f / sqrtf(v / (float)C + XF_NN_LN_EPS);
#pragma omp simd
        for (int c = 0; c < C; c++) y[c] = (x[c] - mu) * rs * gamma[c] + beta[c];
        mean[r] = mu;
        rstd[r] = rs;
    }
}

void xf_nn_layernorm_backward(float *din, float *dgamma, float *dbeta, const float *dout,
                              const float *in, const float *mean, const float *rstd,
                              const float *gamma, int B, int C)
{
    for (int r = 0; r < B; r++) {
        const float *x = in + (size_t)r * (size_t)C;
        const float *dy = dout + (size_t)r * (size_t)C;
        float mu = mean[r], rs = rstd[r];
        float sum_dxh = 0.0f, sum_dxh_xh = 0.0f;
#pragma omp simd reduction(+ : sum_dxh, sum_dxh_xh)
        for (int c = 0; c < C; c++) {
            float dxh = dy[c] * gamma[c];
            sum_dxh += dxh;
            sum_dxh_xh += dxh * ((x[c] - mu) * rs);
        }
        if (dgamma) {
#pragma omp simd
            for (int c = 0; c < C; c++) dgamma[c] += dy[c] * ((x[c] - mu) * rs);
        }
        if (dbeta) {
#pragma omp simd
            for (int c = 0; c < C; c++) dbeta[c] += dy[c];
        }
        if (!din) continue;
        float m1 = sum_dxh / (float)C, m2 = sum_dxh_xh / (float)C;
        float *dx = din + (size_t)r * (size_t)C;
#pragma omp simd
        for (int c = 0; c < C; c++) dx[c] += rs * (dy[c] * gamma[c] - m1 - (x[c] - mu) * rs * m2);
    }
}

xf_status xf_nn_layernorm_add(xf_nn_layernorm *l, xf_nn_params *p, const char *name, int dim,
                              xf_error *err)
{
    char nm[XF_NN_MAX_NAME + 8];
    l->gamma = l->beta = -1;
    l->dim = dim;
    snprintf(nm, sizeof nm, "%s.gamma", name);
    xf_status st = xf_nn_params_add(p, nm, 1, &dim, &l->gamma, err);
    if (st != XF_OK) return st;
    xf_nn_init_const(xf_nn_params_value(p, l->gamma), (size_t)dim, 1.0f);
    snprintf(nm, sizeof nm, "%s.beta", name);
    return xf_nn_params_add(p, nm, 1, &dim, &l->beta, err);
}
