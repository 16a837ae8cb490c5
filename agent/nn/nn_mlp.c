/*
 * nn_mlp.c — multi-layer perceptrons for agent/nn (the GNN's edge, node and
 * global functions, the PPO heads, the world model's output heads): a stack
 * of linear layers with one activation between them and one after the last,
 * a cache of every layer's output, and the backward through the stack.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "agent/nn/nn.h"

xf_status xf_nn_mlp_add(xf_nn_mlp *m, xf_nn_params *p, const char *name, int n_layers,
                        const int *dims, xf_nn_act hidden, xf_nn_act output, xf_rng *rng,
                        xf_error *err)
{
    memset(m, 0, sizeof *m);
    if (n_layers < 1 || n_layers > XF_NN_MLP_MAX_LAYERS)
        return XF_FAIL(err, XF_ERR_INVALID, "MLP '%s': %d layers, expected 1..%d", name, n_layers,
                       XF_NN_MLP_MAX_LAYERS);
    for (int l = 0; l <= n_layers; l++)
        if (dims[l] < 1)
            return XF_FAIL(err, XF_ERR_INVALID, "MLP '%s': width %d of layer boundary %d", name,
                           dims[l], l);
    m->n_layers = n_layers;
    m->hidden = hidden;
    m->output = output;
    for (int l = 0; l <= n_layers; l++) m->dims[l] = dims[l];
    for (int l = 0; l < n_layers; l++) {
        char nm[XF_NN_MAX_NAME + 16];
        snprintf(nm, sizeof nm, "%s.l%d", name, l);
        xf_status st = xf_nn_linear_add(&m->layer[l], p, nm, dims[l], dims[l + 1], 1, rng, err);
        if (st != XF_OK) return st;
    }
    return XF_OK;
}

int xf_nn_mlp_out(const xf_nn_mlp *m) { return m->dims[m->n_layers]; }

void xf_nn_mlp_cache_init(xf_nn_mlp_cache *c) { memset(c, 0, sizeof *c); }

void xf_nn_mlp_cache_free(xf_nn_mlp_cache *c)
{
    for (int l = 0; l < XF_NN_MLP_MAX_LAYERS; l++) xf_free(c->act[l]);
    xf_free(c->scratch[0]);
    xf_free(c->scratch[1]);
    xf_nn_mlp_cache_init(c);
}

/* Every buffer is sized for the widest layer, so one cache serves any MLP
 * of at most that width, depth and batch. */
static int max_width(const xf_nn_mlp *m)
{
    int w = 0;
    for (int l = 0; l <= m->n_layers; l++) w = m->dims[l] > w ? m->dims[l] : w;
    return w;
}

xf_status xf_nn_mlp_cache_reserve(xf_nn_mlp_cache *c, const xf_nn_mlp *m, int rows,
                                  xf_error *err)
{
    size_t n = (size_t)rows * (size_t)max_width(m);
    if (n <= c->cap_floats && m->n_layers <= c->n_act) {
        if (rows > c->cap_rows) c->cap_rows = rows;
        return XF_OK;
    }
    xf_nn_mlp_cache_free(c);
    int ok = 1;
    for (int l = 0; l < m->n_layers; l++) ok &= (c->act[l] = xf_malloc(n * sizeof(float))) != NULL;
    for (int i = 0; i < 2; i++) ok &= (c->scratch[i] = xf_malloc(n * sizeof(float))) != NULL;
    if (!ok) {
        xf_nn_mlp_cache_free(c);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory for an MLP cache of %d rows", rows);
    }
    c->cap_rows = rows;
    c->cap_floats = n;
    c->n_act = m->n_layers;
    return XF_OK;
}

const float *xf_nn_mlp_forward(const xf_nn_mlp *m, const xf_nn_params *p, xf_nn_mlp_cache *c,
                               const float *in, int B)
{
    assert(m->n_layers <= c->n_act && (size_t)B * (size_t)max_width(m) <= c->cap_floats);
    const float *x = in;
    for (int l = 0; l < m->n_layers; l++) {
        float *y = c->act[l];
        xf_nn_linear_apply(&m->layer[l], p, y, x, B);
        xf_nn_act a = l == m->n_layers - 1 ? m->output : m->hidden;
        xf_nn_act_forward(a, y, y, (size_t)B * (size_t)m->dims[l + 1]);
        x = y;
    }
    return x;
}

/* Scratch 0 holds the gradient at a layer's pre-activation, scratch 1 the
 * gradient at its input (the next layer down's output). */
void xf_nn_mlp_backward(const xf_nn_mlp *m, const xf_nn_params *p, xf_nn_mlp_cache *c,
                        float *din, const float *dout, const float *in, int B)
{
    assert(m->n_layers <= c->n_act && (size_t)B * (size_t)max_width(m) <= c->cap_floats);
    const float *dy = dout;
    float *dz = c->scratch[0];
    for (int l = m->n_layers - 1; l >= 0; l--) {
        size_t n_out = (size_t)B * (size_t)m->dims[l + 1];
        memset(dz, 0, n_out * sizeof(float));
        xf_nn_act a = l == m->n_layers - 1 ? m->output : m->hidden;
        xf_nn_act_backward(a, dz, dy, c->act[l], n_out);
        float *dx = din;
        if (l > 0) {
            dx = c->scratch[1];
            memset(dx, 0, (size_t)B * (size_t)m->dims[l] * sizeof(float));
        }
        xf_nn_linear_apply_backward(&m->layer[l], p, dx, dz, l > 0 ? c->act[l - 1] : in, B);
        dy = dx;
    }
}
