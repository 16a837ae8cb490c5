/*
 * fpeval.c — operator semantics in Z_p, part 1: dispatch, keys and input
 * data, tensor hashing, element-wise operators (with numpy broadcasting),
 * matmul and the normalisations (softmax, layernorm, reduce_mean).
 *
 * Linear and polynomial operators are computed exactly; a division by a
 * constant (a mean, 1/n) multiplies by the modular inverse; non-linear
 * element-wise operators are keyed pseudo-random functions of the element
 * (relu(x) = PRF_relu(x)), which keeps every identity that holds for any
 * element-wise function (commuting with transpose, concat, split) and almost
 * never creates a false one. Softmax is exp-PRF then an exact normalisation;
 * layernorm is exact centring times an rsqrt-PRF of the exact variance.
 * Spatial operators and data movement are in fpeval_spatial.c.
 */
#include "fpeval_shared_internal.h"

#include <string.h>

uint64_t en_fp_tensor_hash(const fp_tensor *t)
{
    uint64_t h = en_fp_mix(0x7E750Bull, (uint64_t)t->shape.rank);
    for (int i = 0; i < t->shape.rank; i++) h = en_fp_mix(h, (uint64_t)t->shape.dims[i]);
    int64_t n = xf_shape_numel(&t->shape);
    for (int64_t i = 0; i < n; i++) h = en_fp_mix(h, t->d[i]);
    return h;
}

void en_fp_keys_make(fp_keys *k, uint64_t seed, int which)
{
    for (int i = 0; i < FPK_COUNT; i++)
        k->k[i] = en_fp_mix(en_fp_mix(en_fp_mix(0x6B3Eull, seed), (uint64_t)which), (uint64_t)i);
}

void en_fp_input_fill(uint64_t seed, int which, int input, uint64_t *d, int64_t n)
{
    xf_rng r;
    xf_rng_seed(&r, en_fp_mix(en_fp_mix(en_fp_mix(0x1D9u, seed), (uint64_t)which), (uint64_t)input));
    for (int64_t i = 0; i < n; i++) d[i] = en_fp_reduce(xf_rng_next(&r));
}

int en_fp_op_supported(xf_op op)
{
    /* element-wise (ir's operator classes): all of the rule language but
     * dropout and cast (no rule has them) and the comparison and select,
     * which have no model in Z_p */
    if (xf_op_is(op, XF_OPC_ELEMENTWISE))
        return !xf_op_is(op, XF_OPC_IMPORTED) && op != XF_OP_DROPOUT && op != XF_OP_CAST &&
               op != XF_OP_EQUAL && op != XF_OP_WHERE;
    switch (op) {
    case XF_OP_MATMUL: case XF_OP_CONV: case XF_OP_LAYERNORM:
    case XF_OP_MAXPOOL: case XF_OP_AVGPOOL: case XF_OP_GLOBAL_AVGPOOL: case XF_OP_REDUCE_MEAN:
    case XF_OP_SOFTMAX: case XF_OP_CONCAT: case XF_OP_SPLIT: case XF_OP_TRANSPOSE:
    case XF_OP_SLICE: case XF_OP_RESHAPE: case XF_OP_FLATTEN: case XF_OP_SQUEEZE: case XF_OP_UNSQUEEZE:
    case XF_OP_ENLARGE: case XF_OP_CONST_IDENTITY_CONV: case XF_OP_CONST_IDENTITY_MATRIX:
    case XF_OP_CONST_ONES: case XF_OP_CONST_POOL:
        return 1;
    default:
        return 0;
    }
}

/* ------------------------------------------------------------ element-wise */

static void unary_prf(uint64_t key, const fp_tensor *x, fp_tensor *y)
{
    int64_t n = xf_shape_numel(&x->shape);
    for (int64_t i = 0; i < n; i++) y->d[i] = en_fp_prf(key, x->d[i]);
}

void en_fp_activation(const fp_keys *k, int act, uint64_t *d, int64_t n)
{
    fp_key_kind kind = act == XF_ACT_RELU ? FPK_RELU : act == XF_ACT_SIGMOID ? FPK_SIGMOID : FPK_TANH;
    if (act == XF_ACT_NONE) return;
    for (int64_t i = 0; i < n; i++) d[i] = en_fp_prf(k->k[kind], d[i]);
}

/* Strides of `in` viewed as broadcast to rank-`rank` shape (0 on broadcast dims). */
void en_fp_bcast_strides(const xf_shape *in, const xf_shape *out, int64_t *st)
{
    int64_t s[XF_MAX_DIMS];
    xf_shape_strides(in, s);
    int off = out->rank - in->rank;
    for (int i = 0; i < out->rank; i++) {
        int j = i - off;
        st[i] = j < 0 || in->dims[j] == 1 ? 0 : s[j];
    }
}

