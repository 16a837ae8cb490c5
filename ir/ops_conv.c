/*
 * ops_conv.c — 2-D convolution and the operators that build conv kernels:
 * enlarge (zero-pad a kernel to a larger size, centred) and the constant
 * generators that TASO-style rules need (identity conv kernel, identity
 * matrix, ones, average-pool kernel) plus ONNX ConstantOfShape.
 *
 * conv is NCHW: X [N,C,H,W], W [M,C/group,kh,kw], optional bias [M]; pads
 * are (top,left,bottom,right); stride, dilation and group of 0 mean 1; an
 * activation may be fused after the bias. The kernel lowers each (image,
 * group) to one matrix product W_g [M/g, C/g*kh*kw] x cols [C/g*kh*kw, OH*OW]
 * on sgemm.c; a 1x1, stride-1, unpadded conv multiplies the input directly.
 */
#include "op_internal.h"
#include "sgemm_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Everything the conv kernel needs, derived and checked once. */
typedef struct conv_geom {
    int64_t n, c, h, w;      /* input */
    int64_t m, kh, kw;       /* output channels, kernel */
    int64_t group, cg, mg;   /* groups, channels per group in / out */
    int64_t sh, sw, dh, dw;  /* stride, dilation */
    int64_t pt, pl, pb, pr;  /* pads */
    int64_t oh, ow;          /* output spatial size */
} conv_geom;

static int64_t or_one(int32_t v)
{
    return v == 0 ? 1 : v;
}

/* Output extent of one spatial dim, or -1 when the padded input is smaller
 * than the dilated kernel. */
static int64_t out_extent(int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0, int64_t p1)
{
    int64_t span = (k - 1) * d + 1;
    if (in + p0 + p1 < span) return -1;
    return (in + p0 + p1 - span) / s + 1;
}

static xf_status conv_geom_get(const xf_params *p, const xf_shape *x, const xf_shape *w,
                               conv_geom *g, xf_error *err)
{
    /* X and W as text, formatted only on the error paths (this runs for every
     * conv costed or matched) */
    char sx[96], sw[96];
#define XS xf_shape_str(x, sx, sizeof sx)
#define WS xf_shape_str(w, sw, sizeof sw)
    if (x->rank != 4)
        return XF_FAIL(err, XF_ERR_SHAPE, "conv: input X must be 4-D NCHW, got %s", XS);
    if (w->rank != 4)
        return XF_FAIL(err, XF_ERR_SHAPE, "conv: weight W must be 4-D [M,C/group,kh,kw], got %s",
                       WS);
    memset(g, 0, sizeof *g);
    g->n = x->dims[0], g->c = x->dims[1], g->h = x->dims[2], g->w = x->dims[3];
    g->m = w->dims[0], g->kh = w->dims[2], g->kw = w->dims[3];
    g->group = or_one(p->group);
    g->sh = or_one(p->stride[0]), g->sw = or_one(p->stride[1]);
    g->dh = or_one(p->dilation[0]), g->dw = or_one(p->dilation[1]);
    g->pt = p->pads[0], g->pl = p->pads[1], g->pb = p->pads[2], g->pr = p->pads[3];
    if (g->group < 0)
        return XF_FAIL(err, XF_ERR_SHAPE, "conv: group must be positive, got %d", (int)p->group);
    if (g->sh < 0 || g->sw < 0 || g->dh < 0 || g->dw < 0)
        return XF_FAIL(err, XF_ERR_SHAPE, "conv: stride %lldx%lld and dilation %lldx%lld must be positive",
                       (long long)g->sh, (long long)g->sw, (long long)g->dh, (long long)g->dw);
    if (g->pt < 0 || g->pl < 0 || g->pb < 0 || g->pr < 0)
        return XF_FAIL(err, XF_ERR_SHAPE, "conv: pads (%lld,%lld,%lld,%lld) must not be negative",
                       (long long)g->pt, (long long)g->pl, (long long)g->pb, (long long)g->pr);
    if (g->c % g->group != 0)
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "conv: input channels %lld (X %s) are not divisible by group %lld",
                       (long long)g->c, XS, (long long)g->group);
    if (g->m % g->group != 0)
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "conv: output channels %lld (W %s) are not divisible by group %lld",
                       (long long)g->m, WS, (long long)g->group);
    g->cg = g->c / g->group;
    g->mg = g->m / g->group;
    if (w->dims[1] != g->cg)
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "conv: weight %s has %lld input channels per group, but X %s with group "
                       "%lld needs %lld",
                       WS, (long long)w->dims[1], XS, (long long)g->group, (long long)g->cg);
    if (g->kh < 1 || g->kw < 1)
        return XF_FAIL(err, XF_ERR_SHAPE, "conv: weight %s has an empty kernel", WS);
    if (p->kernel[0] != g->kh || p->kernel[1] != g->kw)
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "conv: kernel parameter %dx%d does not match the weight's spatial dims "
                       "%lldx%lld (W %s)",
                       (int)p->kernel[0], (int)p->kernel[1], (long long)g->kh, (long long)g->kw,
                       WS);
    if (p->activation < XF_ACT_NONE || p->activation > XF_ACT_TANH)
        return XF_FAIL(err, XF_ERR_SHAPE, "conv: unknown fused activation %d", (int)p->activation);
    g->oh = out_extent(g->h, g->kh, g->sh, g->dh, g->pt, g->pb);
    g->ow = out_extent(g->w, g->kw, g->sw, g->dw, g->pl, g->pr);
    if (g->oh < 0 || g->ow < 0)
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "conv: padded input %lldx%lld (X %s, pads %lld,%lld,%lld,%lld) is smaller "
                       "than the dilated kernel %lldx%lld",
                       (long long)(g->h + g->pt + g->pb), (long long)(g->w + g->pl + g->pr), XS,
                       (long long)g->pt, (long long)g->pl, (long long)g->pb, (long long)g->pr,
                       (long long)((g->kh - 1) * g->dh + 1), (long long)((g->kw - 1) * g->dw + 1));
