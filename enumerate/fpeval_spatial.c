/*
 * fpeval_spatial.c — operator semantics in Z_p, part 2: convolution (groups,
 * stride, dilation, pads, fused activation), pooling, enlarge, the constant
 * generators and data movement (concat, split, transpose, slice).
 *
 * Average pooling divides by the window's element count with a modular
 * inverse, so avgpool equals a depthwise conv with const_pool exactly (with
 * count_include_pad, or where no window touches padding). Max-pooling is not
 * a field operation: it is a keyed PRF of the sorted multiset of the
 * window's elements. That keeps what depends only on the windows
 * (maxpool commutes with channel concat/split, equals itself under any
 * window-preserving rewrite) but cannot see order facts such as
 * relu(maxpool(x)) = maxpool(relu(x)) (see docs/enumerate.md).
 */
#include "fpeval_shared_internal.h"

#include <string.h>

static int64_t one_if_zero(int32_t v)
{
    return v == 0 ? 1 : v;
}

/* For each of n outputs along one axis (stride st, dilation dl, leading pad
 * pad, input length len), the kernel taps [lo, hi) of k that read inside
 * the input. */
static void taps(int64_t n, int64_t st, int64_t dl, int64_t pad, int64_t len, int64_t k,
                 int64_t *lo, int64_t *hi)
{
    for (int64_t o = 0; o < n; o++) {
        lo[o] = k;
        hi[o] = 0;
        for (int64_t t = 0; t < k; t++) {
            int64_t i = o * st - pad + t * dl;
            if (i < 0 || i >= len) continue;
            if (t < lo[o]) lo[o] = t;
            hi[o] = t + 1;
        }
        if (hi[o] < lo[o]) hi[o] = lo[o];
    }
}

static void conv(const fp_keys *k, const xf_params *p, int n_in, const fp_tensor *const *in,
                 fp_tensor *y)
{
    const fp_tensor *x = in[0], *w = in[1];
    const uint64_t *bias = n_in > 2 && in[2] ? in[2]->d : NULL;
    int64_t N = x->shape.dims[0], C = x->shape.dims[1], H = x->shape.dims[2], W = x->shape.dims[3];
    int64_t M = w->shape.dims[0], kh = w->shape.dims[2], kw = w->shape.dims[3];
    int64_t G = one_if_zero(p->group), cg = C / G, mg = M / G;
    int64_t sh = one_if_zero(p->stride[0]), sw = one_if_zero(p->stride[1]);
    int64_t dh = one_if_zero(p->dilation[0]), dw = one_if_zero(p->dilation[1]);
    int64_t OH = y->shape.dims[2], OW = y->shape.dims[3];
    /* the kernel taps that land inside the input, per output row and column */
    int64_t ky0[FP_MAX_NUMEL], ky1[FP_MAX_NUMEL], kx0[FP_MAX_NUMEL], kx1[FP_MAX_NUMEL];
    taps(OH, sh, dh, p->pads[0], H, kh, ky0, ky1);
    taps(OW, sw, dw, p->pads[1], W, kw, kx0, kx1);
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++) {
            int64_t gi = m / mg;
            for (int64_t oy = 0; oy < OH; oy++)
                for (int64_t ox = 0; ox < OW; ox++) {
                    unsigned __int128 acc = 0;
                    int64_t terms = 0, row = kx1[ox] - kx0[ox];
                    int64_t ix0 = ox * sw - p->pads[1];
                    for (int64_t c = 0; c < cg; c++)
                        for (int64_t ky = ky0[oy]; ky < ky1[oy]; ky++) {
                            int64_t iy = oy * sh - p->pads[0] + ky * dh;
                            const uint64_t *xr = x->d + ((n * C + gi * cg + c) * H + iy) * W + ix0;
                            const uint64_t *wr = w->d + ((m * cg + c) * kh + ky) * kw;
                            if (terms + row > 31) acc = en_fp_reduce128(acc), terms = 1;
                            for (int64_t kx = kx0[ox]; kx < kx1[ox]; kx++)
                                acc += (unsigned __int128)xr[kx * dw] * wr[kx];
                            terms += row;
                        }
                    uint64_t v = en_fp_reduce128(acc);
                    if (bias) v = en_fp_add(v, bias[m]);
                    y->d[((n * M + m) * OH + oy) * OW + ox] = v;
                }
        }
    en_fp_activation(k, p->activation, y->d, xf_shape_numel(&y->shape));
}

static void sort_u64(uint64_t *v, int n)
{
    for (int i = 1; i < n; i++) {
        uint64_t t = v[i];
        int j = i - 1;
        while (j >= 0 && v[j] > t) v[j + 1] = v[j], j--;
        v[j + 1] = t;
    }
}

