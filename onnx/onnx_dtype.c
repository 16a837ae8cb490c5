/*
 * onnx_dtype.c — xf_dtype <-> ONNX TensorProto.DataType codes (see
 * onnx_dtype_internal.h). The numeric codes are fixed by the ONNX specification.
 */
#include "onnx_dtype_internal.h"

enum {
    ONNX_UNDEFINED = 0,
    ONNX_FLOAT = 1,
    ONNX_UINT8 = 2,
    ONNX_INT8 = 3,
    ONNX_INT32 = 6,
    ONNX_INT64 = 7,
    ONNX_BOOL = 9,
    ONNX_FLOAT16 = 10,
    ONNX_DOUBLE = 11,
};

int xf_onnx_dtype_code(xf_dtype t)
{
    switch (t) {
    case XF_F32: return ONNX_FLOAT;
    case XF_I64: return ONNX_INT64;
    case XF_I32: return ONNX_INT32;
    case XF_BOOL: return ONNX_BOOL;
    case XF_F16: return ONNX_FLOAT16;
    case XF_F64: return ONNX_DOUBLE;
    case XF_I8: return ONNX_INT8;
    case XF_U8: return ONNX_UINT8;
    default: return ONNX_UNDEFINED;
    }
}

xf_dtype xf_onnx_dtype_of_code(int onnx_dtype)
{
    switch (onnx_dtype) {
    case ONNX_FLOAT: return XF_F32;
    case ONNX_INT64: return XF_I64;
    case ONNX_INT32: return XF_I32;
    case ONNX_BOOL: return XF_BOOL;
    case ONNX_FLOAT16: return XF_F16;
    case ONNX_DOUBLE: return XF_F64;
    case ONNX_INT8: return XF_I8;
    case ONNX_UINT8: return XF_U8;
    default: return XF_DTYPE_INVALID;
    }
}

const char *ox_dtype_name(int onnx_dtype)
{
    static const char *const names[] = {
        "UNDEFINED", "FLOAT",  "UINT8",  "INT8",      "UINT16",     "INT16",
        "INT32",     "INT64",  "STRING", "BOOL",      "FLOAT16",    "DOUBLE",
        "UINT32",    "UINT64", "COMPLEX64", "COMPLEX128", "BFLOAT16",
        "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
    };
    if (onnx_dtype < 0 || onnx_dtype >= (int)(sizeof names / sizeof names[0])) return "UNKNOWN";
    return names[onnx_dtype];
}
