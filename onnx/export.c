/* export.c — STUB, to be replaced. */
#include "onnx.h"
xf_status xf_onnx_save(const xf_graph *g, const char *path, xf_error *err)
{ (void)g; (void)path; return XF_FAIL(err, XF_ERR_UNSUPPORTED, "not implemented"); }
xf_status xf_onnx_save_buffer(const xf_graph *g, uint8_t **buf, size_t *len, xf_error *err)
{ (void)g; (void)buf; (void)len; return XF_FAIL(err, XF_ERR_UNSUPPORTED, "not implemented"); }
xf_status xf_onnx_save_tensor(const char *path, const xf_tensor *t, const char *name, xf_error *err)
{ (void)path; (void)t; (void)name; return XF_FAIL(err, XF_ERR_UNSUPPORTED, "not implemented"); }
const char *xf_onnx_op_type(const xf_node *n) { (void)n; return "?"; }
