/*
 * nn_params.c — the parameter store of agent/nn: named tensors whose value,
 * gradient and Adam moments sit at one offset of four contiguous float
 * buffers, so the optimiser and gradient clipping treat the whole network as
 * one vector, and deterministic initialisers driven by an xf_rng.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/nn/nn.h"

void xf_nn_params_init(xf_nn_params *p) { memset(p, 0, sizeof *p); }

void xf_nn_params_free(xf_nn_params *p)
{
    xf_free(p->t);
    xf_free(p->value);
    xf_free(p->grad);
    xf_free(p->m);
    xf_free(p->v);
    xf_nn_params_init(p);
}

/* Grows the four float buffers to hold at least `need` floats (new space zeroed). */
static xf_status grow_buffers(xf_nn_params *p, size_t need, xf_error *err)
{
    if (need <= p->total_cap) return XF_OK;
    size_t cap = p->total_cap ? p->total_cap : 1024;
    while (cap < need) cap *= 2;
    float **bufs[4] = {&p->value, &p->grad, &p->m, &p->v};
    for (int i = 0; i < 4; i++) {
        float *nb = xf_realloc(*bufs[i], cap * sizeof(float));
        if (!nb) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory for %zu parameters", cap);
        memset(nb + p->total_cap, 0, (cap - p->total_cap) * sizeof(float));
        *bufs[i] = nb;
    }
    p->total_cap = cap;
    return XF_OK;
}

xf_status xf_nn_params_add(xf_nn_params *p, const char *name, int rank, const int *dims, int *id,
                           xf_error *err)
{
    if (id) *id = -1;
    if (!name || !name[0] || strlen(name) >= XF_NN_MAX_NAME)
        return XF_FAIL(err, XF_ERR_INVALID, "parameter name '%s' is empty or longer than %d",
                       name ? name : "", XF_NN_MAX_NAME - 1);
    if (xf_nn_params_find(p, name) >= 0)
        return XF_FAIL(err, XF_ERR_INVALID, "parameter '%s' is already in the store", name);
    if (rank < 1 || rank > XF_NN_MAX_RANK)
        return XF_FAIL(err, XF_ERR_INVALID, "parameter '%s': rank %d outside 1..%d", name, rank,
                       XF_NN_MAX_RANK);
    size_t size = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 1)
            return XF_FAIL(err, XF_ERR_INVALID, "parameter '%s': dimension %d is %d", name, i,
                           dims[i]);
        size *= (size_t)dims[i];
    }
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 16;
        xf_nn_tensor_info *nt = xf_realloc(p->t, (size_t)cap * sizeof *nt);
        if (!nt) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory adding parameter '%s'", name);
        p->t = nt;
        p->cap = cap;
    }
    xf_status st = grow_buffers(p, p->total + size, err);
    if (st != XF_OK) return st;
    xf_nn_tensor_info *t = &p->t[p->n];
    memset(t, 0, sizeof *t);
    memcpy(t->name, name, strlen(name) + 1);
    t->rank = rank;
    for (int i = 0; i < rank; i++) t->dims[i] = dims[i];
    t->offset = p->total;
    t->size = size;
    p->total += size;
    if (id) *id = p->n;
    p->n++;
    return XF_OK;
}

int xf_nn_params_find(const xf_nn_params *p, const char *name)
{
    for (int i = 0; i < p->n; i++)
        if (strcmp(p->t[i].name, name) == 0) return i;
    return -1;
}

int xf_nn_params_count(const xf_nn_params *p) { return p->n; }
size_t xf_nn_params_total(const xf_nn_params *p) { return p->total; }
const xf_nn_tensor_info *xf_nn_params_info(const xf_nn_params *p, int id) { return &p->t[id]; }
float *xf_nn_params_value(const xf_nn_params *p, int id) { return p->value + p->t[id].offset; }
float *xf_nn_params_grad(const xf_nn_params *p, int id) { return p->grad + p->t[id].offset; }
size_t xf_nn_params_size(const xf_nn_params *p, int id) { return p->t[id].size; }

void xf_nn_params_zero_grad(xf_nn_params *p)
{
    if (p->total) memset(p->grad, 0, p->total * sizeof(float));
}

xf_status xf_nn_params_copy_values(xf_nn_params *dst, const xf_nn_params *src, xf_error *err)
{
    if (dst->n != src->n)
        return XF_FAIL(err, XF_ERR_MISMATCH, "parameter stores differ: %d tensors vs %d", dst->n,
                       src->n);
    for (int i = 0; i < src->n; i++) {
        const xf_nn_tensor_info *a = &dst->t[i], *b = &src->t[i];
        int same = strcmp(a->name, b->name) == 0 && a->rank == b->rank;
        for (int d = 0; same && d < a->rank; d++) same = a->dims[d] == b->dims[d];
        if (!same)
            return XF_FAIL(err, XF_ERR_MISMATCH,
                           "parameter stores differ at tensor %d: '%s' vs '%s' (name or shape)", i,
                           a->name, b->name);
    }
    if (src->total) memcpy(dst->value, src->value, src->total * sizeof(float));
    return XF_OK;
}

void xf_nn_init_uniform(float *w, size_t n, float lo, float hi, xf_rng *rng)
{
    for (size_t i = 0; i < n; i++) w[i] = xf_rng_uniform(rng, lo, hi);
}

void xf_nn_init_xavier(float *w, int fan_in, int fan_out, xf_rng *rng)
{
    float a = sqrtf(6.0f / (float)(fan_in + fan_out));
    xf_nn_init_uniform(w, (size_t)fan_in * (size_t)fan_out, -a, a, rng);
}

void xf_nn_init_const(float *w, size_t n, float value)
{
    for (size_t i = 0; i < n; i++) w[i] = value;
}