/* Advances a multi-index over `s`; the offsets of each operand follow. */
static void next_index(const xf_shape *s, int64_t *idx, int n_ops, int64_t st[][XF_MAX_DIMS],
                       int64_t *off)
{
    for (int d = s->rank - 1; d >= 0; d--) {
        idx[d]++;
        for (int o = 0; o < n_ops; o++) off[o] += st[o][d];
        if (idx[d] < s->dims[d]) return;
        for (int o = 0; o < n_ops; o++) off[o] -= st[o][d] * s->dims[d];
        idx[d] = 0;
    }
}

void en_fp_broadcast_copy(const fp_tensor *x, fp_tensor *y)
{
    int64_t st[1][XF_MAX_DIMS], idx[XF_MAX_DIMS] = {0}, off[1] = {0};
    en_fp_bcast_strides(&x->shape, &y->shape, st[0]);
    int64_t n = xf_shape_numel(&y->shape);
    for (int64_t i = 0; i < n; i++) {
        y->d[i] = x->d[off[0]];
        next_index(&y->shape, idx, 1, st, off);
    }
}

static inline uint64_t binary_elem(xf_op op, uint64_t pow_key, uint64_t u, uint64_t v)
{
    switch (op) {
    case XF_OP_ADD: return en_fp_add(u, v);
    case XF_OP_SUB: return en_fp_sub(u, v);
    case XF_OP_DIV: return en_fp_mul(u, xf_enum_fp_inv(v));
    case XF_OP_POW: return en_fp_prf(pow_key ^ en_fp_prf(pow_key, v), u);
    default: return en_fp_mul(u, v);
    }
}

/* Element-wise a op b with broadcasting; pow is a pseudo-random function
 * of the base keyed by `pow_key` and the exponent (every identity that
 * holds for any element-wise function of the two is kept). Operands of the
 * output's size, and a single element, are read directly: stepping a
 * multi-index per element cost more than the arithmetic. */
static void binary(xf_op op, uint64_t pow_key, const fp_tensor *a, const fp_tensor *b, fp_tensor *y)
{
    int64_t n = xf_shape_numel(&y->shape);
    int64_t na = xf_shape_numel(&a->shape), nb = xf_shape_numel(&b->shape);
    if (na == n && (nb == n || nb == 1)) { /* no axis broadcast but b's, if b is one element */
        for (int64_t i = 0; i < n; i++)
            y->d[i] = binary_elem(op, pow_key, a->d[i], b->d[nb == 1 ? 0 : i]);
        return;
    }
    int64_t st[2][XF_MAX_DIMS], idx[XF_MAX_DIMS] = {0}, off[2] = {0, 0};
    en_fp_bcast_strides(&a->shape, &y->shape, st[0]);
    en_fp_bcast_strides(&b->shape, &y->shape, st[1]);
    for (int64_t i = 0; i < n; i++) {
        y->d[i] = binary_elem(op, pow_key, a->d[off[0]], b->d[off[1]]);
        next_index(&y->shape, idx, 2, st, off);
    }
}

/* ------------------------------------------------------------------ matmul */

static void matmul(const fp_tensor *a, const fp_tensor *b, fp_tensor *y)
{
    xf_shape sa = a->shape, sb = b->shape;
    if (sa.rank == 1) sa = xf_shape_make(2, (int64_t[]){1, sa.dims[0]});
    if (sb.rank == 1) sb = xf_shape_make(2, (int64_t[]){sb.dims[0], 1});
    int64_t m = sa.dims[sa.rank - 2], kk = sa.dims[sa.rank - 1], nn = sb.dims[sb.rank - 1];
    xf_shape ba = xf_shape_make(sa.rank - 2, sa.dims), bb = xf_shape_make(sb.rank - 2, sb.dims);
    xf_shape bo = xf_shape_make(0, NULL);
    int r = ba.rank > bb.rank ? ba.rank : bb.rank;
    bo.rank = r;
    for (int i = 0; i < r; i++) {
        int ia = i - (r - ba.rank), ib = i - (r - bb.rank);
        int64_t da = ia < 0 ? 1 : ba.dims[ia], db = ib < 0 ? 1 : bb.dims[ib];
        bo.dims[i] = da > db ? da : db;
    }
    int64_t st[2][XF_MAX_DIMS], idx[XF_MAX_DIMS] = {0}, off[2] = {0, 0};
    en_fp_bcast_strides(&ba, &bo, st[0]);
    en_fp_bcast_strides(&bb, &bo, st[1]);
    int64_t batches = xf_shape_numel(&bo);
    for (int64_t bi = 0; bi < batches; bi++) {
        const uint64_t *pa = a->d + off[0] * m * kk, *pb = b->d + off[1] * kk * nn;
        uint64_t *py = y->d + bi * m * nn;
        for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < nn; j++) {
                unsigned __int128 acc = 0;
                for (int64_t t = 0; t < kk; t++) {
                    acc += (unsigned __int128)pa[i * kk + t] * pb[t * nn + j];
                    if ((t & 31) == 31) acc = en_fp_reduce128(acc);
                }
                py[i * nn + j] = en_fp_reduce128(acc);
            }
        next_index(&bo, idx, 2, st, off);
    }
}

