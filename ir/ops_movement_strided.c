/*
 * ops_movement_strided.c — transpose, slice and expand: operators whose
 * output is a strided view of the input, materialised by one copy engine.
 *
 * Each op describes its output as dims plus a source stride per output dim
 * (a permutation of the input strides for transpose, step-scaled strides
 * and a start offset for slice, zero strides on broadcast dims for expand).
 * The engine merges dims that are contiguous in the source, drops dims of
 * size 1, then walks the outer dims with an odometer (no div/mod per
 * element): inner runs that are contiguous in the source are one memcpy;
 * otherwise a typed strided loop copies them, and a large 2-D transpose is
 * done in cache-sized tiles. Everything is dtype-agnostic (bytes).
 */
#include "op_internal.h"

#include <string.h>

/* Tile edge for blocked transposes, and the smallest dims worth tiling. */
#define TILE 32
#define TILE_MIN 128

typedef struct view {
    int rank;
    int64_t dims[XF_MAX_DIMS];
    int64_t strides[XF_MAX_DIMS]; /* source strides in elements; may be 0 or negative */
} view;

/* Drop size-1 dims and merge neighbours that are contiguous in the source. */
static void coalesce(view *v)
{
    int n = 0;
    for (int i = 0; i < v->rank; i++) {
        if (v->dims[i] == 1) continue;
        if (n > 0 && v->strides[n - 1] == v->strides[i] * v->dims[i]) {
            v->dims[n - 1] *= v->dims[i];
            v->strides[n - 1] = v->strides[i];
            continue;
        }
        v->dims[n] = v->dims[i];
        v->strides[n] = v->strides[i];
        n++;
    }
    v->rank = n;
}

/* Copy `n` elements of `es` bytes to contiguous `d` from `s`, `sstride`
 * elements apart. Fixed-size memcpy compiles to plain loads and stores. */
static void copy_run(char *d, const char *s, int64_t n, int64_t sstride, int64_t es)
{
    if (sstride == 1) {
        memcpy(d, s, (size_t)(n * es));
        return;
    }
    int64_t step = sstride * es;
    switch (es) {
    case 1:
        for (int64_t i = 0; i < n; i++, d += 1, s += step) *d = *s;
        break;
    case 4:
        for (int64_t i = 0; i < n; i++, d += 4, s += step) memcpy(d, s, 4);
        break;
    case 8:
        for (int64_t i = 0; i < n; i++, d += 8, s += step) memcpy(d, s, 8);
        break;
    default:
        for (int64_t i = 0; i < n; i++, d += es, s += step) memcpy(d, s, (size_t)es);
        break;
    }
}

/* dst[i*drow + j] = src[i + j*scol] for i < rows, j < cols, in TILE x TILE
 * blocks so both the reads and the writes of a block stay in cache. */
static void copy_tiled(char *dst, const char *src, int64_t rows, int64_t drow, int64_t cols,
                       int64_t scol, int64_t es)
{
    for (int64_t ib = 0; ib < rows; ib += TILE) {
        int64_t ie = ib + TILE < rows ? ib + TILE : rows;
        for (int64_t jb = 0; jb < cols; jb += TILE) {
            int64_t jn = jb + TILE < cols ? TILE : cols - jb;
            for (int64_t i = ib; i < ie; i++)
                copy_run(dst + (i * drow + jb) * es, src + (i + jb * scol) * es, jn, scol, es);
        }
    }
}

/* Materialise view `v` of `src` (pointing at the view's first element) into
 * contiguous `dst`. */
