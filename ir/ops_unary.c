/*
 * ops_unary.c — STUB, to be replaced by the real implementation.
 */
#include "op_impl.h"

xf_status xf_infer_unary(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "unary: not implemented"); }

xf_status xf_run_relu(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "relu: not implemented"); }

xf_status xf_run_sigmoid(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "sigmoid: not implemented"); }

xf_status xf_run_tanh(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "tanh: not implemented"); }

xf_status xf_run_erf(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "erf: not implemented"); }

xf_status xf_run_gelu(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "gelu: not implemented"); }

xf_status xf_run_sqrt(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "sqrt: not implemented"); }

xf_status xf_run_exp(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "exp: not implemented"); }

xf_status xf_run_log(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "log: not implemented"); }

xf_status xf_run_neg(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "neg: not implemented"); }

xf_status xf_run_abs(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "abs: not implemented"); }

xf_status xf_run_reciprocal(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "reciprocal: not implemented"); }

xf_status xf_infer_identity(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "identity: not implemented"); }

xf_status xf_run_identity(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "identity: not implemented"); }

xf_status xf_infer_dropout(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "dropout: not implemented"); }

xf_status xf_run_dropout(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "dropout: not implemented"); }

xf_status xf_infer_cast(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "cast: not implemented"); }

xf_status xf_run_cast(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "cast: not implemented"); }
