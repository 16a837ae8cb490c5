/*
 * op_table.c — the one table that defines every operator rlflow knows:
 * its rlflow name, ONNX op_type, arity, whether the rule enumerator may use
 * it, its classes (element-wise, movement, view, ...: XF_OPC_* in ir.h, the
 * one list of them every module asks through xf_op_is), the conv activation
 * it is, and the functions for shape inference and the float32 kernel.
 * Adding an operator means adding one row here and its two functions.
 *
 * Parameter conventions per op (fields of xf_params):
 *  conv: kernel, stride, pads, dilation, group, activation (fused)
 *  maxpool/avgpool: kernel, stride, pads, ceil_mode, count_include_pad (avg)
 *  gemm: alpha, beta, trans_a, trans_b     batchnorm/layernorm: epsilon, axis
 *  concat/split/softmax/gather/flatten: axis   split: n_split, split[]
 *  transpose: axes[] = perm (n_axes)   reduce_mean/squeeze/unsqueeze: axes[]
 *  slice: axes[], starts[], ends[], steps[] (n_axes entries each)
 *  pad: starts[] = begin pads, ends[] = end pads (one per input dim), pad_mode, value
 *  reshape/expand: shape[] (n_shape), fully resolved (no 0 / -1)
 *  cast: to     constant generators: shape[] is the full output shape,
 *  constant_of_shape additionally to (dtype) and value
 *  enlarge: kernel = target kernel size
 *  clip: alpha = min, beta = max     hardsigmoid: alpha, beta   leakyrelu: alpha
 *  reduce_sum/reduce_max: axes[], keepdims (as reduce_mean)
 *  resize: shape[] = output shape; kernel[0] xf_resize_mode, kernel[1]
 *  xf_resize_coord, group xf_resize_round
 *  conv_transpose: kernel, stride, pads, dilation, group; shape[] = output shape
 *  tile: shape[] = repeats per input dim
 * Any other field is zeroed when a node is added (params_canon.c keeps the
 * same list as code).
 */
#include "op_internal.h"

#include <string.h>

#define ROW(op, nm, onnx, mi, ma, mo, xo, en, cls, act, inf, run) \
    [op] = {{nm, onnx, mi, ma, mo, xo, en, cls, act}, inf, run}

/* Operator classes (ir.h, XF_OPC_*), short for the rows. */
#define EW XF_OPC_ELEMENTWISE
#define ARITH XF_OPC_ARITHMETIC
#define CONTRACT XF_OPC_CONTRACTION
#define NORM XF_OPC_NORMALIZATION
#define REDUCE XF_OPC_REDUCTION
#define MOVE XF_OPC_MOVEMENT
#define VIEW XF_OPC_VIEW
#define SHAPE XF_OPC_SHAPE
#define GEN XF_OPC_GENERATOR
#define IMPORTED XF_OPC_IMPORTED
#define COMM XF_OPC_COMMUTATIVE

