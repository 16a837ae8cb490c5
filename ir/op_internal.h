/*
 * op_internal.h — private contract between the operator table (op_table.c) and
 * the files that implement each operator's shape inference and float32
 * kernel (ops_*.c). Not part of the public API.
 *
 * Conventions for every implementation:
 *  - infer: given params and input dtypes/shapes (dtype XF_DTYPE_INVALID for
 *    an omitted optional input), fill every output dtype/shape or fail with
 *    XF_ERR_SHAPE and a message that says which constraint broke, e.g.
 *    "matmul: inner dimensions differ: [2,3] x [4,5]".
 *  - run: inputs already have the inferred shapes; outputs are allocated by
 *    the caller with the inferred shape and dtype. Omitted optional inputs are
 *    NULL. Kernels never allocate outputs and never print.
 */
#ifndef XF_IR_OP_INTERNAL_H
#define XF_IR_OP_INTERNAL_H

#include "ir.h"

typedef xf_status (*xf_infer_fn)(const xf_params *p, int n_in, const xf_dtype *in_dt,
                                 const xf_shape *in_sh, int n_out, xf_dtype *out_dt,
                                 xf_shape *out_sh, xf_error *err);
typedef xf_status (*xf_kernel_fn)(const xf_params *p, int n_in, const xf_tensor *const *in,
                                  int n_out, xf_tensor *out, xf_error *err);

typedef struct xf_op_def {
    xf_op_info info;
    xf_infer_fn infer;
    xf_kernel_fn run;
} xf_op_def;

const xf_op_def *ir_op_def_get(xf_op op);
/* Whether op's output has its one input's shape: the one-operand
 * element-wise operators (ir.h's classes) but not (bool; no rule has it)
 * and softmax. The symbolic shape rules of rules (rule_dims.c) and of
 * validity domains (domain_infer.c) ask it. */
int ir_op_keeps_shape(xf_op op);

/* Element i of a tensor of any dtype as a double (tensor.c). */
double ir_tensor_elem_f64(const xf_tensor *t, int64_t i);

/* QuantizeLinear and DequantizeLinear (opaque_quant.c), through
 * xf_opaque_calc_infer / xf_opaque_calc_run. */
xf_status ir_quant_infer(const xf_opaque *o, int n_in, const xf_tensor *const *in, xf_dtype *dt,
                         xf_shape *sh, xf_error *err);
xf_status ir_quant_run(const xf_opaque *o, int n_in, const xf_tensor *const *in, xf_tensor *out,
                       xf_error *err);

/* Declares ir_infer_<name> (shape inference) and ir_run_<name> (kernel). */
#define XF_DECLARE_INFER(name)                                                        \
    xf_status ir_infer_##name(const xf_params *p, int n_in, const xf_dtype *in_dt,    \
                              const xf_shape *in_sh, int n_out, xf_dtype *out_dt,     \
                              xf_shape *out_sh, xf_error *err)
#define XF_DECLARE_RUN(name)                                                          \
    xf_status ir_run_##name(const xf_params *p, int n_in, const xf_tensor *const *in, \
                            int n_out, xf_tensor *out, xf_error *err)
#define XF_DECLARE_OP(name) \
    XF_DECLARE_INFER(name); \
    XF_DECLARE_RUN(name)

/* ops_unary.c: one output, same shape; float only unless noted */
XF_DECLARE_INFER(unary); /* infer for relu..reciprocal: F32 in, F32 out */
XF_DECLARE_RUN(relu);
XF_DECLARE_RUN(sigmoid);
XF_DECLARE_RUN(tanh);
XF_DECLARE_RUN(erf);
XF_DECLARE_RUN(gelu);
XF_DECLARE_RUN(sqrt);
XF_DECLARE_RUN(exp);
XF_DECLARE_RUN(log);
XF_DECLARE_RUN(neg);
XF_DECLARE_RUN(abs);
XF_DECLARE_RUN(reciprocal);
XF_DECLARE_OP(identity); /* any dtype; infer and run */
XF_DECLARE_OP(dropout);  /* any dtype; optional 2nd output mask (bool, all true) */
XF_DECLARE_OP(cast);     /* F32/I64/I32/BOOL <-> each other */

