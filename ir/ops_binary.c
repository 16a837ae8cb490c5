/*
 * ops_binary.c — STUB, to be replaced by the real implementation.
 */
#include "op_impl.h"

xf_status xf_infer_arith(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "arith: not implemented"); }

xf_status xf_run_add(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "add: not implemented"); }

xf_status xf_run_sub(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "sub: not implemented"); }

xf_status xf_run_mul(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "mul: not implemented"); }

xf_status xf_run_div(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "div: not implemented"); }

xf_status xf_infer_pow(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "pow: not implemented"); }

xf_status xf_run_pow(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "pow: not implemented"); }

xf_status xf_infer_equal(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "equal: not implemented"); }

xf_status xf_run_equal(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "equal: not implemented"); }

xf_status xf_infer_where(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "where: not implemented"); }

xf_status xf_run_where(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "where: not implemented"); }

xf_status xf_infer_scalar_mul(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "scalar_mul: not implemented"); }

xf_status xf_run_scalar_mul(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "scalar_mul: not implemented"); }