static const xf_op_def table[XF_OP_COUNT] = {
    ROW(XF_OP_OPAQUE, "opaque", NULL, 0, 1 << 20, 0, 1 << 20, 0, 0, XF_ACT_NONE, NULL, NULL),
    ROW(XF_OP_RELU, "relu", "Relu", 1, 1, 1, 1, 1, EW, XF_ACT_RELU, ir_infer_unary, ir_run_relu),
    ROW(XF_OP_SIGMOID, "sigmoid", "Sigmoid", 1, 1, 1, 1, 1, EW, XF_ACT_SIGMOID, ir_infer_unary,
        ir_run_sigmoid),
    ROW(XF_OP_TANH, "tanh", "Tanh", 1, 1, 1, 1, 1, EW, XF_ACT_TANH, ir_infer_unary, ir_run_tanh),
    ROW(XF_OP_ERF, "erf", "Erf", 1, 1, 1, 1, 0, EW, XF_ACT_NONE, ir_infer_unary, ir_run_erf),
    ROW(XF_OP_GELU, "gelu", NULL, 1, 1, 1, 1, 1, EW, XF_ACT_NONE, ir_infer_unary, ir_run_gelu),
    ROW(XF_OP_SQRT, "sqrt", "Sqrt", 1, 1, 1, 1, 0, EW, XF_ACT_NONE, ir_infer_unary, ir_run_sqrt),
    ROW(XF_OP_EXP, "exp", "Exp", 1, 1, 1, 1, 0, EW, XF_ACT_NONE, ir_infer_unary, ir_run_exp),
    ROW(XF_OP_LOG, "log", "Log", 1, 1, 1, 1, 0, EW, XF_ACT_NONE, ir_infer_unary, ir_run_log),
    ROW(XF_OP_NEG, "neg", "Neg", 1, 1, 1, 1, 0, EW, XF_ACT_NONE, ir_infer_unary, ir_run_neg),
    ROW(XF_OP_ABS, "abs", "Abs", 1, 1, 1, 1, 0, EW, XF_ACT_NONE, ir_infer_unary, ir_run_abs),
    ROW(XF_OP_RECIPROCAL, "reciprocal", "Reciprocal", 1, 1, 1, 1, 0, EW, XF_ACT_NONE,
        ir_infer_unary, ir_run_reciprocal),
    ROW(XF_OP_IDENTITY, "identity", "Identity", 1, 1, 1, 1, 0, EW | VIEW, XF_ACT_NONE,
        ir_infer_identity, ir_run_identity),
    ROW(XF_OP_DROPOUT, "dropout", "Dropout", 1, 3, 1, 2, 0, EW | VIEW, XF_ACT_NONE,
        ir_infer_dropout, ir_run_dropout),
    ROW(XF_OP_CAST, "cast", "Cast", 1, 1, 1, 1, 0, EW, XF_ACT_NONE, ir_infer_cast, ir_run_cast),
    ROW(XF_OP_ADD, "ewadd", "Add", 2, 2, 1, 1, 1, EW | ARITH | COMM, XF_ACT_NONE, ir_infer_arith,
        ir_run_add),
    ROW(XF_OP_SUB, "ewsub", "Sub", 2, 2, 1, 1, 0, EW | ARITH, XF_ACT_NONE, ir_infer_arith,
        ir_run_sub),
    ROW(XF_OP_MUL, "ewmul", "Mul", 2, 2, 1, 1, 1, EW | ARITH | COMM, XF_ACT_NONE, ir_infer_arith,
        ir_run_mul),
    ROW(XF_OP_DIV, "ewdiv", "Div", 2, 2, 1, 1, 0, EW | ARITH, XF_ACT_NONE, ir_infer_arith,
        ir_run_div),
    ROW(XF_OP_POW, "pow", "Pow", 2, 2, 1, 1, 0, EW, XF_ACT_NONE, ir_infer_pow, ir_run_pow),
    ROW(XF_OP_EQUAL, "equal", "Equal", 2, 2, 1, 1, 0, EW, XF_ACT_NONE, ir_infer_equal,
        ir_run_equal),
    ROW(XF_OP_WHERE, "where", "Where", 3, 3, 1, 1, 0, EW, XF_ACT_NONE, ir_infer_where,
        ir_run_where),
    ROW(XF_OP_SCALAR_MUL, "scalar_mul", NULL, 2, 2, 1, 1, 1, EW, XF_ACT_NONE, ir_infer_scalar_mul,
        ir_run_scalar_mul),
    ROW(XF_OP_MATMUL, "matmul", "MatMul", 2, 2, 1, 1, 1, CONTRACT, XF_ACT_NONE, ir_infer_matmul,
        ir_run_matmul),
    ROW(XF_OP_GEMM, "gemm", "Gemm", 2, 3, 1, 1, 0, CONTRACT, XF_ACT_NONE, ir_infer_gemm,
        ir_run_gemm),
    ROW(XF_OP_CONV, "conv2d", "Conv", 2, 3, 1, 1, 1, CONTRACT, XF_ACT_NONE, ir_infer_conv,
        ir_run_conv),
    ROW(XF_OP_BATCHNORM, "batchnorm", "BatchNormalization", 5, 5, 1, 1, 1, NORM, XF_ACT_NONE,
        ir_infer_batchnorm, ir_run_batchnorm),
    ROW(XF_OP_LAYERNORM, "layernorm", "LayerNormalization", 2, 3, 1, 1, 1, NORM, XF_ACT_NONE,
        ir_infer_layernorm, ir_run_layernorm),
    ROW(XF_OP_MAXPOOL, "maxpool", "MaxPool", 1, 1, 1, 1, 1, REDUCE, XF_ACT_NONE, ir_infer_maxpool,
        ir_run_maxpool),
    ROW(XF_OP_AVGPOOL, "avgpool", "AveragePool", 1, 1, 1, 1, 1, REDUCE, XF_ACT_NONE,
        ir_infer_avgpool, ir_run_avgpool),
    ROW(XF_OP_GLOBAL_AVGPOOL, "global_avgpool", "GlobalAveragePool", 1, 1, 1, 1, 0, REDUCE,
        XF_ACT_NONE, ir_infer_global_avgpool, ir_run_global_avgpool),
    ROW(XF_OP_REDUCE_MEAN, "reduce_mean", "ReduceMean", 1, 1, 1, 1, 1, REDUCE, XF_ACT_NONE,
        ir_infer_reduce_mean, ir_run_reduce_mean),
    ROW(XF_OP_SOFTMAX, "softmax", "Softmax", 1, 1, 1, 1, 1, NORM, XF_ACT_NONE, ir_infer_softmax,
        ir_run_softmax),
    ROW(XF_OP_CONCAT, "concat", "Concat", 1, 1 << 20, 1, 1, 1, MOVE, XF_ACT_NONE, ir_infer_concat,
        ir_run_concat),
    ROW(XF_OP_SPLIT, "split", "Split", 1, 1, 1, -1, 1, MOVE, XF_ACT_NONE, ir_infer_split,
        ir_run_split),
    ROW(XF_OP_TRANSPOSE, "transpose", "Transpose", 1, 1, 1, 1, 1, MOVE, XF_ACT_NONE,
        ir_infer_transpose, ir_run_transpose),
    ROW(XF_OP_RESHAPE, "reshape", "Reshape", 1, 1, 1, 1, 1, MOVE | VIEW, XF_ACT_NONE,
        ir_infer_reshape, ir_run_reshape),
    ROW(XF_OP_FLATTEN, "flatten", "Flatten", 1, 1, 1, 1, 0, MOVE | VIEW, XF_ACT_NONE,
        ir_infer_flatten, ir_run_flatten),
    ROW(XF_OP_SQUEEZE, "squeeze", "Squeeze", 1, 1, 1, 1, 0, MOVE | VIEW, XF_ACT_NONE,
        ir_infer_squeeze, ir_run_squeeze),
    ROW(XF_OP_UNSQUEEZE, "unsqueeze", "Unsqueeze", 1, 1, 1, 1, 0, MOVE | VIEW, XF_ACT_NONE,
        ir_infer_unsqueeze, ir_run_unsqueeze),
    ROW(XF_OP_SLICE, "slice", "Slice", 1, 1, 1, 1, 0, MOVE, XF_ACT_NONE, ir_infer_slice,
        ir_run_slice),
    ROW(XF_OP_GATHER, "gather", "Gather", 2, 2, 1, 1, 0, MOVE, XF_ACT_NONE, ir_infer_gather,
        ir_run_gather),
    ROW(XF_OP_PAD, "pad", "Pad", 1, 1, 1, 1, 0, MOVE, XF_ACT_NONE, ir_infer_pad, ir_run_pad),
    ROW(XF_OP_EXPAND, "expand", "Expand", 1, 1, 1, 1, 0, MOVE, XF_ACT_NONE, ir_infer_expand,
        ir_run_expand),
    ROW(XF_OP_ENLARGE, "enlarge", NULL, 1, 1, 1, 1, 1, MOVE, XF_ACT_NONE, ir_infer_enlarge,
        ir_run_enlarge),
    ROW(XF_OP_SHAPE, "shape", "Shape", 1, 1, 1, 1, 0, SHAPE, XF_ACT_NONE, ir_infer_shape,
        ir_run_shape),
    ROW(XF_OP_CONSTANT_OF_SHAPE, "constant_of_shape", "ConstantOfShape", 0, 0, 1, 1, 0, GEN,
        XF_ACT_NONE, ir_infer_constant_of_shape, ir_run_constant_of_shape),
    ROW(XF_OP_CONST_IDENTITY_CONV, "const_iconv", NULL, 0, 0, 1, 1, 1, GEN, XF_ACT_NONE,
        ir_infer_const_identity_conv, ir_run_const_identity_conv),
    ROW(XF_OP_CONST_IDENTITY_MATRIX, "const_imatrix", NULL, 0, 0, 1, 1, 1, GEN, XF_ACT_NONE,
        ir_infer_const_identity_matrix, ir_run_const_identity_matrix),
    ROW(XF_OP_CONST_ONES, "const_ones", NULL, 0, 0, 1, 1, 1, GEN, XF_ACT_NONE, ir_infer_const_ones,
        ir_run_const_ones),
    ROW(XF_OP_CONST_POOL, "const_pool", NULL, 0, 0, 1, 1, 1, GEN, XF_ACT_NONE, ir_infer_const_pool,
        ir_run_const_pool),
    ROW(XF_OP_CLIP, "clip", "Clip", 1, 1, 1, 1, 0, EW | IMPORTED, XF_ACT_NONE, ir_infer_unary,
        ir_run_clip),
    ROW(XF_OP_HARDSIGMOID, "hardsigmoid", "HardSigmoid", 1, 1, 1, 1, 0, EW | IMPORTED, XF_ACT_NONE,
        ir_infer_unary, ir_run_hardsigmoid),
    ROW(XF_OP_HARDSWISH, "hardswish", "HardSwish", 1, 1, 1, 1, 0, EW | IMPORTED, XF_ACT_NONE,
        ir_infer_unary, ir_run_hardswish),
    ROW(XF_OP_LEAKYRELU, "leakyrelu", "LeakyRelu", 1, 1, 1, 1, 0, EW | IMPORTED, XF_ACT_NONE,
        ir_infer_unary, ir_run_leakyrelu),
    ROW(XF_OP_PRELU, "prelu", "PRelu", 2, 2, 1, 1, 0, EW | IMPORTED, XF_ACT_NONE, ir_infer_prelu,
        ir_run_prelu),
    ROW(XF_OP_MIN, "ewmin", "Min", 2, 2, 1, 1, 0, EW | IMPORTED | COMM, XF_ACT_NONE, ir_infer_arith,
        ir_run_min),
    ROW(XF_OP_MAX, "ewmax", "Max", 2, 2, 1, 1, 0, EW | IMPORTED | COMM, XF_ACT_NONE, ir_infer_arith,
        ir_run_max),
    ROW(XF_OP_REDUCE_SUM, "reduce_sum", "ReduceSum", 1, 1, 1, 1, 0, REDUCE | IMPORTED, XF_ACT_NONE,
        ir_infer_reduce_mean, ir_run_reduce_sum),
    ROW(XF_OP_REDUCE_MAX, "reduce_max", "ReduceMax", 1, 1, 1, 1, 0, REDUCE | IMPORTED, XF_ACT_NONE,
        ir_infer_reduce_mean, ir_run_reduce_max),
    ROW(XF_OP_RESIZE, "resize", "Resize", 1, 1, 1, 1, 0, MOVE | IMPORTED, XF_ACT_NONE,
        ir_infer_resize, ir_run_resize),
    ROW(XF_OP_CONV_TRANSPOSE, "conv_transpose", "ConvTranspose", 2, 3, 1, 1, 0,
        CONTRACT | IMPORTED, XF_ACT_NONE, ir_infer_conv_transpose, ir_run_conv_transpose),
    ROW(XF_OP_SIZE, "size", "Size", 1, 1, 1, 1, 0, SHAPE | IMPORTED, XF_ACT_NONE, ir_infer_size,
        ir_run_size),
    ROW(XF_OP_NOT, "not", "Not", 1, 1, 1, 1, 0, EW | IMPORTED, XF_ACT_NONE, ir_infer_not,
        ir_run_not),
    ROW(XF_OP_TILE, "tile", "Tile", 1, 1, 1, 1, 0, MOVE | IMPORTED, XF_ACT_NONE, ir_infer_tile,
        ir_run_tile),
};