#undef XS
#undef WS
    return XF_OK;
}

XF_DECLARE_INFER(conv)
{
    (void)n_out;
    int has_bias = n_in >= 3 && in_dt[2] != XF_DTYPE_INVALID;
    for (int i = 0; i < (has_bias ? 3 : 2); i++)
        if (in_dt[i] != XF_F32)
            return XF_FAIL(err, XF_ERR_SHAPE, "conv: input %d must be float32, got %s", i,
                           xf_dtype_name(in_dt[i]));
    conv_geom g;
    xf_status st = conv_geom_get(p, &in_sh[0], &in_sh[1], &g, err);
    if (st != XF_OK) return st;
    if (has_bias && (in_sh[2].rank != 1 || in_sh[2].dims[0] != g.m)) {
        char sb[96];
        return XF_FAIL(err, XF_ERR_SHAPE, "conv: bias must be [%lld] (one per output channel), got %s",
                       (long long)g.m, xf_shape_str(&in_sh[2], sb, sizeof sb));
    }
    int64_t dims[4] = {g.n, g.m, g.oh, g.ow};
    out_dt[0] = XF_F32;
    out_sh[0] = xf_shape_make(4, dims);
    return XF_OK;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* Unfold one group's input x [cg,h,w] into cols [cg*kh*kw, oh*ow]; taps that
 * fall in the padding read as zero. */
static void im2col(const conv_geom *g, const float *x, float *cols)
{
    int64_t npix = g->oh * g->ow;
    for (int64_t c = 0; c < g->cg; c++)
        for (int64_t ky = 0; ky < g->kh; ky++)
            for (int64_t kx = 0; kx < g->kw; kx++) {
                float *row = cols + ((c * g->kh + ky) * g->kw + kx) * npix;
                /* ix = ox*sw + xoff is inside [0,w) exactly for ox in [lo,hi). */
                int64_t xoff = kx * g->dw - g->pl;
                int64_t hi = g->w - 1 - xoff < 0 ? 0 : min64(g->ow, (g->w - 1 - xoff) / g->sw + 1);
                int64_t lo = xoff >= 0 ? 0 : min64(hi, (-xoff + g->sw - 1) / g->sw);
                for (int64_t oy = 0; oy < g->oh; oy++) {
                    float *r = row + oy * g->ow;
                    int64_t iy = oy * g->sh + ky * g->dh - g->pt;
                    if (iy < 0 || iy >= g->h) {
                        memset(r, 0, sizeof(float) * (size_t)g->ow);
                        continue;
                    }
                    const float *src = x + (c * g->h + iy) * g->w + xoff;
                    for (int64_t ox = 0; ox < lo; ox++) r[ox] = 0.0f;
                    if (g->sw == 1)
                        memcpy(r + lo, src + lo, sizeof(float) * (size_t)(hi - lo));
                    else
                        for (int64_t ox = lo; ox < hi; ox++) r[ox] = src[ox * g->sw];
                    for (int64_t ox = hi; ox < g->ow; ox++) r[ox] = 0.0f;
                }
            }
}

static void apply_activation(int act, float *y, int64_t n)
{
    switch (act) {
    case XF_ACT_RELU:
        for (int64_t i = 0; i < n; i++) y[i] = y[i] < 0.0f ? 0.0f : y[i];
        break;
    case XF_ACT_SIGMOID:
        for (int64_t i = 0; i < n; i++) y[i] = 1.0f / (1.0f + expf(-y[i]));
        break;
    case XF_ACT_TANH:
        for (int64_t i = 0; i < n; i++) y[i] = tanhf(y[i]);
        break;
    default: break;
    }
}

XF_DECLARE_RUN(conv)
{
    (void)n_out;
    conv_geom g;
    xf_status st = conv_geom_get(p, &in[0]->shape, &in[1]->shape, &g, err);
    if (st != XF_OK) return st;
    const float *x = in[0]->data, *w = in[1]->data;
    const float *bias = n_in >= 3 && in[2] ? in[2]->data : NULL;
    float *y = out[0].data;
    int64_t npix = g.oh * g.ow, kdim = g.cg * g.kh * g.kw;
    int direct = g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.pt == 0 && g.pl == 0 &&
                 g.pb == 0 && g.pr == 0;
    /* the im2col scratch [kdim, npix] can be far larger than any tensor of
     * the graph (kh*kw times the input): checked like one */
    int64_t cols_dims[2] = {direct ? 0 : kdim, npix};
    xf_shape cols_shape = xf_shape_make(2, cols_dims);
    size_t cols_bytes;
    st = xf_shape_check(&cols_shape, XF_F32, NULL, &cols_bytes, err);
    if (st == XF_OK) st = xf_mem_limit_check(cols_bytes, "conv: the im2col scratch", err);
    if (st != XF_OK) return st;
    size_t ncols = cols_bytes / sizeof(float);
    size_t nwork = ir_sgemm_work_floats(g.mg, npix, kdim);
    float *buf = xf_malloc(sizeof(float) * (ncols + nwork + 1));
    if (!buf)
        return XF_FAIL(err, XF_ERR_NOMEM, "conv: out of memory for %zu floats of scratch",
                       ncols + nwork);
    float *cols = buf, *work = buf + ncols;
    for (int64_t n = 0; n < g.n; n++) {
        float *yn = y + n * g.m * npix;
        if (bias)
            for (int64_t m = 0; m < g.m; m++)
                for (int64_t i = 0; i < npix; i++) yn[m * npix + i] = bias[m];
        for (int64_t gi = 0; gi < g.group; gi++) {
            const float *xg = x + (n * g.c + gi * g.cg) * g.h * g.w;
            const float *b = xg;
            if (!direct) {
                im2col(&g, xg, cols);
                b = cols;
            }
            ir_sgemm(0, 0, g.mg, npix, kdim, 1.0f, w + gi * g.mg * kdim, kdim, b, npix,
                     bias ? 1.0f : 0.0f, yn + gi * g.mg * npix, npix, work);
        }
    }
    apply_activation(p->activation, y, g.n * g.m * npix);
    xf_free(buf);
    return XF_OK;
}

/* ------------------------------------------------------------------ enlarge */

XF_DECLARE_INFER(enlarge)
{
    (void)n_in;
    (void)n_out;
    const xf_shape *w = &in_sh[0];
    char sw[96];
    xf_shape_str(w, sw, sizeof sw);
    if (w->rank != 4)
        return XF_FAIL(err, XF_ERR_SHAPE, "enlarge: kernel must be 4-D [O,I,kh,kw], got %s", sw);
    for (int i = 0; i < 2; i++) {
        int64_t from = w->dims[2 + i], to = p->kernel[i];
        const char *what = i == 0 ? "height" : "width";
        if (to < from)
            return XF_FAIL(err, XF_ERR_SHAPE, "enlarge: target kernel %s %lld is smaller than %lld (W %s)",
                           what, (long long)to, (long long)from, sw);
        if ((to - from) % 2 != 0)
            return XF_FAIL(err, XF_ERR_SHAPE,
                           "enlarge: kernel %s %lld -> %lld cannot be centred (odd difference, W %s)",
                           what, (long long)from, (long long)to, sw);
    }
    int64_t dims[4] = {w->dims[0], w->dims[1], p->kernel[0], p->kernel[1]};
    out_dt[0] = in_dt[0];
    out_sh[0] = xf_shape_make(4, dims);
    return XF_OK;
}

XF_DECLARE_RUN(enlarge)
{
    (void)n_in;
    (void)n_out;
    (void)err;
    const xf_shape *s = &in[0]->shape;
    size_t es = xf_dtype_size(in[0]->dtype);
    int64_t kh = s->dims[2], kw = s->dims[3], th = p->kernel[0], tw = p->kernel[1];
    int64_t oy = (th - kh) / 2, ox = (tw - kw) / 2, planes = s->dims[0] * s->dims[1];
    const char *src = in[0]->data;
    char *dst = out[0].data;
    memset(dst, 0, xf_tensor_bytes(&out[0]));
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t y = 0; y < kh; y++)
            memcpy(dst + (size_t)((pl * th + oy + y) * tw + ox) * es,
                   src + (size_t)((pl * kh + y) * kw) * es, (size_t)kw * es);
    return XF_OK;
}

