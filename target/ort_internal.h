/*
 * ort_internal.h — private to target/: ONNX Runtime's C API as far as rlflow uses
 * it, declared here because the npm package ships no header.
 *
 * ONNX Runtime hands out its API as `struct OrtApi`, a table of function
 * pointers that is append-only across releases: an entry keeps its index
 * forever, so asking for an old API version (XF_ORT_API_VERSION) and
 * calling entries by index works with every newer library. The indices,
 * signatures and enum values below were taken from
 * include/onnxruntime/core/session/onnxruntime_c_api.h of
 * microsoft/onnxruntime at ORT_API_VERSION 13 (ONNX Runtime 1.13), commit
 * 0017800f6539412b364502d8b59c11463a6411e6, by counting the members of
 * struct OrtApi from 0. target_ort_load checks CreateStatus, GetErrorCode,
 * GetErrorMessage and ReleaseStatus against each other before anything
 * else runs; tests/test_target.c exercises every other entry end to end.
 */
#ifndef XF_TARGET_ORT_INTERNAL_H
#define XF_TARGET_ORT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

#define XF_ORT_API_VERSION 13u

/* Opaque ONNX Runtime objects: only pointers to them cross the API. */
typedef struct OrtStatus OrtStatus;
typedef struct OrtEnv OrtEnv;
typedef struct OrtSession OrtSession;
typedef struct OrtSessionOptions OrtSessionOptions;
typedef struct OrtValue OrtValue;
typedef struct OrtMemoryInfo OrtMemoryInfo;
typedef struct OrtAllocator OrtAllocator;
typedef struct OrtTensorTypeAndShapeInfo OrtTypeShape;
typedef struct OrtPrepackedWeightsContainer OrtPrepacked;

/* Enum values of onnxruntime_c_api.h. */
enum {
    XF_ORT_FAIL = 1, /* OrtErrorCode */
    XF_ORT_INVALID_ARGUMENT = 2,
    XF_ORT_NO_SUCHFILE = 3,
    XF_ORT_NO_MODEL = 4,
    XF_ORT_INVALID_PROTOBUF = 7,
    XF_ORT_NOT_IMPLEMENTED = 9,
    XF_ORT_INVALID_GRAPH = 10,
    XF_ORT_LOG_FATAL = 4,      /* OrtLoggingLevel */
    XF_ORT_SEQUENTIAL = 0,     /* ExecutionMode */
    XF_ORT_DEVICE_ALLOCATOR = 0, /* OrtAllocatorType */
    XF_ORT_MEM_DEFAULT = 0     /* OrtMemType */
};
/* ONNXTensorElementDataType takes ONNX's TensorProto.DataType codes:
 * xf_onnx_dtype_code (onnx/onnx.h) maps them. */

