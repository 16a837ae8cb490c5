/*
 * ops_pool.c — pooling on float32 NCHW tensors: maxpool, avgpool and
 * global_avgpool, with ONNX semantics.
 *
 * maxpool/avgpool take params.kernel (required, >= 1), stride (0 means 1),
 * pads (top,left,bottom,right; each smaller than the kernel, as onnxruntime
 * demands) and ceil_mode; maxpool also dilation (0 means 1), avgpool
 * count_include_pad (AveragePool's dilations, new in opset 19, are declined
 * as XF_ERR_UNSUPPORTED).
 * Output extent per spatial dim, with span = (k-1)*dilation + 1:
 *   floor mode: (in + pad_begin + pad_end - span) / stride + 1
 *   ceil mode:  ceil((in + pad_begin + pad_end - span) / stride) + 1, minus
 *               one when the last window would start at or beyond
 *               in + pad_begin, i.e. past the input and its left padding
 *               (PyTorch's rule, followed by recent ONNX references).
 * maxpool ignores padding; avgpool divides by the number of input elements
 * in the window, or with count_include_pad by the number of taps inside the
 * explicitly padded input (taps that ceil_mode adds beyond the end pad are
 * never counted, as in PyTorch). A maxpool window that holds no input
 * element (possible only with dilation) gives -inf; NaN inputs propagate.
 * global_avgpool averages every spatial dim of an [N,C,...] tensor to 1.
 *
 * Each kernel sweeps one (image, channel) plane at a time: the in-range tap
 * range of every output column is computed once per call and of every
 * output row once per row, so the inner loops run over contiguous input
 * with no bounds tests.
 */
#include "op_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* Everything a pooling kernel needs, derived and checked once. */
typedef struct pool_geom {
    int64_t n, c, h, w;     /* input */
    int64_t kh, kw;         /* kernel */
    int64_t sh, sw, dh, dw; /* stride, dilation */
    int64_t pt, pl, pb, pr; /* pads */
    int64_t oh, ow;         /* output spatial size */
} pool_geom;

static int64_t or_one(int32_t v)
{
    return v == 0 ? 1 : v;
}

/* Output extent of one spatial dim (ONNX rule, see the file comment), or -1
 * when the padded input is shorter than the dilated kernel. */
static int64_t out_extent(int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0, int64_t p1,
                          int ceil_mode)
{
    int64_t avail = in + p0 + p1 - ((k - 1) * d + 1);
    if (avail < 0) return -1;
    if (!ceil_mode) return avail / s + 1;
    int64_t o = (avail + s - 1) / s + 1;
    if ((o - 1) * s >= in + p0) o--;
    return o;
}

static xf_status pool_geom_get(const char *op, int is_max, const xf_params *p, xf_dtype dt,
                               const xf_shape *x, pool_geom *g, xf_error *err)
{
    char sx[96];
    xf_shape_str(x, sx, sizeof sx);
    if (dt != XF_F32)
        return XF_FAIL(err, XF_ERR_SHAPE, "%s: input X is %s %s, only float32 is supported", op,
                       xf_dtype_name(dt), sx);
    if (x->rank != 4)
        return XF_FAIL(err, XF_ERR_SHAPE, "%s: input X must be 4-D NCHW, got %s", op, sx);
    g->n = x->dims[0], g->c = x->dims[1], g->h = x->dims[2], g->w = x->dims[3];
    g->kh = p->kernel[0], g->kw = p->kernel[1];
    g->sh = or_one(p->stride[0]), g->sw = or_one(p->stride[1]);
    g->dh = or_one(p->dilation[0]), g->dw = or_one(p->dilation[1]);
    g->pt = p->pads[0], g->pl = p->pads[1], g->pb = p->pads[2], g->pr = p->pads[3];
    if (g->kh < 1 || g->kw < 1)
        return XF_FAIL(err, XF_ERR_SHAPE, "%s: kernel %lldx%lld must be at least 1x1", op,
                       (long long)g->kh, (long long)g->kw);
    if (g->sh < 0 || g->sw < 0 || g->dh < 0 || g->dw < 0)
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "%s: stride %lldx%lld and dilation %lldx%lld must be positive", op,
                       (long long)g->sh, (long long)g->sw, (long long)g->dh, (long long)g->dw);
    if (g->pt < 0 || g->pl < 0 || g->pb < 0 || g->pr < 0)
        return XF_FAIL(err, XF_ERR_SHAPE, "%s: pads (%lld,%lld,%lld,%lld) must not be negative",
                       op, (long long)g->pt, (long long)g->pl, (long long)g->pb,
                       (long long)g->pr);
    if (g->pt >= g->kh || g->pb >= g->kh || g->pl >= g->kw || g->pr >= g->kw)
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "%s: pads (%lld,%lld,%lld,%lld) must each be smaller than the kernel "
                       "%lldx%lld",
                       op, (long long)g->pt, (long long)g->pl, (long long)g->pb,
                       (long long)g->pr, (long long)g->kh, (long long)g->kw);
    if (!is_max && (g->dh != 1 || g->dw != 1))
        return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                       "%s: dilation %lldx%lld is not supported (only maxpool takes dilations)",
                       op, (long long)g->dh, (long long)g->dw);
    if (p->ceil_mode != 0 && p->ceil_mode != 1)
        return XF_FAIL(err, XF_ERR_SHAPE, "%s: ceil_mode is %d, must be 0 or 1", op,
                       (int)p->ceil_mode);
    if (p->count_include_pad != 0 && p->count_include_pad != 1)
        return XF_FAIL(err, XF_ERR_SHAPE, "%s: count_include_pad is %d, must be 0 or 1", op,
                       (int)p->count_include_pad);
    g->oh = out_extent(g->h, g->kh, g->sh, g->dh, g->pt, g->pb, p->ceil_mode);
    g->ow = out_extent(g->w, g->kw, g->sw, g->dw, g->pl, g->pr, p->ceil_mode);
    if (g->oh < 0 || g->ow < 0) {
        char kd[64] = "";
        if (g->dh != 1 || g->dw != 1)
            snprintf(kd, sizeof kd, " (dilation %lldx%lld spans %lldx%lld)", (long long)g->dh,
                     (long long)g->dw, (long long)((g->kh - 1) * g->dh + 1),
                     (long long)((g->kw - 1) * g->dw + 1));
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "%s: kernel %lldx%lld%s larger than padded input %lldx%lld (X %s, pads "
                       "%lld,%lld,%lld,%lld)",
                       op, (long long)g->kh, (long long)g->kw, kd,
                       (long long)(g->h + g->pt + g->pb), (long long)(g->w + g->pl + g->pr), sx,
                       (long long)g->pt, (long long)g->pl, (long long)g->pb, (long long)g->pr);
    }
    return XF_OK;
}