static void pool(const fp_keys *k, xf_op op, const xf_params *p, const fp_tensor *x, fp_tensor *y)
{
    int64_t NC = x->shape.dims[0] * x->shape.dims[1], H = x->shape.dims[2], W = x->shape.dims[3];
    int64_t kh = p->kernel[0], kw = p->kernel[1];
    int64_t sh = one_if_zero(p->stride[0]), sw = one_if_zero(p->stride[1]);
    int64_t dh = op == XF_OP_MAXPOOL ? one_if_zero(p->dilation[0]) : 1;
    int64_t dw = op == XF_OP_MAXPOOL ? one_if_zero(p->dilation[1]) : 1;
    int64_t OH = y->shape.dims[2], OW = y->shape.dims[3];
    uint64_t win[FP_MAX_WINDOW], inv[FP_MAX_WINDOW + 1] = {0}; /* inverses of counts, as needed */
    for (int64_t pl = 0; pl < NC; pl++)
        for (int64_t oy = 0; oy < OH; oy++)
            for (int64_t ox = 0; ox < OW; ox++) {
                int nwin = 0;
                int64_t padded = 0;
                uint64_t sum = 0;
                for (int64_t ky = 0; ky < kh; ky++)
                    for (int64_t kx = 0; kx < kw; kx++) {
                        int64_t iy = oy * sh - p->pads[0] + ky * dh;
                        int64_t ix = ox * sw - p->pads[1] + kx * dw;
                        if (iy >= -p->pads[0] && iy < H + p->pads[2] && ix >= -p->pads[1] &&
                            ix < W + p->pads[3])
                            padded++;
                        if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                        uint64_t v = x->d[(pl * H + iy) * W + ix];
                        win[nwin++] = v;
                        sum = en_fp_add(sum, v);
                    }
                uint64_t out;
                if (op == XF_OP_AVGPOOL) {
                    int64_t cnt = p->count_include_pad ? padded : nwin;
                    if (!inv[cnt]) inv[cnt] = xf_enum_fp_inv((uint64_t)cnt);
                    out = en_fp_mul(sum, inv[cnt]);
                } else {
                    sort_u64(win, nwin);
                    uint64_t h = en_fp_mix(k->k[FPK_MAXPOOL], (uint64_t)nwin);
                    for (int i = 0; i < nwin; i++) h = en_fp_mix(h, win[i]);
                    out = en_fp_reduce(h);
                }
                y->d[(pl * OH + oy) * OW + ox] = out;
            }
}

static void enlarge(const fp_tensor *w, fp_tensor *y)
{
    int64_t planes = w->shape.dims[0] * w->shape.dims[1], kh = w->shape.dims[2], kw = w->shape.dims[3];
    int64_t th = y->shape.dims[2], tw = y->shape.dims[3], oy = (th - kh) / 2, ox = (tw - kw) / 2;
    memset(y->d, 0, sizeof(uint64_t) * (size_t)xf_shape_numel(&y->shape));
    for (int64_t pl = 0; pl < planes; pl++)
        for (int64_t r = 0; r < kh; r++)
            memcpy(y->d + (pl * th + oy + r) * tw + ox, w->d + (pl * kh + r) * kw,
                   sizeof(uint64_t) * (size_t)kw);
}

static void constant(xf_op op, fp_tensor *y)
{
    const xf_shape *s = &y->shape;
    int64_t n = xf_shape_numel(s);
    uint64_t fill = op == XF_OP_CONST_ONES ? 1
                    : op == XF_OP_CONST_POOL ? xf_enum_fp_inv((uint64_t)(s->dims[2] * s->dims[3]))
                                              : 0;
    for (int64_t i = 0; i < n; i++) y->d[i] = fill;
    if (op == XF_OP_CONST_IDENTITY_CONV) {
        int64_t c = s->dims[0], kh = s->dims[2], kw = s->dims[3];
        for (int64_t i = 0; i < c; i++) y->d[((i * c + i) * kh + kh / 2) * kw + kw / 2] = 1;
    } else if (op == XF_OP_CONST_IDENTITY_MATRIX) {
        for (int64_t i = 0; i < s->dims[0]; i++) y->d[i * s->dims[0] + i] = 1;
    }
}

/* outer x dims[axis] x inner blocks of a concat/split along `axis`. */
static void blocks(const xf_shape *s, int axis, int64_t *outer, int64_t *inner)
{
    *outer = 1, *inner = 1;
    for (int i = 0; i < axis; i++) *outer *= s->dims[i];
    for (int i = axis + 1; i < s->rank; i++) *inner *= s->dims[i];
}

