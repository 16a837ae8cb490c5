/*
 * onnx_dtype_internal.h — private to onnx/: the mapping between rlflow's xf_dtype and
 * ONNX TensorProto.DataType codes, shared by the importer and the exporter so
 * both directions agree. Codes are plain ints (the values of the
 * onnx.TensorProto.DataType enum) so this header needs no generated code.
 */
#ifndef XF_ONNX_ONNX_DTYPE_INTERNAL_H
#define XF_ONNX_ONNX_DTYPE_INTERNAL_H

#include "ir/ir.h"

/* ONNX TensorProto.DataType code for `t`; 0 (UNDEFINED) when `t` is invalid. */
int ox_dtype_from_xf(xf_dtype t);
/* For messages about a dtype rlflow refuses. */
#define OX_DTYPES_SUPPORTED "FLOAT, FLOAT16, DOUBLE, INT64, INT32, INT8, UINT8 and BOOL"
/* xf_dtype for an ONNX DataType code; XF_DTYPE_INVALID when rlflow does not
 * support it (FLOAT, INT64, INT32, BOOL, FLOAT16, DOUBLE, INT8, UINT8 are:
 * OX_DTYPES_SUPPORTED). */
xf_dtype ox_dtype_to_xf(int onnx_dtype);
/* ONNX spelling of a DataType code ("FLOAT16"), for messages; "UNKNOWN" for
 * codes outside the enum. */
const char *ox_dtype_name(int onnx_dtype);

#endif /* XF_ONNX_ONNX_DTYPE_INTERNAL_H */
