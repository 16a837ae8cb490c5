/*
 * nn_adam.c — the optimiser of agent/nn: Adam with bias correction and
 * optional decoupled weight decay (AdamW) over a whole parameter store, and
 * global gradient-norm clipping. Both treat the store as one flat vector.
 */
#include <math.h>

#include "agent/nn/nn.h"

xf_nn_adam xf_nn_adam_default(float lr)
{
    xf_nn_adam a = {lr, 0.9f, 0.999f, 1e-8f, 0.0f, 0};
    return a;
}

void xf_nn_adam_step(xf_nn_adam *opt, xf_nn_params *p)
{
    opt->step++;
    double t = (double)opt->step;
    float c1 = (float)(1.0 - pow(opt->beta1, t)), c2 = (float)(1.0 - pow(opt->beta2, t));
    float b1 = opt->beta1, b2 = opt->beta2, lr = opt->lr, eps = opt->eps;
    float decay = opt->lr * opt->weight_decay;
    for (size_t i = 0; i < p->total; i++) {
        float g = p->grad[i];
        float m = b1 * p->m[i] + (1.0f - b1) * g;
        float v = b2 * p->v[i] + (1.0f - b2) * g * g;
        p->m[i] = m;
        p->v[i] = v;
        float mh = m / c1, vh = v / c2;
        p->value[i] -= lr * mh / (sqrtf(vh) + eps) + decay * p->value[i];
    }
}

float xf_nn_clip_grad_norm(xf_nn_params *p, float max_norm)
{
    double s = 0.0;
    for (size_t i = 0; i < p->total; i++) s += (double)p->grad[i] * p->grad[i];
    double norm = sqrt(s);
    if (max_norm > 0.0f && norm > max_norm) {
        float k = (float)(max_norm / norm);
        for (size_t i = 0; i < p->total; i++) p->grad[i] *= k;
    }
    return (float)norm;
}