static void copy_view(char *dst, const char *src, view v, int64_t es)
{
    for (int i = 0; i < v.rank; i++)
        if (v.dims[i] == 0) return;
    coalesce(&v);
    if (v.rank == 0) {
        memcpy(dst, src, (size_t)es);
        return;
    }
    int inner = v.rank - 1, tile = -1;
    if (v.strides[inner] != 1 && v.dims[inner] >= TILE_MIN)
        for (int i = 0; i < inner; i++)
            if (v.strides[i] == 1 && v.dims[i] >= TILE_MIN) tile = i;
    int64_t dstride[XF_MAX_DIMS];
    int64_t acc = 1;
    for (int i = v.rank - 1; i >= 0; i--) {
        dstride[i] = acc;
        acc *= v.dims[i];
    }
    int outer[XF_MAX_DIMS], n_outer = 0;
    int64_t count = 1;
    for (int i = 0; i < inner; i++)
        if (i != tile) {
            outer[n_outer++] = i;
            count *= v.dims[i];
        }
    int64_t idx[XF_MAX_DIMS] = {0};
    int64_t so = 0, dof = 0;
    for (int64_t c = 0; c < count; c++) {
        if (tile >= 0)
            copy_tiled(dst + dof * es, src + so * es, v.dims[tile], dstride[tile], v.dims[inner],
                       v.strides[inner], es);
        else
            copy_run(dst + dof * es, src + so * es, v.dims[inner], v.strides[inner], es);
        for (int k = n_outer - 1; k >= 0; k--) {
            int d = outer[k];
            so += v.strides[d];
            dof += dstride[d];
            if (++idx[k] < v.dims[d]) break;
            so -= v.strides[d] * v.dims[d];
            dof -= dstride[d] * v.dims[d];
            idx[k] = 0;
        }
    }
}

/* ---------------------------------------------------------------- transpose */

/* Output dim i takes input dim perm[i] (xf_transpose_perm). */
static xf_status transpose_perm(const xf_params *p, const xf_shape *s, int *perm, xf_error *err)
{
    char si[96];
    if (p->n_axes != 0 && p->n_axes != s->rank)
        return XF_FAIL(err, XF_ERR_SHAPE, "transpose: permutation has %d entries, input %s has rank %d",
                       p->n_axes, xf_shape_str(s, si, sizeof si), s->rank);
    if (xf_transpose_perm(p, s->rank, perm) != 0)
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "transpose: the permutation is invalid for rank %d: it must list each of "
                       "0..%d once (or count from the end)",
                       s->rank, s->rank - 1);
    return XF_OK;
}

XF_DECLARE_INFER(transpose)
{
    (void)n_in;
    (void)n_out;
    const xf_shape *s = &in_sh[0];
    int perm[XF_MAX_DIMS];
    xf_status st = transpose_perm(p, s, perm, err);
    if (st != XF_OK) return st;
    xf_shape o = *s;
    for (int i = 0; i < s->rank; i++) o.dims[i] = s->dims[perm[i]];
    out_dt[0] = in_dt[0];
    out_sh[0] = o;
    return XF_OK;
}

XF_DECLARE_RUN(transpose)
{
    (void)n_in;
    (void)n_out;
    const xf_tensor *x = in[0];
    int perm[XF_MAX_DIMS];
    xf_status st = transpose_perm(p, &x->shape, perm, err);
    if (st != XF_OK) return st;
    int64_t ist[XF_MAX_DIMS];
    xf_shape_strides(&x->shape, ist);
    view v;
    memset(&v, 0, sizeof v);
    v.rank = x->shape.rank;
    for (int i = 0; i < v.rank; i++) {
        v.dims[i] = x->shape.dims[perm[i]];
        v.strides[i] = ist[perm[i]];
    }
    copy_view(out[0].data, x->data, v, (int64_t)xf_dtype_size(x->dtype));
    return XF_OK;
}

/* -------------------------------------------------------------------- slice */

