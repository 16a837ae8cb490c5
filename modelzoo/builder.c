/*
 * builder.c — see builder_internal.h. Wraps xf_graph_add_* with a sticky status,
 * fills parameters from the builder's RNG in the order the architecture
 * creates them (so a seed fixes every weight), and keeps every tensor
 * within what the exporter and the interpreter can hold: parameters within
 * ZB_MAX_PARAM_BYTES, element counts far from int64 overflow.
 */
#include "builder_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void zoo_init(zb *b, xf_graph *g, const char *name, uint64_t seed, xf_error *err)
{
    memset(b, 0, sizeof *b);
    b->g = g;
    b->err = err;
    xf_error_clear(err);
    xf_rng_seed(&b->rng, seed);
    g->opset = 13; /* what PyTorch writes for the reference models */
    size_t n = strlen(name) + 1;
    g->name = xf_malloc(n);
    if (!g->name) {
        zoo_fail(b, XF_ERR_NOMEM, "out of memory naming the graph");
        return;
    }
    memcpy(g->name, name, n);
}

xf_status zoo_finish(zb *b)
{
    if (b->st != XF_OK) return b->st;
    if (b->g->n_outputs == 0) zoo_fail(b, XF_ERR_INTERNAL, "model '%s' has no outputs", b->g->name);
    return b->st;
}

int zoo_fail(zb *b, xf_status code, const char *fmt, ...)
{
    if (b->st != XF_OK) return -1;
    char msg[sizeof b->err->msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    b->st = XF_FAIL(b->err, code, "%s", msg);
    return -1;
}

/* Records a failure already described in b->err by an ir call. */
static int failed_in_ir(zb *b)
{
    if (b->st == XF_OK) b->st = b->err->code != XF_OK ? b->err->code : XF_ERR_INTERNAL;
    return -1;
}

const xf_shape *zoo_shape(const zb *b, int v)
{
    return &b->g->values[v].shape;
}

/* Element count of `dims`, or -1 when it exceeds ZB_MAX_ELEMENTS. */
static int64_t checked_numel(int rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0 || (dims[i] > 0 && n > ZB_MAX_ELEMENTS / dims[i])) return -1;
        n *= dims[i];
    }
    return n;
}

static int too_many(zb *b, const char *name, int rank, const int64_t *dims)
{
    xf_shape s = xf_shape_make(rank, dims);
    char sh[128];
    return zoo_fail(b, XF_ERR_INVALID, "'%s' would be a tensor %s with more than %lld elements; "
                   "choose smaller sizes", name, xf_shape_str(&s, sh, sizeof sh),
                   (long long)ZB_MAX_ELEMENTS);
}

int zoo_input(zb *b, const char *name, xf_dtype dt, int rank, const int64_t *dims)
{
    if (b->st != XF_OK) return -1;
    if (checked_numel(rank, dims) < 0) return too_many(b, name, rank, dims);
    xf_shape s = xf_shape_make(rank, dims);
    int v = xf_graph_add_input(b->g, name, dt, &s, b->err);
    return v < 0 ? failed_in_ir(b) : v;
}

void zoo_output(zb *b, int v, const char *name)
{
    if (b->st != XF_OK || v < 0) return;
    size_t n = strlen(name) + 1;
    char *copy = xf_malloc(n);
    if (!copy) {
        zoo_fail(b, XF_ERR_NOMEM, "out of memory naming output '%s'", name);
        return;
    }
    memcpy(copy, name, n);
    xf_graph_release(b->g, b->g->values[v].name);
    b->g->values[v].name = copy;
    if (xf_graph_mark_output(b->g, v, b->err) != XF_OK) failed_in_ir(b);
}

