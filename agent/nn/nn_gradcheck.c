/*
 * nn_gradcheck.c — central finite-difference gradient checking for the
 * backward passes of agent/nn and the networks built on it (GNN, PPO, world
 * model): each input float is nudged by ±h, the loss (accumulated in double
 * by the caller's callback) re-evaluated, and the slope compared with the
 * analytic gradient by a relative error.
 */
#include <math.h>

#include "agent/nn/nn.h"

double xf_nn_gradcheck(xf_nn_loss_fn loss, void *user, float *x, const float *grad, size_t n,
                       float h, double floor, size_t *worst)
{
    double max_err = 0.0;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        float x0 = x[i];
        x[i] = x0 + h;
        double lp = loss(user);
        x[i] = x0 - h;
        double lm = loss(user);
        x[i] = x0;
        /* The step actually taken in float arithmetic. */
        double step = (double)(x0 + h) - (double)(x0 - h);
        double fd = (lp - lm) / step;
        double a = grad[i];
        double den = fabs(a) + fabs(fd);
        double e = fabs(a - fd) / (den > floor ? den : floor);
        if (e > max_err || !(e == e)) {
            max_err = e == e ? e : INFINITY;
            at = i;
        }
    }
    if (worst) *worst = at;
    return max_err;
}
