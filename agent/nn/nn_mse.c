/*
 * nn_mse.c — the regression and binary losses of agent/nn: mean-squared
 * error (value heads, reward and latent predictors) and binary
 * cross-entropy on logits (done flags, mask prediction), with gradients;
 * means accumulate in double.
 */
#include <math.h>

#include "agent/nn/nn.h"

float xf_nn_mse_forward(const float *pred, const float *target, size_t n)
{
    if (n == 0) return 0.0f;
    double s = 0.0;
    for (size_t i = 0; i < n; i++) {
        double d = (double)pred[i] - target[i];
        s += d * d;
    }
    return (float)(s / (double)n);
}

void xf_nn_mse_backward(float *dpred, float dloss, const float *pred, const float *target,
                        size_t n)
{
    if (n == 0) return;
    float k = 2.0f * dloss / (float)n;
    for (size_t i = 0; i < n; i++) dpred[i] += k * (pred[i] - target[i]);
}

float xf_nn_bce_logits_forward(const float *logits, const float *target, size_t n)
{
    if (n == 0) return 0.0f;
    double s = 0.0;
    for (size_t i = 0; i < n; i++) {
        double x = logits[i];
        /* softplus(x) = max(x, 0) + log1p(exp(-|x|)) */
        s += (x > 0 ? x : 0.0) + log1p(exp(-fabs(x))) - target[i] * x;
    }
    return (float)(s / (double)n);
}

void xf_nn_bce_logits_backward(float *dlogits, float dloss, const float *logits,
                               const float *target, size_t n)
{
    if (n == 0) return;
    float k = dloss / (float)n, sig;
    for (size_t i = 0; i < n; i++) {
        xf_nn_sigmoid_forward(&sig, &logits[i], 1);
        dlogits[i] += k * (sig - target[i]);
    }
}
