/*
 * nn_softmax.c — softmax and log-softmax over rows with an optional action
 * mask, and the categorical-policy helpers built on log-probabilities
 * (cross-entropy, entropy, sampling, argmax). Masked entries get probability
 * 0 and log-probability -inf and are skipped by every backward, so the -inf
 * never meets a multiplication that would turn it into a NaN.
 */
#include <math.h>

#include "agent/nn/nn.h"

static int allowed(const uint8_t *mask, size_t i) { return !mask || mask[i]; }

/* Row maximum and log Σ exp(x - max) over the allowed entries; returns 0
 * when nothing is allowed. */
static int row_stats(const float *x, const uint8_t *mask, int C, float *mx, double *lse)
{
    int any = 0;
    float m = -INFINITY;
    for (int c = 0; c < C; c++)
        if (allowed(mask, (size_t)c) && (!any || x[c] > m)) {
            m = x[c];
            any = 1;
        }
    if (!any) return 0;
    double s = 0.0;
    for (int c = 0; c < C; c++)
        if (allowed(mask, (size_t)c)) s += exp((double)x[c] - m);
    *mx = m;
    *lse = log(s);
    return 1;
}

void xf_nn_softmax_forward(float *probs, const float *logits, const uint8_t *mask, int B, int C)
{
    for (int r = 0; r < B; r++) {
        size_t o = (size_t)r * (size_t)C;
        const uint8_t *mk = mask ? mask + o : NULL;
        float mx;
        double lse;
        int any = row_stats(logits + o, mk, C, &mx, &lse);
        for (int c = 0; c < C; c++)
            probs[o + (size_t)c] = any && allowed(mk, (size_t)c)
                                       ? (float)exp((double)logits[o + (size_t)c] - mx - lse)
                                       : 0.0f;
    }
}

void xf_nn_softmax_backward(float *dlogits, const float *dprobs, const float *probs, int B, int C)
{
    for (int r = 0; r < B; r++) {
        size_t o = (size_t)r * (size_t)C;
        double dot = 0.0;
        for (int c = 0; c < C; c++)
            if (probs[o + (size_t)c] > 0.0f) dot += (double)probs[o + (size_t)c] * dprobs[o + (size_t)c];
        for (int c = 0; c < C; c++) {
            float p = probs[o + (size_t)c];
            if (p > 0.0f) dlogits[o + (size_t)c] += p * (float)(dprobs[o + (size_t)c] - dot);
        }
    }
}

void xf_nn_log_softmax_forward(float *logp, const float *logits, const uint8_t *mask, int B,
                               int C)
{
    for (int r = 0; r < B; r++) {
        size_t o = (size_t)r * (size_t)C;
        const uint8_t *mk = mask ? mask + o : NULL;
        float mx;
        double lse;
        int any = row_stats(logits + o, mk, C, &mx, &lse);
        for (int c = 0; c < C; c++)
            logp[o + (size_t)c] = any && allowed(mk, (size_t)c)
                                      ? (float)((double)logits[o + (size_t)c] - mx - lse)
                                      : -INFINITY;
    }
}

void xf_nn_log_softmax_backward(float *dlogits, const float *dlogp, const float *logp, int B,
                                int C)
{
    for (int r = 0; r < B; r++) {
        size_t o = (size_t)r * (size_t)C;
        double sum = 0.0;
        for (int c = 0; c < C; c++)
            if (isfinite(logp[o + (size_t)c])) sum += dlogp[o + (size_t)c];
        for (int c = 0; c < C; c++) {
            float l = logp[o + (size_t)c];
            if (isfinite(l)) dlogits[o + (size_t)c] += dlogp[o + (size_t)c] - expf(l) * (float)sum;
        }
    }
}

void xf_nn_cross_entropy_forward(float *loss, const float *logp, const int *target, int B, int C)
{
    for (int r = 0; r < B; r++) loss[r] = -logp[(size_t)r * (size_t)C + (size_t)target[r]];
}

void xf_nn_cross_entropy_backward(float *dlogp, const float *dloss, const int *target, int B,
                                  int C)
{
    for (int r = 0; r < B; r++) dlogp[(size_t)r * (size_t)C + (size_t)target[r]] -= dloss[r];
}

void xf_nn_entropy_forward(float *ent, const float *logp, int B, int C)
{
    for (int r = 0; r < B; r++) {
        const float *l = logp + (size_t)r * (size_t)C;
        double h = 0.0;
        for (int c = 0; c < C; c++)
            if (isfinite(l[c])) h -= exp((double)l[c]) * l[c];
        ent[r] = (float)h;
    }
}

void xf_nn_entropy_backward(float *dlogp, const float *dent, const float *logp, int B, int C)
{
    for (int r = 0; r < B; r++) {
        size_t o = (size_t)r * (size_t)C;
        for (int c = 0; c < C; c++) {
            float l = logp[o + (size_t)c];
            if (isfinite(l)) dlogp[o + (size_t)c] -= dent[r] * expf(l) * (l + 1.0f);
        }
    }
}

int xf_nn_categorical_sample(const float *probs, int C, xf_rng *rng)
{
    double total = 0.0;
    int last = -1;
    for (int c = 0; c < C; c++)
        if (probs[c] > 0.0f) {
            total += probs[c];
            last = c;
        }
    if (last < 0) return -1;
    double u = (double)xf_rng_uniform(rng, 0.0f, 1.0f) * total, acc = 0.0;
    for (int c = 0; c < C; c++) {
        if (probs[c] <= 0.0f) continue;
        acc += probs[c];
        if (u < acc) return c;
    }
    return last;
}

int xf_nn_argmax(const float *x, const uint8_t *mask, int C)
{
    int best = -1;
    for (int c = 0; c < C; c++)
        if (allowed(mask, (size_t)c) && (best < 0 || x[c] > x[best])) best = c;
    return best;
}
