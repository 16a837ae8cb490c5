/*
 * nn_norm.c — layer normalisation over the rows of a [B,C] buffer (biased
 * variance, learned gain and bias), keeping each row's mean and reciprocal
 * standard deviation for the backward. Row sums accumulate in double.
 */
#include <math.h>

#include "agent/nn.h"

void xf_nn_layernorm_forward(float *out, float *mean, float *rstd, const float *in,
                             const float *gamma, const float *beta, int B, int C)
{
    for (int r = 0; r < B; r++) {
        const float *x = in + (size_t)r * (size_t)C;
        float *y = out + (size_t)r * (size_t)C;
        double s = 0.0;
        for (int c = 0; c < C; c++) s += x[c];
        double mu = s / C;
        double v = 0.0;
        for (int c = 0; c < C; c++) v += (x[c] - mu) * (x[c] - mu);
        v /= C;
        double rs = 1.0 / sqrt(v + (double)XF_NN_LN_EPS);
        for (int c = 0; c < C; c++) {
            float xh = (float)((x[c] - mu) * rs);
            y[c] = xh * gamma[c] + beta[c];
        }
        mean[r] = (float)mu;
        rstd[r] = (float)rs;
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
        double sum_dxh = 0.0, sum_dxh_xh = 0.0;
        for (int c = 0; c < C; c++) {
            float xh = (x[c] - mu) * rs;
            float dxh = dy[c] * gamma[c];
            sum_dxh += dxh;
            sum_dxh_xh += (double)dxh * xh;
            if (dgamma) dgamma[c] += dy[c] * xh;
            if (dbeta) dbeta[c] += dy[c];
        }
        if (!din) continue;
        float m1 = (float)(sum_dxh / C), m2 = (float)(sum_dxh_xh / C);
        float *dx = din + (size_t)r * (size_t)C;
        for (int c = 0; c < C; c++) {
            float xh = (x[c] - mu) * rs;
            dx[c] += rs * (dy[c] * gamma[c] - m1 - xh * m2);
        }
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
