/*
 * ops_conv.c — STUB, to be replaced by the real implementation.
 */
#include "op_impl.h"

xf_status xf_infer_conv(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "conv: not implemented"); }

xf_status xf_run_conv(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "conv: not implemented"); }

xf_status xf_infer_enlarge(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "enlarge: not implemented"); }

xf_status xf_run_enlarge(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "enlarge: not implemented"); }

xf_status xf_infer_const_identity_conv(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "const_identity_conv: not implemented"); }

xf_status xf_run_const_identity_conv(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "const_identity_conv: not implemented"); }

xf_status xf_infer_const_identity_matrix(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "const_identity_matrix: not implemented"); }

xf_status xf_run_const_identity_matrix(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "const_identity_matrix: not implemented"); }

xf_status xf_infer_const_ones(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "const_ones: not implemented"); }

xf_status xf_run_const_ones(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "const_ones: not implemented"); }

xf_status xf_infer_const_pool(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "const_pool: not implemented"); }

xf_status xf_run_const_pool(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "const_pool: not implemented"); }

xf_status xf_infer_constant_of_shape(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "constant_of_shape: not implemented"); }

xf_status xf_run_constant_of_shape(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "constant_of_shape: not implemented"); }