/* ------------------------------------------------------ constant generators */

/* params.shape as the output shape, checked. */
static xf_status params_shape(const char *op, const xf_params *p, int want_rank, xf_shape *out,
                              xf_error *err)
{
    if (p->n_shape < 0 || p->n_shape > XF_MAX_DIMS)
        return XF_FAIL(err, XF_ERR_SHAPE, "%s: shape rank %d is out of range 0..%d", op,
                       (int)p->n_shape, XF_MAX_DIMS);
    if (want_rank >= 0 && p->n_shape != want_rank)
        return XF_FAIL(err, XF_ERR_SHAPE, "%s: shape must have %d dims, got %d", op, want_rank,
                       (int)p->n_shape);
    *out = xf_shape_make(p->n_shape, p->shape);
    for (int i = 0; i < out->rank; i++)
        if (out->dims[i] < 0) {
            char s[96];
            return XF_FAIL(err, XF_ERR_SHAPE, "%s: shape %s has a negative dimension", op,
                           xf_shape_str(out, s, sizeof s));
        }
    return XF_OK;
}

XF_DECLARE_INFER(const_identity_conv)
{
    (void)n_in, (void)in_dt, (void)in_sh, (void)n_out;
    xf_shape s;
    xf_status st = params_shape("const_iconv", p, 4, &s, err);
    if (st != XF_OK) return st;
    char b[96];
    if (s.dims[0] != s.dims[1])
        return XF_FAIL(err, XF_ERR_SHAPE, "const_iconv: shape %s must be [C,C,kh,kw]",
                       xf_shape_str(&s, b, sizeof b));
    if (s.dims[2] % 2 == 0 || s.dims[3] % 2 == 0)
        return XF_FAIL(err, XF_ERR_SHAPE, "const_iconv: kernel of %s must have odd sides (a centre tap)",
                       xf_shape_str(&s, b, sizeof b));
    out_dt[0] = XF_F32;
    out_sh[0] = s;
    return XF_OK;
}