/* --------------------------------------------------------- normalisations */

/* Layout of `s` around `axis`: outer x s.dims[axis] x inner. */
static void around(const xf_shape *s, int axis, int64_t *outer, int64_t *inner)
{
    *outer = 1, *inner = 1;
    for (int i = 0; i < axis; i++) *outer *= s->dims[i];
    for (int i = axis + 1; i < s->rank; i++) *inner *= s->dims[i];
}

static int norm_axis(int64_t axis, int rank)
{
    return (int)(axis < 0 ? axis + rank : axis);
}

/* Softmax divides every row by its sum: the rows' inverses are taken
 * together (Montgomery's trick: one inversion of the product of the sums,
 * then three multiplications a row), an inversion costing some 90
 * multiplications. A zero sum keeps the inverse 0, as alone. */
static void softmax(const fp_keys *k, const xf_params *p, const fp_tensor *x, fp_tensor *y)
{
    int axis = norm_axis(p->axis, x->shape.rank);
    int64_t outer, inner, n = x->shape.dims[axis];
    around(&x->shape, axis, &outer, &inner);
    int64_t rows = outer * inner;
    uint64_t inv[FP_MAX_NUMEL], prefix[FP_MAX_NUMEL], all = 1;
    for (int64_t r = 0; r < rows; r++) {
        int64_t o = r / inner, i = r % inner;
        uint64_t sum = 0;
        for (int64_t j = 0; j < n; j++) {
            int64_t at = (o * n + j) * inner + i;
            y->d[at] = en_fp_prf(k->k[FPK_EXP], x->d[at]);
            sum = en_fp_add(sum, y->d[at]);
        }
        inv[r] = sum;
        prefix[r] = all; /* the product of the nonzero sums before row r */
        if (sum) all = en_fp_mul(all, sum);
    }
    all = xf_enum_fp_inv(all); /* 1 / (product of every nonzero sum) */
    for (int64_t r = rows - 1; r >= 0; r--) {
        if (!inv[r]) continue;
        uint64_t sum = inv[r];
        inv[r] = en_fp_mul(all, prefix[r]);
        all = en_fp_mul(all, sum);
    }
    for (int64_t r = 0; r < rows; r++) {
        int64_t o = r / inner, i = r % inner;
        for (int64_t j = 0; j < n; j++) {
            int64_t at = (o * n + j) * inner + i;
            y->d[at] = en_fp_mul(y->d[at], inv[r]);
        }
    }
}

static void layernorm(const fp_keys *k, const xf_params *p, int n_in, const fp_tensor *const *in,
                      fp_tensor *y)
{
    const fp_tensor *x = in[0];
    int axis = norm_axis(p->axis, x->shape.rank);
    xf_shape tail = xf_shape_make(x->shape.rank - axis, x->shape.dims + axis);
    int64_t inner = xf_shape_numel(&tail), outer = xf_shape_numel(&x->shape) / inner;
    uint64_t scale[FP_MAX_NUMEL], bias[FP_MAX_NUMEL];
    fp_tensor ts = {tail, scale}, tb = {tail, bias};
    en_fp_broadcast_copy(in[1], &ts);
    if (n_in > 2 && in[2]) en_fp_broadcast_copy(in[2], &tb);
    else memset(bias, 0, sizeof(uint64_t) * (size_t)inner);
    uint64_t inv_n = xf_enum_fp_inv((uint64_t)inner);
    uint64_t eps_key;
    memcpy(&eps_key, &(double){(double)p->epsilon}, sizeof eps_key);
    eps_key = en_fp_mix(k->k[FPK_RSQRT], eps_key);
    for (int64_t o = 0; o < outer; o++) {
        const uint64_t *xr = x->d + o * inner;
        uint64_t *yr = y->d + o * inner, sum = 0, ss = 0;
        for (int64_t j = 0; j < inner; j++) sum = en_fp_add(sum, xr[j]);
        uint64_t mean = en_fp_mul(sum, inv_n);
        for (int64_t j = 0; j < inner; j++) {
            uint64_t c = en_fp_sub(xr[j], mean);
            yr[j] = c;
            ss = en_fp_add(ss, en_fp_mul(c, c));
        }
        uint64_t r = en_fp_prf(eps_key, en_fp_mul(ss, inv_n));
        for (int64_t j = 0; j < inner; j++)
            yr[j] = en_fp_add(en_fp_mul(en_fp_mul(yr[j], r), scale[j]), bias[j]);
    }
}