/* A constant of `bytes_per` bytes per element, its buffer handed to fill(). */
static void *new_const_buffer(zb *b, const char *name, int rank, const int64_t *dims,
                              size_t bytes_per, int64_t *numel)
{
    *numel = checked_numel(rank, dims);
    if (*numel < 0) {
        too_many(b, name, rank, dims);
        return NULL;
    }
    size_t bytes = (size_t)*numel * bytes_per;
    if (bytes > ZB_MAX_PARAM_BYTES - b->param_bytes) {
        zoo_fail(b, XF_ERR_INVALID,
                "the parameters would exceed %zu bytes at '%s' (%lld elements), more than "
                "modelzoo builds; choose smaller sizes",
                ZB_MAX_PARAM_BYTES, name, (long long)*numel);
        return NULL;
    }
    void *data = xf_malloc(bytes ? bytes : 1);
    if (!data) {
        zoo_fail(b, XF_ERR_NOMEM, "out of memory for parameter '%s' (%zu bytes)", name, bytes);
        return NULL;
    }
    b->param_bytes += bytes;
    return data;
}

static int add_const(zb *b, const char *name, xf_dtype dt, int rank, const int64_t *dims,
                     void *data)
{
    xf_shape s = xf_shape_make(rank, dims);
    int v = xf_graph_add_const_owned(b->g, name, dt, &s, data, b->err);
    return v < 0 ? failed_in_ir(b) : v;
}

int zoo_param_range(zb *b, const char *name, int rank, const int64_t *dims, float lo, float hi)
{
    if (b->st != XF_OK) return -1;
    int64_t n;
    float *w = new_const_buffer(b, name, rank, dims, sizeof(float), &n);
    if (!w) return -1;
    for (int64_t i = 0; i < n; i++) w[i] = xf_rng_uniform(&b->rng, lo, hi);
    return add_const(b, name, XF_F32, rank, dims, w);
}

int zoo_param(zb *b, const char *name, int rank, const int64_t *dims, float bound)
{
    return zoo_param_range(b, name, rank, dims, -bound, bound);
}

int zoo_scalar(zb *b, const char *name, float value)
{
    if (b->st != XF_OK) return -1;
    int64_t n;
    float *w = new_const_buffer(b, name, 0, NULL, sizeof(float), &n);
    if (!w) return -1;
    w[0] = value;
    return add_const(b, name, XF_F32, 0, NULL, w);
}

int zoo_ints(zb *b, const char *name, int rank, const int64_t *dims, const int64_t *v)
{
    if (b->st != XF_OK) return -1;
    int64_t n;
    int64_t *w = new_const_buffer(b, name, rank, dims, sizeof(int64_t), &n);
    if (!w) return -1;
    memcpy(w, v, sizeof(int64_t) * (size_t)n);
    return add_const(b, name, XF_I64, rank, dims, w);
}

int zoo_node(zb *b, xf_op op, const xf_params *p, const int *in, int n_in, const char *name)
{
    if (b->st != XF_OK) return -1;
    for (int i = 0; i < n_in; i++)
        if (in[i] < 0)
            return zoo_fail(b, XF_ERR_INTERNAL, "node '%s': input %d is missing", name, i);
    int idx = xf_graph_add_node(b->g, op, p, in, n_in, 1, name, b->err);
    if (idx < 0) {
        xf_error_prefix(b->err, "node '%s'", name);
        return failed_in_ir(b);
    }
    int v = b->g->nodes[idx].outputs[0];
    const xf_shape *s = zoo_shape(b, v);
    if (checked_numel(s->rank, s->dims) < 0) return too_many(b, name, s->rank, s->dims);
    return v;
}

int zoo_split(zb *b, int x, int axis, int n, const int64_t *sizes, const char *name, int *out)
{
    for (int i = 0; i < n; i++) out[i] = -1;
    if (b->st != XF_OK) return -1;
    if (n < 1 || n > XF_MAX_SPLIT)
        return zoo_fail(b, XF_ERR_INTERNAL, "node '%s': %d outputs, 1..%d allowed", name, n,
                       XF_MAX_SPLIT);
    xf_params p = xf_params_default();
    p.axis = axis;
    p.n_split = n;
    for (int i = 0; i < n; i++) p.split[i] = sizes[i];
    int idx = xf_graph_add_node(b->g, XF_OP_SPLIT, &p, &x, 1, n, name, b->err);
    if (idx < 0) {
        xf_error_prefix(b->err, "node '%s'", name);
        return failed_in_ir(b);
    }
    for (int i = 0; i < n; i++) out[i] = b->g->nodes[idx].outputs[i];
    return out[0];
}