XF_DECLARE_RUN(const_identity_conv)
{
    (void)p, (void)n_in, (void)in, (void)n_out, (void)err;
    const xf_shape *s = &out[0].shape;
    int64_t c = s->dims[0], kh = s->dims[2], kw = s->dims[3];
    float *o = out[0].data;
    memset(o, 0, xf_tensor_bytes(&out[0]));
    for (int64_t i = 0; i < c; i++) o[((i * c + i) * kh + kh / 2) * kw + kw / 2] = 1.0f;
    return XF_OK;
}

XF_DECLARE_INFER(const_identity_matrix)
{
    (void)n_in, (void)in_dt, (void)in_sh, (void)n_out;
    xf_shape s;
    xf_status st = params_shape("const_imatrix", p, 2, &s, err);
    if (st != XF_OK) return st;
    if (s.dims[0] != s.dims[1]) {
        char b[96];
        return XF_FAIL(err, XF_ERR_SHAPE, "const_imatrix: shape %s must be square [n,n]",
                       xf_shape_str(&s, b, sizeof b));
    }
    out_dt[0] = XF_F32;
    out_sh[0] = s;
    return XF_OK;
}

XF_DECLARE_RUN(const_identity_matrix)
{
    (void)p, (void)n_in, (void)in, (void)n_out, (void)err;
    int64_t n = out[0].shape.dims[0];
    float *o = out[0].data;
    memset(o, 0, xf_tensor_bytes(&out[0]));
    for (int64_t i = 0; i < n; i++) o[i * n + i] = 1.0f;
    return XF_OK;
}

XF_DECLARE_INFER(const_ones)
{
    (void)n_in, (void)in_dt, (void)in_sh, (void)n_out;
    xf_shape s;
    xf_status st = params_shape("const_ones", p, -1, &s, err);
    if (st != XF_OK) return st;
    out_dt[0] = XF_F32;
    out_sh[0] = s;
    return XF_OK;
}

