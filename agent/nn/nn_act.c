/*
 * nn_act.c — elementwise activations of agent/nn (relu, tanh, sigmoid) and
 * their backward passes, which take the forward output so callers only keep
 * one buffer per activation.
 */
#include <math.h>

#include "agent/nn/nn.h"

const char *xf_nn_act_name(xf_nn_act a)
{
    switch (a) {
    case XF_NN_ACT_NONE: return "none";
    case XF_NN_ACT_RELU: return "relu";
    case XF_NN_ACT_TANH: return "tanh";
    case XF_NN_ACT_SIGMOID: return "sigmoid";
    }
    return "?";
}

void xf_nn_relu_forward(float *out, const float *in, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = in[i] > 0.0f ? in[i] : 0.0f;
}

void xf_nn_relu_backward(float *din, const float *dout, const float *out, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (out[i] > 0.0f) din[i] += dout[i];
}

void xf_nn_tanh_forward(float *out, const float *in, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = tanhf(in[i]);
}

void xf_nn_tanh_backward(float *din, const float *dout, const float *out, size_t n)
{
    for (size_t i = 0; i < n; i++) din[i] += dout[i] * (1.0f - out[i] * out[i]);
}

/* Stable for large |x|: exp of a non-positive number only. */
static float sigmoid(float x)
{
    if (x >= 0.0f) return 1.0f / (1.0f + expf(-x));
    float e = expf(x);
    return e / (1.0f + e);
}

void xf_nn_sigmoid_forward(float *out, const float *in, size_t n)
{
    for (size_t i = 0; i < n; i++) out[i] = sigmoid(in[i]);
}

void xf_nn_sigmoid_backward(float *din, const float *dout, const float *out, size_t n)
{
    for (size_t i = 0; i < n; i++) din[i] += dout[i] * out[i] * (1.0f - out[i]);
}

void xf_nn_act_forward(xf_nn_act a, float *out, const float *in, size_t n)
{
    switch (a) {
    case XF_NN_ACT_NONE:
        if (out != in)
            for (size_t i = 0; i < n; i++) out[i] = in[i];
        return;
    case XF_NN_ACT_RELU: xf_nn_relu_forward(out, in, n); return;
    case XF_NN_ACT_TANH: xf_nn_tanh_forward(out, in, n); return;
    case XF_NN_ACT_SIGMOID: xf_nn_sigmoid_forward(out, in, n); return;
    }
}

void xf_nn_act_backward(xf_nn_act a, float *din, const float *dout, const float *out, size_t n)
{
    switch (a) {
    case XF_NN_ACT_NONE:
        for (size_t i = 0; i < n; i++) din[i] += dout[i];
        return;
    case XF_NN_ACT_RELU: xf_nn_relu_backward(din, dout, out, n); return;
    case XF_NN_ACT_TANH: xf_nn_tanh_backward(din, dout, out, n); return;
    case XF_NN_ACT_SIGMOID: xf_nn_sigmoid_backward(din, dout, out, n); return;
    }
}