const xf_op_def *ir_op_def_get(xf_op op)
{
    if ((int)op < 0 || op >= XF_OP_COUNT) return NULL;
    return &table[op];
}

const xf_op_info *xf_op_get(xf_op op)
{
    const xf_op_def *d = ir_op_def_get(op);
    return d ? &d->info : NULL;
}

int xf_op_is(xf_op op, unsigned classes)
{
    const xf_op_def *d = ir_op_def_get(op);
    return d && (d->info.classes & classes) == classes;
}

int xf_op_reshapes(xf_op op)
{
    return op == XF_OP_RESHAPE || op == XF_OP_FLATTEN || op == XF_OP_SQUEEZE ||
           op == XF_OP_UNSQUEEZE;
}

int ir_op_keeps_shape(xf_op op)
{
    return (xf_op_is(op, XF_OPC_ELEMENTWISE) && table[op].info.min_inputs == 1 &&
            op != XF_OP_NOT) ||
           op == XF_OP_SOFTMAX;
}

xf_activation xf_op_activation(xf_op op)
{
    const xf_op_def *d = ir_op_def_get(op);
    return d ? d->info.activation : XF_ACT_NONE;
}

xf_op xf_activation_op(xf_activation act)
{
    for (int i = 0; act != XF_ACT_NONE && i < XF_OP_COUNT; i++)
        if (table[i].info.activation == act) return (xf_op)i;
    return XF_OP_COUNT;
}

