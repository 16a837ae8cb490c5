/* import.c — STUB, to be replaced. */
#include "onnx.h"
xf_onnx_options xf_onnx_default_options(void) { xf_onnx_options o = {1, 0, 0, 0}; return o; }
xf_status xf_onnx_load(const char *path, const xf_onnx_options *opts, xf_graph *g, xf_error *err)
{ (void)path; (void)opts; (void)g; return XF_FAIL(err, XF_ERR_UNSUPPORTED, "not implemented"); }
xf_status xf_onnx_load_buffer(const void *buf, size_t len, const char *name, const char *base_dir,
                              const xf_onnx_options *opts, xf_graph *g, xf_error *err)
{ (void)buf; (void)len; (void)name; (void)base_dir; (void)opts; (void)g; return XF_FAIL(err, XF_ERR_UNSUPPORTED, "not implemented"); }
xf_status xf_onnx_load_tensor(const char *path, xf_tensor *t, char **name, xf_error *err)
{ (void)path; (void)t; (void)name; return XF_FAIL(err, XF_ERR_UNSUPPORTED, "not implemented"); }