int zoo_unary(zb *b, xf_op op, int x, const char *name)
{
    return zoo_node(b, op, NULL, &x, 1, name);
}

int zoo_binary(zb *b, xf_op op, int x, int y, const char *name)
{
    const int in[2] = {x, y};
    return zoo_node(b, op, NULL, in, 2, name);
}

/* ------------------------------------------------------------ CNN layers */

int zoo_conv(zb *b, int x, const char *name, int64_t out_ch, int k, int stride, int pad, int bias)
{
    if (b->st != XF_OK) return -1;
    char pname[256];
    int64_t in_ch = zoo_shape(b, x)->dims[1];
    int64_t wdims[4] = {out_ch, in_ch, k, k};
    double fan_in = (double)in_ch * k * k;
    snprintf(pname, sizeof pname, "%s.weight", name);
    /* He-uniform: keeps activations at unit scale through relu stacks. */
    int in[3] = {x, zoo_param(b, pname, 4, wdims, (float)sqrt(6.0 / fan_in)), -1};
    if (bias) {
        snprintf(pname, sizeof pname, "%s.bias", name);
        in[2] = zoo_param(b, pname, 1, &out_ch, (float)(1.0 / sqrt(fan_in)));
    }
    xf_params p = xf_params_default();
    p.kernel[0] = p.kernel[1] = k;
    p.stride[0] = p.stride[1] = stride;
    p.dilation[0] = p.dilation[1] = 1;
    p.pads[0] = p.pads[1] = p.pads[2] = p.pads[3] = pad;
    p.group = 1;
    return zoo_node(b, XF_OP_CONV, &p, in, bias ? 3 : 2, name);
}

int zoo_batchnorm(zb *b, int x, const char *name)
{
    if (b->st != XF_OK) return -1;
    static const char *const suffix[4] = {"weight", "bias", "running_mean", "running_var"};
    static const float lo[4] = {0.5f, -0.1f, -0.1f, 0.5f}, hi[4] = {1.5f, 0.1f, 0.1f, 1.5f};
    int64_t c = zoo_shape(b, x)->dims[1];
    int in[5] = {x, -1, -1, -1, -1};
    for (int i = 0; i < 4; i++) {
        char pname[256];
        snprintf(pname, sizeof pname, "%s.%s", name, suffix[i]);
        in[1 + i] = zoo_param_range(b, pname, 1, &c, lo[i], hi[i]);
    }
    xf_params p = xf_params_default();
    p.epsilon = 1e-5f;
    return zoo_node(b, XF_OP_BATCHNORM, &p, in, 5, name);
}

int zoo_maxpool(zb *b, int x, const char *name, int k, int stride, int pad, int ceil_mode)
{
    xf_params p = xf_params_default();
    p.kernel[0] = p.kernel[1] = k;
    p.stride[0] = p.stride[1] = stride;
    p.dilation[0] = p.dilation[1] = 1;
    p.pads[0] = p.pads[1] = p.pads[2] = p.pads[3] = pad;
    p.ceil_mode = ceil_mode;
    return zoo_node(b, XF_OP_MAXPOOL, &p, &x, 1, name);
}

int zoo_flatten(zb *b, int x, const char *name)
{
    xf_params p = xf_params_default();
    p.axis = 1;
    return zoo_node(b, XF_OP_FLATTEN, &p, &x, 1, name);
}

int zoo_gemm(zb *b, int x, const char *name, int64_t out)
{
    if (b->st != XF_OK) return -1;
    char pname[256];
    int64_t k = zoo_shape(b, x)->dims[1];
    int64_t wdims[2] = {out, k};
    float bound = (float)(1.0 / sqrt((double)k));
    snprintf(pname, sizeof pname, "%s.weight", name);
    int in[3] = {x, zoo_param(b, pname, 2, wdims, bound), -1};
    snprintf(pname, sizeof pname, "%s.bias", name);
    in[2] = zoo_param(b, pname, 1, &out, bound);
    xf_params p = xf_params_default();
    p.alpha = 1.0f;
    p.beta = 1.0f;
    p.trans_b = 1;
    return zoo_node(b, XF_OP_GEMM, &p, in, 3, name);
}