xf_op xf_op_from_name(const char *name)
{
    for (int i = 0; i < XF_OP_COUNT; i++)
        if (table[i].info.name && strcmp(table[i].info.name, name) == 0) return (xf_op)i;
    return XF_OP_COUNT;
}

int xf_norm_axis(int64_t axis, int rank)
{
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return -1;
    return (int)axis;
}

int xf_split_equal_parts(const xf_params *p, int64_t d)
{
    int k = p->n_split;
    if (k < 2 || d < k || d % k) return 0;
    for (int i = 0; i < k; i++)
        if (p->split[i] != d / k) return 0;
    return k;
}

int xf_reduce_axes(const xf_params *p, int rank, int *red)
{
    for (int i = 0; i < XF_MAX_DIMS; i++) red[i] = p->n_axes == 0 && i < rank;
    if (p->n_axes < 0 || p->n_axes > XF_MAX_DIMS) return -1;
    if (p->n_axes == 0) return rank;
    for (int i = 0; i < p->n_axes; i++) {
        int a = xf_norm_axis(p->axes[i], rank);
        if (a < 0 || red[a]) return -1 - i;
        red[a] = 1;
    }
    return p->n_axes;
}

int xf_transpose_perm(const xf_params *p, int rank, int *perm)
{
    int seen[XF_MAX_DIMS] = {0};
    if (rank < 0 || rank > XF_MAX_DIMS || (p->n_axes != 0 && p->n_axes != rank)) return -1;
    for (int i = 0; i < rank; i++) {
        int a = p->n_axes ? xf_norm_axis(p->axes[i], rank) : rank - 1 - i;
        if (a < 0 || seen[a]++) return -1;
        perm[i] = a;
    }
    return 0;
}

int xf_op_default_outputs(xf_op op, const xf_params *p)
{
    if (op == XF_OP_SPLIT) return p->n_split > 0 ? p->n_split : 1;
    const xf_op_def *d = ir_op_def_get(op);
    return d ? d->info.min_outputs : 0;
}