static xf_status infer_pool(const char *op, int is_max, const xf_params *p,
                            const xf_dtype *in_dt, const xf_shape *in_sh, xf_dtype *out_dt,
                            xf_shape *out_sh, xf_error *err)
{
    pool_geom g;
    xf_status st = pool_geom_get(op, is_max, p, in_dt[0], &in_sh[0], &g, err);
    if (st != XF_OK) return st;
    int64_t dims[4] = {g.n, g.c, g.oh, g.ow};
    out_dt[0] = XF_F32;
    out_sh[0] = xf_shape_make(4, dims);
    return XF_OK;
}

/* Taps k in [*k0, *k1) of a window starting at `start` (stride d, k taps)
 * that land in [0, hi). */
static void tap_range(int64_t start, int64_t k, int64_t d, int64_t hi, int64_t *k0, int64_t *k1)
{
    int64_t a = start < 0 ? (-start + d - 1) / d : 0;
    int64_t b = hi > start ? (hi - start + d - 1) / d : 0;
    if (b > k) b = k;
    *k0 = a;
    *k1 = b > a ? b : a;
}

/* Per output column: first/last in-range tap and the avgpool divisor part. */
typedef struct col_taps {
    int64_t k0, k1, pad_cnt;
} col_taps;

static col_taps *plan_cols(const pool_geom *g)
{
    col_taps *c = xf_malloc(sizeof *c * (size_t)(g->ow ? g->ow : 1));
    if (!c) return NULL;
    for (int64_t ox = 0; ox < g->ow; ox++) {
        int64_t start = ox * g->sw - g->pl, lo, hi;
        tap_range(start, g->kw, g->dw, g->w, &c[ox].k0, &c[ox].k1);
        tap_range(start, g->kw, g->dw, g->w + g->pr, &lo, &hi);
        c[ox].pad_cnt = hi; /* start >= -pl: every tap below hi is inside the pads */
    }
    return c;
}

static void maxpool_plane(const pool_geom *g, const col_taps *cols, const float *x, float *y)
{
    for (int64_t oy = 0; oy < g->oh; oy++) {
        int64_t sy = oy * g->sh - g->pt, ky0, ky1;
        tap_range(sy, g->kh, g->dh, g->h, &ky0, &ky1);
        for (int64_t ox = 0; ox < g->ow; ox++) {
            const col_taps *c = &cols[ox];
            const float *base = x + ox * g->sw - g->pl;
            float m = -INFINITY;
            for (int64_t ky = ky0; ky < ky1; ky++) {
                const float *row = base + (sy + ky * g->dh) * g->w;
                for (int64_t kx = c->k0; kx < c->k1; kx++) {
                    float v = row[kx * g->dw];
                    if (v > m || isnan(v)) m = v;
                }
            }
            y[oy * g->ow + ox] = m;
        }
    }
}