static void fill_f32(xf_tensor *t, float v)
{
    float *o = t->data;
    int64_t n = xf_shape_numel(&t->shape);
    for (int64_t i = 0; i < n; i++) o[i] = v;
}

XF_DECLARE_RUN(const_ones)
{
    (void)p, (void)n_in, (void)in, (void)n_out, (void)err;
    fill_f32(&out[0], 1.0f);
    return XF_OK;
}

XF_DECLARE_INFER(const_pool)
{
    (void)n_in, (void)in_dt, (void)in_sh, (void)n_out;
    xf_shape s;
    xf_status st = params_shape("const_pool", p, 4, &s, err);
    if (st != XF_OK) return st;
    char b[96];
    if (s.dims[1] != 1)
        return XF_FAIL(err, XF_ERR_SHAPE, "const_pool: shape %s must be [C,1,kh,kw]",
                       xf_shape_str(&s, b, sizeof b));
    if (s.dims[2] < 1 || s.dims[3] < 1)
        return XF_FAIL(err, XF_ERR_SHAPE, "const_pool: kernel of %s must not be empty",
                       xf_shape_str(&s, b, sizeof b));
    out_dt[0] = XF_F32;
    out_sh[0] = s;
    return XF_OK;
}

XF_DECLARE_RUN(const_pool)
{
    (void)p, (void)n_in, (void)in, (void)n_out, (void)err;
    const xf_shape *s = &out[0].shape;
    fill_f32(&out[0], 1.0f / (float)(s->dims[2] * s->dims[3]));
    return XF_OK;
}

/* ------------------------------------------------------- constant_of_shape */

XF_DECLARE_INFER(constant_of_shape)
{
    (void)n_in, (void)in_dt, (void)in_sh, (void)n_out;
    xf_shape s;
    xf_status st = params_shape("constant_of_shape", p, -1, &s, err);
    if (st != XF_OK) return st;
    double v = p->value;
    /* Integer targets: the value must be representable (conversion of an
     * out-of-range double is undefined behaviour in C). */
    int fits = 1;
    switch (p->to) {
    case XF_F32:
    case XF_F16:
    case XF_F64:
    case XF_BOOL: break;
    case XF_I8: fits = v >= -128.0 && v <= 127.0; break;
    case XF_U8: fits = v >= 0.0 && v <= 255.0; break;
    case XF_I64: fits = v >= -9223372036854775808.0 && v < 9223372036854775808.0; break;
    case XF_I32: fits = v > -2147483649.0 && v < 2147483648.0; break;
    default:
        return XF_FAIL(err, XF_ERR_SHAPE, "constant_of_shape: unsupported dtype %d (to)",
                       (int)p->to);
    }
    if (!fits)
        return XF_FAIL(err, XF_ERR_SHAPE, "constant_of_shape: value %g does not fit %s", v,
                       xf_dtype_name((xf_dtype)p->to));
    out_dt[0] = (xf_dtype)p->to;
    out_sh[0] = s;
    return XF_OK;
}

XF_DECLARE_RUN(constant_of_shape)
{
    (void)n_in, (void)in, (void)n_out;
    int64_t n = xf_shape_numel(&out[0].shape);
    double v = p->value;
    switch (out[0].dtype) {
    case XF_F32: fill_f32(&out[0], (float)v); break;
    case XF_I64: {
        int64_t *o = out[0].data;
        for (int64_t i = 0; i < n; i++) o[i] = (int64_t)v;
        break;
    }
    case XF_I32: {
        int32_t *o = out[0].data;
        for (int64_t i = 0; i < n; i++) o[i] = (int32_t)v;
        break;
    }
    case XF_BOOL: memset(out[0].data, v != 0.0 ? 1 : 0, (size_t)n); break;
    case XF_F16: {
        uint16_t *o = out[0].data, h = xf_f32_to_f16((float)v);
        for (int64_t i = 0; i < n; i++) o[i] = h;
        break;
    }
    case XF_F64: {
        double *o = out[0].data;
        for (int64_t i = 0; i < n; i++) o[i] = v;
        break;
    }
    case XF_I8: memset(out[0].data, (int8_t)v, (size_t)n); break;
    case XF_U8: memset(out[0].data, (uint8_t)v, (size_t)n); break;
    default:
        return XF_FAIL(err, XF_ERR_INVALID, "constant_of_shape: unsupported dtype %s",
                       xf_dtype_name(out[0].dtype));
    }
    return XF_OK;
}
