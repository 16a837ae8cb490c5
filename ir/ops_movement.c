/*
 * ops_movement.c — STUB, to be replaced by the real implementation.
 */
#include "op_impl.h"

xf_status xf_infer_concat(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "concat: not implemented"); }

xf_status xf_run_concat(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "concat: not implemented"); }

xf_status xf_infer_split(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "split: not implemented"); }

xf_status xf_run_split(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "split: not implemented"); }

xf_status xf_infer_transpose(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "transpose: not implemented"); }

xf_status xf_run_transpose(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "transpose: not implemented"); }

xf_status xf_infer_reshape(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "reshape: not implemented"); }

xf_status xf_run_reshape(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "reshape: not implemented"); }

xf_status xf_infer_flatten(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "flatten: not implemented"); }

xf_status xf_run_flatten(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "flatten: not implemented"); }

xf_status xf_infer_squeeze(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "squeeze: not implemented"); }

xf_status xf_run_squeeze(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "squeeze: not implemented"); }

xf_status xf_infer_unsqueeze(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "unsqueeze: not implemented"); }

xf_status xf_run_unsqueeze(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "unsqueeze: not implemented"); }

xf_status xf_infer_slice(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "slice: not implemented"); }

xf_status xf_run_slice(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "slice: not implemented"); }

xf_status xf_infer_gather(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "gather: not implemented"); }

xf_status xf_run_gather(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "gather: not implemented"); }

xf_status xf_infer_pad(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "pad: not implemented"); }

xf_status xf_run_pad(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "pad: not implemented"); }

xf_status xf_infer_expand(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "expand: not implemented"); }

xf_status xf_run_expand(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "expand: not implemented"); }

xf_status xf_infer_shape(const xf_params *p, int n_in, const xf_dtype *in_dt, const xf_shape *in_sh,
    int n_out, xf_dtype *out_dt, xf_shape *out_sh, xf_error *err)
{ (void)p;(void)n_in;(void)in_dt;(void)in_sh;(void)n_out;(void)out_dt;(void)out_sh;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "shape: not implemented"); }

xf_status xf_run_shape(const xf_params *p, int n_in, const xf_tensor *const *in, int n_out,
    xf_tensor *out, xf_error *err)
{ (void)p;(void)n_in;(void)in;(void)n_out;(void)out;
  return XF_FAIL(err, XF_ERR_UNSUPPORTED, "shape: not implemented"); }