/* ops_binary.c: numpy broadcasting */
XF_DECLARE_INFER(arith); /* infer for add/sub/mul/div/pow: same dtype (F32 or I64/I32) */
XF_DECLARE_RUN(add);
XF_DECLARE_RUN(sub);
XF_DECLARE_RUN(mul);
XF_DECLARE_RUN(div);
XF_DECLARE_OP(pow);         /* F32 base; exponent F32 (or I64/I32) */
XF_DECLARE_OP(equal);      /* -> BOOL */
XF_DECLARE_OP(where);      /* cond BOOL, x, y */
XF_DECLARE_OP(scalar_mul); /* x F32, s rank-0 F32 */

/* ops_linalg.c */
XF_DECLARE_OP(matmul);
XF_DECLARE_OP(gemm);

/* ops_conv.c */
XF_DECLARE_OP(conv);
XF_DECLARE_OP(enlarge);
XF_DECLARE_OP(const_identity_conv);
XF_DECLARE_OP(const_identity_matrix);
XF_DECLARE_OP(const_ones);
XF_DECLARE_OP(const_pool);
XF_DECLARE_OP(constant_of_shape);

/* ops_pool.c */
XF_DECLARE_OP(maxpool);
XF_DECLARE_OP(avgpool);
XF_DECLARE_OP(global_avgpool);

/* ops_norm.c */
XF_DECLARE_OP(batchnorm);
XF_DECLARE_OP(layernorm);
XF_DECLARE_OP(reduce_mean);
XF_DECLARE_OP(softmax);

/* ops_movement.c: dtype-agnostic data movement */
XF_DECLARE_OP(concat);
XF_DECLARE_OP(split);
XF_DECLARE_OP(transpose);
XF_DECLARE_OP(reshape);
XF_DECLARE_OP(flatten);
XF_DECLARE_OP(squeeze);
XF_DECLARE_OP(unsqueeze);
XF_DECLARE_OP(slice);
XF_DECLARE_OP(gather);
XF_DECLARE_OP(pad);
XF_DECLARE_OP(expand);
XF_DECLARE_OP(shape);

/* ops_unary.c: parametrised activations (float32, infer: unary) */
XF_DECLARE_RUN(clip);
XF_DECLARE_RUN(hardsigmoid);
XF_DECLARE_RUN(hardswish);
XF_DECLARE_RUN(leakyrelu);

/* ops_size_tile.c: not (bool), size (int64 scalar), tile (any dtype) */
XF_DECLARE_OP(not);
XF_DECLARE_OP(size);
XF_DECLARE_OP(tile);

/* ops_binary.c: min/max (infer: arith), prelu (slope broadcast to x) */
XF_DECLARE_RUN(min);
XF_DECLARE_RUN(max);
XF_DECLARE_OP(prelu);

/* ops_reduce.c: reduce_sum/reduce_max (axes, keepdims; infer: reduce_mean's) */
XF_DECLARE_RUN(reduce_sum);
XF_DECLARE_RUN(reduce_max);

/* ops_resize.c */
XF_DECLARE_OP(resize);

/* ops_conv_transpose.c */
XF_DECLARE_OP(conv_transpose);

/* ops_lstm.c: ONNX LSTM, run by ir_opaque_run (inputs X, W, R, B,
 * sequence_lens, initial_h, initial_c, P; NULL or absent when omitted;
 * outputs Y, Y_h, Y_c, a rank-0 placeholder for an omitted one) */
xf_status ir_lstm_run(const xf_lstm_attrs *a, int n_in, const xf_tensor *const *in, int n_out,
                      xf_tensor *out, xf_error *err);

/* Runs opaque node `node` of g (kernel not XF_OPAQUE_NO_KERNEL) on its
 * inputs (NULL for omitted ones); outputs allocated by the caller with the
 * node's output shapes. An If runs its chosen branch with xf_interp_run
 * (opaque_run.c; the interpreter's step for an opaque node). */
xf_status ir_opaque_run(const xf_graph *g, int node, const xf_tensor *const *in, xf_tensor *out,
                        xf_error *err);

#endif /* XF_IR_OP_INTERNAL_H */
