/*
 * nn_mdn.c — the mixture density head of the world model: negative
 * log-likelihood of a diagonal Gaussian mixture given raw network outputs
 * (mixture logits, means, log-sigmas), its gradient, and sampling at a
 * temperature as in World Models (logits / τ, sigmas · sqrt(τ)). Both
 * logsumexps (over the mixture logits and over the components' joint
 * log-densities) subtract their maximum, in double.
 */
#include <math.h>

#include "agent/nn/nn.h"

#define HALF_LOG_2PI 0.91893853320467274178

static float clamp_logsig(float s)
{
    return s < XF_NN_MDN_LOGSIG_MIN ? XF_NN_MDN_LOGSIG_MIN
                                    : s > XF_NN_MDN_LOGSIG_MAX ? XF_NN_MDN_LOGSIG_MAX : s;
}

/* log Σ_k exp(a_k) of the K mixture logits. */
static double lse_logits(const float *a, int K)
{
    double mx = a[0];
    for (int k = 1; k < K; k++) mx = a[k] > mx ? a[k] : mx;
    double s = 0.0;
    for (int k = 0; k < K; k++) s += exp(a[k] - mx);
    return mx + log(s);
}

/* log π_k + Σ_d log N(y_d; μ_kd, σ_kd) of component k of one row. */
static double comp_logdens(const float *a, int K, int D, int k, double lse_a, const float *y)
{
    const float *mu = a + K + k * D, *ls = a + K + K * D + k * D;
    double l = a[k] - lse_a;
    for (int d = 0; d < D; d++) {
        double s = clamp_logsig(ls[d]);
        double z = (y[d] - (double)mu[d]) * exp(-s);
        l += -0.5 * z * z - s - HALF_LOG_2PI;
    }
    return l;
}

void xf_nn_mdn_forward(float *nll, float *post, const float *raw, const float *target, int B,
                       int K, int D)
{
    int W = xf_nn_mdn_width(K, D);
    for (int r = 0; r < B; r++) {
        const float *a = raw + (size_t)r * (size_t)W;
        const float *y = target + (size_t)r * (size_t)D;
        float *pr = post + (size_t)r * (size_t)K;
        double la = lse_logits(a, K);
        /* Online logsumexp over the components (running maximum). */
        double mx = -INFINITY, sum = 0.0;
        for (int k = 0; k < K; k++) {
            double l = comp_logdens(a, K, D, k, la, y);
            if (l > mx) {
                sum = sum * exp(mx - l) + 1.0;
                mx = l;
            } else {
                sum += exp(l - mx);
            }
        }
        double lse = mx + log(sum);
        nll[r] = (float)-lse;
        for (int k = 0; k < K; k++) pr[k] = (float)exp(comp_logdens(a, K, D, k, la, y) - lse);
    }
}

void xf_nn_mdn_backward(float *draw, const float *dnll, const float *post, const float *raw,
                        const float *target, int B, int K, int D)
{
    int W = xf_nn_mdn_width(K, D);
    for (int r = 0; r < B; r++) {
        const float *a = raw + (size_t)r * (size_t)W;
        const float *mu = a + K, *ls = a + K + K * D;
        const float *y = target + (size_t)r * (size_t)D;
        const float *pr = post + (size_t)r * (size_t)K;
        float *g = draw + (size_t)r * (size_t)W;
        double g0 = dnll[r];
        double la = lse_logits(a, K);
        for (int k = 0; k < K; k++) {
            g[k] += (float)(g0 * (exp(a[k] - la) - pr[k]));
            for (int d = 0; d < D; d++) {
                int i = k * D + d;
                double s = clamp_logsig(ls[i]);
                double inv = exp(-s);
                double diff = y[d] - (double)mu[i];
                double z = diff * inv;
                g[K + i] += (float)(-g0 * pr[k] * diff * inv * inv);
                if (ls[i] > XF_NN_MDN_LOGSIG_MIN && ls[i] < XF_NN_MDN_LOGSIG_MAX)
                    g[K + K * D + i] += (float)(g0 * pr[k] * (1.0 - z * z));
            }
        }
    }
}

void xf_nn_mdn_sample(float *out, const float *raw, int B, int K, int D, float tau, xf_rng *rng)
{
    int W = xf_nn_mdn_width(K, D);
    for (int r = 0; r < B; r++) {
        const float *a = raw + (size_t)r * (size_t)W;
        const float *mu = a + K, *ls = a + K + K * D;
        float *o = out + (size_t)r * (size_t)D;
        int best = 0;
        for (int k = 1; k < K; k++)
            if (a[k] > a[best]) best = k;
        if (tau <= 0.0f) {
            for (int d = 0; d < D; d++) o[d] = mu[best * D + d];
            continue;
        }
        /* Draw k ∝ exp((a_k - a_best) / τ). */
        double total = 0.0;
        for (int k = 0; k < K; k++) total += exp(((double)a[k] - a[best]) / tau);
        double u = (double)xf_rng_uniform(rng, 0.0f, 1.0f) * total, acc = 0.0;
        int pick = best;
        for (int k = 0; k < K; k++) {
            acc += exp(((double)a[k] - a[best]) / tau);
            if (u < acc) {
                pick = k;
                break;
            }
        }
        float st = sqrtf(tau);
        for (int d = 0; d < D; d++) {
            int i = pick * D + d;
            o[d] = mu[i] + expf(clamp_logsig(ls[i])) * st * xf_rng_normal(rng);
        }
    }
}