static void avgpool_plane(const pool_geom *g, const col_taps *cols, int include_pad,
                          const float *x, float *y)
{
    for (int64_t oy = 0; oy < g->oh; oy++) {
        int64_t sy = oy * g->sh - g->pt, ky0, ky1, lo, pad_rows;
        tap_range(sy, g->kh, g->dh, g->h, &ky0, &ky1);
        tap_range(sy, g->kh, g->dh, g->h + g->pb, &lo, &pad_rows);
        for (int64_t ox = 0; ox < g->ow; ox++) {
            const col_taps *c = &cols[ox];
            const float *base = x + ox * g->sw - g->pl;
            float sum = 0.0f;
            for (int64_t ky = ky0; ky < ky1; ky++) {
                const float *row = base + (sy + ky * g->dh) * g->w;
                for (int64_t kx = c->k0; kx < c->k1; kx++) sum += row[kx * g->dw];
            }
            int64_t cnt = include_pad ? pad_rows * c->pad_cnt : (ky1 - ky0) * (c->k1 - c->k0);
            y[oy * g->ow + ox] = sum / (float)cnt;
        }
    }
}

/* Runs maxpool (is_max) or avgpool over every plane of in[0]. */
static xf_status run_pool(const char *op, int is_max, const xf_params *p,
                          const xf_tensor *const *in, xf_tensor *out, xf_error *err)
{
    pool_geom g;
    xf_status st = pool_geom_get(op, is_max, p, in[0]->dtype, &in[0]->shape, &g, err);
    if (st != XF_OK) return st;
    if (out->dtype != XF_F32 || out->shape.rank != 4 || out->shape.dims[2] != g.oh ||
        out->shape.dims[3] != g.ow)
        return XF_FAIL(err, XF_ERR_INTERNAL, "%s: output does not match the inferred shape", op);
    col_taps *cols = plan_cols(&g);
    if (!cols) return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", op);
    const float *x = in[0]->data;
    float *y = out->data;
    for (int64_t pl = 0; pl < g.n * g.c; pl++) {
        const float *xp = x + pl * g.h * g.w;
        float *yp = y + pl * g.oh * g.ow;
        if (is_max) maxpool_plane(&g, cols, xp, yp);
        else avgpool_plane(&g, cols, p->count_include_pad, xp, yp);
    }
    xf_free(cols);
    return XF_OK;
}

XF_DECLARE_INFER(maxpool)
{
    (void)n_in;
    (void)n_out;
    if (p->count_include_pad != 0)
        return XF_FAIL(err, XF_ERR_SHAPE, "maxpool: count_include_pad is an avgpool parameter");
    return infer_pool("maxpool", 1, p, in_dt, in_sh, out_dt, out_sh, err);
}

XF_DECLARE_RUN(maxpool)
{
    (void)n_in;
    (void)n_out;
    return run_pool("maxpool", 1, p, in, &out[0], err);
}

XF_DECLARE_INFER(avgpool)
{
    (void)n_in;
    (void)n_out;
    return infer_pool("avgpool", 0, p, in_dt, in_sh, out_dt, out_sh, err);
}

XF_DECLARE_RUN(avgpool)
{
    (void)n_in;
    (void)n_out;
    return run_pool("avgpool", 0, p, in, &out[0], err);
}

/* --------------------------------------------------------- global_avgpool */

XF_DECLARE_INFER(global_avgpool)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    char sx[96];
    const xf_shape *x = &in_sh[0];
    if (in_dt[0] != XF_F32)
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "global_avgpool: input X is %s %s, only float32 is supported",
                       xf_dtype_name(in_dt[0]), xf_shape_str(x, sx, sizeof sx));
    if (x->rank < 3)
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "global_avgpool: input X must be [N,C,D1,...] (rank >= 3), got %s",
                       xf_shape_str(x, sx, sizeof sx));
    xf_shape o = *x;
    for (int i = 2; i < o.rank; i++) o.dims[i] = 1;
    out_dt[0] = XF_F32;
    out_sh[0] = o;
    return XF_OK;
}

XF_DECLARE_RUN(global_avgpool)
{
    (void)p;
    (void)n_in;
    (void)n_out;
    const xf_shape *s = &in[0]->shape;
    if (s->rank < 3 || in[0]->dtype != XF_F32 || out[0].dtype != XF_F32)
        return XF_FAIL(err, XF_ERR_INTERNAL,
                       "global_avgpool: input does not match the inferred shape");
    int64_t planes = s->dims[0] * s->dims[1], area = 1;
    for (int i = 2; i < s->rank; i++) area *= s->dims[i];
    const float *x = in[0]->data;
    float *y = out[0].data;
    for (int64_t pl = 0; pl < planes; pl++) {
        const float *xp = x + pl * area;
        double sum = 0;
        for (int64_t i = 0; i < area; i++) sum += xp[i];
        y[pl] = (float)(sum / (double)area); /* an empty plane gives NaN */
    }
    return XF_OK;
}
