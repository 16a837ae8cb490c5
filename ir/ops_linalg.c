/*
 * ops_linalg.c — STUB, to be replaced by the real implementation.
 */
#include "op_impl.h"

xf_status xf_infer_matmul(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "matmul: not implemented"); }

xf_status xf_run_matmul(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "matmul: not implemented"); }

xf_status xf_infer_gemm(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "gemm: not implemented"); }

xf_status xf_run_gemm(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "gemm: not implemented"); }