/* The entries rlflow calls, with their index in struct OrtApi. */
typedef struct xf_ort_api {
    OrtStatus *(*CreateStatus)(int code, const char *msg);                          /* 0 */
    int (*GetErrorCode)(const OrtStatus *s);                                        /* 1 */
    const char *(*GetErrorMessage)(const OrtStatus *s);                             /* 2 */
    OrtStatus *(*CreateEnv)(int log_level, const char *logid, OrtEnv **out);        /* 3 */
    OrtStatus *(*CreateSession)(const OrtEnv *env, const char *path, const OrtSessionOptions *o,
                                OrtSession **out);                                  /* 7 */
    OrtStatus *(*CreateSessionFromArray)(const OrtEnv *env, const void *data, size_t len,
                                         const OrtSessionOptions *o, OrtSession **out); /* 8 */
    OrtStatus *(*Run)(OrtSession *s, const void *run_options, const char *const *in_names,
                      const OrtValue *const *in, size_t n_in, const char *const *out_names,
                      size_t n_out, OrtValue **out);                                /* 9 */
    OrtStatus *(*CreateSessionOptions)(OrtSessionOptions **out);                    /* 10 */
    OrtStatus *(*SetOptimizedModelFilePath)(OrtSessionOptions *o, const char *path); /* 11 */
    OrtStatus *(*SetSessionExecutionMode)(OrtSessionOptions *o, int mode);          /* 13 */
    OrtStatus *(*SetSessionGraphOptimizationLevel)(OrtSessionOptions *o, int level); /* 23 */
    OrtStatus *(*SetIntraOpNumThreads)(OrtSessionOptions *o, int n);                /* 24 */
    OrtStatus *(*SetInterOpNumThreads)(OrtSessionOptions *o, int n);                /* 25 */
    OrtStatus *(*SessionGetInputCount)(const OrtSession *s, size_t *out);           /* 30 */
    OrtStatus *(*SessionGetOutputCount)(const OrtSession *s, size_t *out);          /* 31 */
    OrtStatus *(*SessionGetInputName)(const OrtSession *s, size_t i, OrtAllocator *a,
                                      char **out);                                  /* 36 */
    OrtStatus *(*SessionGetOutputName)(const OrtSession *s, size_t i, OrtAllocator *a,
                                       char **out);                                 /* 37 */
    OrtStatus *(*CreateTensorWithDataAsOrtValue)(const OrtMemoryInfo *info, void *data,
                                                 size_t bytes, const int64_t *shape,
                                                 size_t rank, int type, OrtValue **out); /* 49 */
    OrtStatus *(*GetTensorMutableData)(OrtValue *v, void **out);                    /* 51 */
    OrtStatus *(*GetTensorElementType)(const OrtTypeShape *info, int *out);         /* 60 */
    OrtStatus *(*GetDimensionsCount)(const OrtTypeShape *info, size_t *out);        /* 61 */
    OrtStatus *(*GetDimensions)(const OrtTypeShape *info, int64_t *dims, size_t n); /* 62 */
    OrtStatus *(*GetTensorTypeAndShape)(const OrtValue *v, OrtTypeShape **out);     /* 65 */
    OrtStatus *(*CreateCpuMemoryInfo)(int type, int mem_type, OrtMemoryInfo **out); /* 69 */
    OrtStatus *(*AllocatorFree)(OrtAllocator *a, void *p);                          /* 76 */
    OrtStatus *(*GetAllocatorWithDefaultOptions)(OrtAllocator **out);               /* 78 */
    void (*ReleaseEnv)(OrtEnv *p);                                                  /* 92 */
    void (*ReleaseStatus)(OrtStatus *p);                                            /* 93 */
    void (*ReleaseMemoryInfo)(OrtMemoryInfo *p);                                    /* 94 */
    void (*ReleaseSession)(OrtSession *p);                                          /* 95 */
    void (*ReleaseValue)(OrtValue *p);                                              /* 96 */
    void (*ReleaseTensorTypeAndShapeInfo)(OrtTypeShape *p);                         /* 99 */
    void (*ReleaseSessionOptions)(OrtSessionOptions *p);                            /* 100 */
    OrtStatus *(*AddSessionConfigEntry)(OrtSessionOptions *o, const char *key,
                                        const char *value);                         /* 130 */
    /* One copy of the weights for every session (target/share.c): an
     * initializer given by the caller over its own buffer, and a container
     * in which sessions share the prepacked forms of such initializers. */
    OrtStatus *(*AddInitializer)(OrtSessionOptions *o, const char *name,
                                 const OrtValue *v);                                /* 150 */
    OrtStatus *(*CreatePrepackedWeightsContainer)(OrtPrepacked **out);             /* 166 */
    void (*ReleasePrepackedWeightsContainer)(OrtPrepacked *p);                      /* 167 */
    OrtStatus *(*CreateSessionWithPrepackedWeightsContainer)(const OrtEnv *env, const char *path,
                                                             const OrtSessionOptions *o,
                                                             OrtPrepacked *c,
                                                             OrtSession **out);     /* 168 */
} xf_ort_api;

/* The library, loaded once per process and never unloaded (ONNX Runtime's
 * thread pools and its global state must outlive every session). */
typedef struct xf_ort {
    xf_ort_api api;
    const char *version; /* "1.30.0", owned by the library */
    char path[4096];     /* the file that was loaded */
} xf_ort;

/* Loads the library at `library` (NULL: $RLFLOW_ORT_LIB, else the path set
 * at configure time). XF_ERR_UNSUPPORTED naming the path tried, where it
 * came from and how to install ONNX Runtime when it cannot be loaded. */
xf_status target_ort_load(const char *library, xf_ort *out, xf_error *err);

/* Turns a non-NULL status into *err ("<what>: onnxruntime: <message>"),
 * releases it and returns the xf_status it maps to; XF_OK for NULL. */
xf_status target_ort_check(const xf_ort_api *api, OrtStatus *s, xf_error *err, const char *what);

#endif /* XF_TARGET_ORT_INTERNAL_H */
