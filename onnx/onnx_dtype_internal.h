/*
 * onnx_dtype_internal.h — private to onnx/: the mapping between rlflow's xf_dtype and
 * ONNX TensorProto.DataType codes, shared by the importer and the exporter so
 * both directions agree. Codes are plain ints (the values of the
 * onnx.TensorProto.DataType enum) so this header needs no generated code.
 */
#ifndef XF_ONNX_ONNX_DTYPE_INTERNAL_H
#define XF_ONNX_ONNX_DTYPE_INTERNAL_H

#include "ir/ir.h"
#include "onnx/onnx.h" /* xf_onnx_dtype_code, xf_onnx_dtype_of_code */

/* For messages about a dtype rlflow refuses. */
#define OX_DTYPES_SUPPORTED "FLOAT, FLOAT16, DOUBLE, INT64, INT32, INT8, UINT8 and BOOL"
/* ONNX spelling of a DataType code ("FLOAT16"), for messages; "UNKNOWN" for
 * codes outside the enum. */
const char *ox_dtype_name(int onnx_dtype);

#endif /* XF_ONNX_ONNX_DTYPE_INTERNAL_H */