static void concat_split(int is_concat, const xf_params *p, int n_in, const fp_tensor *const *in,
                         int n_out, fp_tensor *out)
{
    const fp_tensor *whole = is_concat ? out : in[0];
    int axis = (int)(p->axis < 0 ? p->axis + whole->shape.rank : p->axis);
    int64_t outer, inner, total = whole->shape.dims[axis];
    blocks(&whole->shape, axis, &outer, &inner);
    int parts = is_concat ? n_in : n_out;
    for (int64_t o = 0; o < outer; o++) {
        int64_t at = 0;
        for (int i = 0; i < parts; i++) {
            const fp_tensor *piece = is_concat ? in[i] : &out[i];
            int64_t len = piece->shape.dims[axis] * inner;
            uint64_t *pd = piece->d + o * len, *wd = whole->d + o * total * inner + at;
            if (is_concat) memcpy(wd, pd, sizeof(uint64_t) * (size_t)len);
            else memcpy(pd, wd, sizeof(uint64_t) * (size_t)len);
            at += len;
        }
    }
}

static void transpose(const xf_params *p, const fp_tensor *x, fp_tensor *y)
{
    int r = x->shape.rank;
    int64_t ist[XF_MAX_DIMS], st[XF_MAX_DIMS], idx[XF_MAX_DIMS] = {0};
    int perm[XF_MAX_DIMS];
    xf_shape_strides(&x->shape, ist);
    xf_transpose_perm(p, r, perm); /* valid: the shape inference accepted it */
    for (int i = 0; i < r; i++) st[i] = ist[perm[i]];
    int64_t n = xf_shape_numel(&y->shape), off = 0;
    for (int64_t i = 0; i < n; i++) {
        y->d[i] = x->d[off];
        for (int d = r - 1; d >= 0; d--) {
            idx[d]++;
            off += st[d];
            if (idx[d] < y->shape.dims[d]) break;
            off -= st[d] * y->shape.dims[d];
            idx[d] = 0;
        }
    }
}

/* Slice: out[i] = x[start + i * step] along the sliced axes (starts
 * already within range: the enumerator only makes in-range slices). */
static void slice(const xf_params *p, const fp_tensor *x, fp_tensor *y)
{
    int r = x->shape.rank;
    int64_t st[XF_MAX_DIMS], step[XF_MAX_DIMS], idx[XF_MAX_DIMS] = {0}, base = 0;
    xf_shape_strides(&x->shape, st);
    for (int d = 0; d < r; d++) step[d] = st[d];
    for (int i = 0; i < p->n_axes; i++) {
        int a = (int)(p->axes[i] < 0 ? p->axes[i] + r : p->axes[i]);
        int64_t s0 = p->starts[i] < 0 ? p->starts[i] + x->shape.dims[a] : p->starts[i];
        base += s0 * st[a];
        step[a] = st[a] * (p->steps[i] ? p->steps[i] : 1);
    }
    int64_t n = xf_shape_numel(&y->shape), off = base;
    for (int64_t i = 0; i < n; i++) {
        y->d[i] = x->d[off];
        for (int d = r - 1; d >= 0; d--) {
            idx[d]++;
            off += step[d];
            if (idx[d] < y->shape.dims[d]) break;
            off -= step[d] * y->shape.dims[d];
            idx[d] = 0;
        }
    }
}

void en_fp_run_spatial(const fp_keys *k, xf_op op, const xf_params *p, int n_in,
                    const fp_tensor *const *in, int n_out, fp_tensor *out)
{
    switch (op) {
    case XF_OP_CONV: conv(k, p, n_in, in, out); break;
    case XF_OP_MAXPOOL: case XF_OP_AVGPOOL: pool(k, op, p, in[0], out); break;
    case XF_OP_ENLARGE: enlarge(in[0], out); break;
    case XF_OP_CONST_IDENTITY_CONV: case XF_OP_CONST_IDENTITY_MATRIX: case XF_OP_CONST_ONES:
    case XF_OP_CONST_POOL:
        constant(op, out);
        break;
    case XF_OP_CONCAT: concat_split(1, p, n_in, in, n_out, out); break;
    case XF_OP_SPLIT: concat_split(0, p, n_in, in, n_out, out); break;
    case XF_OP_TRANSPOSE: transpose(p, in[0], out); break;
    case XF_OP_SLICE: slice(p, in[0], out); break;
    default: break; /* en_fp_op_supported() is checked when a vocabulary is loaded */
    }
}