/* Per input dim: first index, step and element count (ONNX Slice rules). */
typedef struct slice_plan {
    int64_t start[XF_MAX_DIMS], step[XF_MAX_DIMS], count[XF_MAX_DIMS];
} slice_plan;

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static xf_status slice_make_plan(const xf_params *p, const xf_shape *s, slice_plan *pl,
                                 xf_error *err)
{
    char si[96];
    if (p->n_axes < 0 || p->n_axes > s->rank)
        return XF_FAIL(err, XF_ERR_SHAPE, "slice: %d axes given for input %s", p->n_axes,
                       xf_shape_str(s, si, sizeof si));
    int seen[XF_MAX_DIMS] = {0};
    for (int i = 0; i < s->rank; i++) {
        pl->start[i] = 0;
        pl->step[i] = 1;
        pl->count[i] = s->dims[i];
    }
    for (int i = 0; i < p->n_axes; i++) {
        int a = xf_norm_axis(p->axes[i], s->rank);
        if (a < 0)
            return XF_FAIL(err, XF_ERR_SHAPE, "slice: axis %lld is out of range for input %s",
                           (long long)p->axes[i], xf_shape_str(s, si, sizeof si));
        if (seen[a])
            return XF_FAIL(err, XF_ERR_SHAPE, "slice: axis %lld is listed twice",
                           (long long)p->axes[i]);
        seen[a] = 1;
        int64_t dim = s->dims[a], step = p->steps[i];
        if (step == 0) return XF_FAIL(err, XF_ERR_SHAPE, "slice: step for axis %d is 0", a);
        int64_t b = p->starts[i], e = p->ends[i];
        if (b < 0) b += dim;
        if (e < 0) e += dim;
        uint64_t ustep, diff = 0;
        if (step > 0) {
            b = clamp64(b, 0, dim);
            e = clamp64(e, 0, dim);
            if (e > b) diff = (uint64_t)(e - b);
            ustep = (uint64_t)step;
        } else {
            b = clamp64(b, -1, dim - 1);
            e = clamp64(e, -1, dim - 1);
            if (b > e) diff = (uint64_t)(b - e);
            ustep = (uint64_t)0 - (uint64_t)step;
        }
        pl->start[a] = b;
        pl->step[a] = step;
        pl->count[a] = diff ? (int64_t)(1 + (diff - 1) / ustep) : 0;
    }
    return XF_OK;
}

XF_DECLARE_INFER(slice)
{
    (void)n_in;
    (void)n_out;
    slice_plan pl;
    xf_status st = slice_make_plan(p, &in_sh[0], &pl, err);
    if (st != XF_OK) return st;
    out_dt[0] = in_dt[0];
    out_sh[0] = xf_shape_make(in_sh[0].rank, pl.count);
    return XF_OK;
}

XF_DECLARE_RUN(slice)
{
    (void)n_in;
    (void)n_out;
    const xf_tensor *x = in[0];
    slice_plan pl;
    xf_status st = slice_make_plan(p, &x->shape, &pl, err);
    if (st != XF_OK) return st;
    int64_t ist[XF_MAX_DIMS];
    xf_shape_strides(&x->shape, ist);
    view v;
    memset(&v, 0, sizeof v);
    v.rank = x->shape.rank;
    int64_t off = 0;
    for (int i = 0; i < v.rank; i++) {
        if (pl.count[i] == 0) return XF_OK; /* empty output */
        v.dims[i] = pl.count[i];
        v.strides[i] = ist[i] * pl.step[i];
        off += ist[i] * pl.start[i];
    }
    int64_t es = (int64_t)xf_dtype_size(x->dtype);
    copy_view(out[0].data, (const char *)x->data + off * es, v, es);
    return XF_OK;
}

/* ------------------------------------------------------------------- expand */

static xf_status expand_shape(const xf_params *p, const xf_shape *s, xf_shape *o, xf_error *err)
{
    if (p->n_shape < 0 || p->n_shape > XF_MAX_DIMS)
        return XF_FAIL(err, XF_ERR_SHAPE, "expand: target rank %d is outside 0..%d", p->n_shape,
                       XF_MAX_DIMS);
    xf_shape t = xf_shape_make(p->n_shape, p->shape);
    xf_status st = xf_shape_broadcast(s, &t, o, err);
    if (st != XF_OK) xf_error_prefix(err, "expand");
    return st;
}

XF_DECLARE_INFER(expand)
{
    (void)n_in;
    (void)n_out;
    xf_status st = expand_shape(p, &in_sh[0], &out_sh[0], err);
    if (st != XF_OK) return st;
    out_dt[0] = in_dt[0];
    return XF_OK;
}

XF_DECLARE_RUN(expand)
{
    (void)n_in;
    (void)n_out;
    const xf_tensor *x = in[0];
    xf_shape o;
    xf_status st = expand_shape(p, &x->shape, &o, err);
    if (st != XF_OK) return st;
    int64_t ist[XF_MAX_DIMS];
    xf_shape_strides(&x->shape, ist);
    view v;
    memset(&v, 0, sizeof v);
    v.rank = o.rank;
    for (int i = 0; i < o.rank; i++) {
        int j = i - (o.rank - x->shape.rank);
        v.dims[i] = o.dims[i];
        v.strides[i] = (j < 0 || x->shape.dims[j] != o.dims[i]) ? 0 : ist[j];
    }
    copy_view(out[0].data, x->data, v, (int64_t)xf_dtype_size(x->dtype));
    return XF_OK;
}