/* Mean over the marked axes of x (red[d] set), into y laid out with those
 * axes removed or kept as 1 (the layout is the same either way). */
static void mean_axes(const int *red, const fp_tensor *x, fp_tensor *y)
{
    const xf_shape *s = &x->shape;
    xf_shape kept = *s;
    int64_t count = 1;
    for (int d = 0; d < s->rank; d++)
        if (red[d]) count *= s->dims[d], kept.dims[d] = 1;
    int64_t ny = xf_shape_numel(&kept), nx = xf_shape_numel(s);
    memset(y->d, 0, sizeof(uint64_t) * (size_t)ny);
    int64_t st[1][XF_MAX_DIMS], idx[XF_MAX_DIMS] = {0}, off[1] = {0};
    int64_t ks[XF_MAX_DIMS];
    xf_shape_strides(&kept, ks);
    for (int d = 0; d < s->rank; d++) st[0][d] = red[d] ? 0 : ks[d];
    for (int64_t i = 0; i < nx; i++) {
        y->d[off[0]] = en_fp_add(y->d[off[0]], x->d[i]);
        next_index(s, idx, 1, st, off);
    }
    uint64_t inv = xf_enum_fp_inv((uint64_t)count);
    for (int64_t i = 0; i < ny; i++) y->d[i] = en_fp_mul(y->d[i], inv);
}

static void reduce_mean(const xf_params *p, const fp_tensor *x, fp_tensor *y)
{
    int red[XF_MAX_DIMS];
    xf_reduce_axes(p, x->shape.rank, red);
    mean_axes(red, x, y);
}

static void global_avgpool(const fp_tensor *x, fp_tensor *y)
{
    int red[XF_MAX_DIMS] = {0};
    for (int d = 2; d < x->shape.rank; d++) red[d] = 1;
    mean_axes(red, x, y);
}

/* ---------------------------------------------------------------- dispatch */

void en_fp_op_run(const fp_keys *k, xf_op op, const xf_params *p, int n_in, const fp_tensor *const *in,
               int n_out, fp_tensor *out)
{
    int64_t n = n_out > 0 ? xf_shape_numel(&out[0].shape) : 0;
    switch (op) {
    case XF_OP_RELU: unary_prf(k->k[FPK_RELU], in[0], out); break;
    case XF_OP_SIGMOID: unary_prf(k->k[FPK_SIGMOID], in[0], out); break;
    case XF_OP_TANH: unary_prf(k->k[FPK_TANH], in[0], out); break;
    case XF_OP_ERF: unary_prf(k->k[FPK_ERF], in[0], out); break;
    case XF_OP_GELU: unary_prf(k->k[FPK_GELU], in[0], out); break;
    case XF_OP_SQRT: unary_prf(k->k[FPK_SQRT], in[0], out); break;
    case XF_OP_EXP: unary_prf(k->k[FPK_EXP], in[0], out); break;
    case XF_OP_LOG: unary_prf(k->k[FPK_LOG], in[0], out); break;
    case XF_OP_ABS: unary_prf(k->k[FPK_ABS], in[0], out); break;
    case XF_OP_NEG:
        for (int64_t i = 0; i < n; i++) out->d[i] = en_fp_sub(0, in[0]->d[i]);
        break;
    case XF_OP_RECIPROCAL:
        for (int64_t i = 0; i < n; i++) out->d[i] = xf_enum_fp_inv(in[0]->d[i]);
        break;
    case XF_OP_ADD: case XF_OP_SUB: case XF_OP_MUL: case XF_OP_DIV: case XF_OP_POW:
        binary(op, k->k[FPK_POW], in[0], in[1], out);
        break;
    case XF_OP_SCALAR_MUL:
        for (int64_t i = 0; i < n; i++) out->d[i] = en_fp_mul(in[0]->d[i], in[1]->d[0]);
        break;
    case XF_OP_MATMUL: matmul(in[0], in[1], out); break;
    case XF_OP_SOFTMAX: softmax(k, p, in[0], out); break;
    case XF_OP_LAYERNORM: layernorm(k, p, n_in, in, out); break;
    case XF_OP_REDUCE_MEAN: reduce_mean(p, in[0], out); break;
    case XF_OP_GLOBAL_AVGPOOL: global_avgpool(in[0], out); break;
    default:
        if (xf_op_is(op, XF_OPC_VIEW)) /* the same elements in the same order */
            memcpy(out->d, in[0]->d, sizeof(uint64_t) * (size_t)n);
        else
            en_fp_run_spatial(k, op, p, n_in, in, n_out, out);
        break;
    }
}
