/*
 * ort.c — finds and loads libonnxruntime.so.1 with dlopen, takes its API
 * table (version XF_ORT_API_VERSION) apart into the entries of ort.h by
 * index, checks a few of them against each other, and translates
 * ONNX Runtime's statuses into xf_error.
 *
 * Where the library comes from: the caller's path, else $RLFLOW_ORT_LIB,
 * else the path tools/setup.sh installs to (XF_ORT_DEFAULT_LIB, set at
 * configure time). Only the first one given is tried: a path the caller or
 * the user named is never silently replaced by another. The handle is
 * never closed: ONNX Runtime keeps global state and threads that must not
 * outlive their code.
 */
#include "target/ort.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef XF_ORT_DEFAULT_LIB
#error "XF_ORT_DEFAULT_LIB is set by target/CMakeLists.txt"
#endif

/* struct OrtApiBase: two entries, GetApi then GetVersionString. */
typedef struct ort_api_base {
    const void *(*GetApi)(uint32_t version);
    const char *(*GetVersionString)(void);
} ort_api_base;

typedef void (*ort_fn)(void);

/* Copies entry `idx` of the API table into the field at `field`. */
static void entry(const ort_fn *table, size_t idx, void *field)
{
    memcpy(field, &table[idx], sizeof(ort_fn));
}

static void unpack(const ort_fn *t, xf_ort_api *a)
{
    entry(t, 0, &a->CreateStatus);
    entry(t, 1, &a->GetErrorCode);
    entry(t, 2, &a->GetErrorMessage);
    entry(t, 3, &a->CreateEnv);
    entry(t, 7, &a->CreateSession);
    entry(t, 8, &a->CreateSessionFromArray);
    entry(t, 9, &a->Run);
    entry(t, 10, &a->CreateSessionOptions);
    entry(t, 13, &a->SetSessionExecutionMode);
    entry(t, 23, &a->SetSessionGraphOptimizationLevel);
    entry(t, 24, &a->SetIntraOpNumThreads);
    entry(t, 25, &a->SetInterOpNumThreads);
    entry(t, 30, &a->SessionGetInputCount);
    entry(t, 31, &a->SessionGetOutputCount);
    entry(t, 36, &a->SessionGetInputName);
    entry(t, 37, &a->SessionGetOutputName);
    entry(t, 49, &a->CreateTensorWithDataAsOrtValue);
    entry(t, 51, &a->GetTensorMutableData);
    entry(t, 60, &a->GetTensorElementType);
    entry(t, 61, &a->GetDimensionsCount);
    entry(t, 62, &a->GetDimensions);
    entry(t, 65, &a->GetTensorTypeAndShape);
    entry(t, 69, &a->CreateCpuMemoryInfo);
    entry(t, 76, &a->AllocatorFree);
    entry(t, 78, &a->GetAllocatorWithDefaultOptions);
    entry(t, 92, &a->ReleaseEnv);
    entry(t, 93, &a->ReleaseStatus);
    entry(t, 94, &a->ReleaseMemoryInfo);
    entry(t, 95, &a->ReleaseSession);
    entry(t, 96, &a->ReleaseValue);
    entry(t, 99, &a->ReleaseTensorTypeAndShapeInfo);
    entry(t, 100, &a->ReleaseSessionOptions);
    entry(t, 130, &a->AddSessionConfigEntry);
    entry(t, 150, &a->AddInitializer);
    entry(t, 166, &a->CreatePrepackedWeightsContainer);
    entry(t, 167, &a->ReleasePrepackedWeightsContainer);
    entry(t, 168, &a->CreateSessionWithPrepackedWeightsContainer);
}

/* A status made by CreateStatus must give back its code and message: this
 * fails when the table is not laid out as ort.h says. */
static xf_status self_check(const xf_ort *o, xf_error *err)
{
    const xf_ort_api *a = &o->api;
    const char *probe = "rlflow api probe";
    OrtStatus *s = a->CreateStatus(XF_ORT_NOT_IMPLEMENTED, probe);
    int ok = s && a->GetErrorCode(s) == XF_ORT_NOT_IMPLEMENTED &&
             !strcmp(a->GetErrorMessage(s), probe);
    if (s) a->ReleaseStatus(s);
    if (ok) return XF_OK;
    return XF_FAIL(err, XF_ERR_INTERNAL,
                   "%s (onnxruntime %s): its C API table does not match the layout rlflow "
                   "expects (API version %u)", o->path, o->version, XF_ORT_API_VERSION);
}

xf_status xf_ort_load(const char *library, xf_ort *out, xf_error *err)
{
    memset(out, 0, sizeof *out);
    const char *from = "the xf_target_options library";
    const char *path = library;
    if (!path || !*path) {
        path = getenv("RLFLOW_ORT_LIB");
        from = "$RLFLOW_ORT_LIB";
    }
    if (!path || !*path) {
        path = XF_ORT_DEFAULT_LIB;
        from = "the default path";
    }
    snprintf(out->path, sizeof out->path, "%s", path);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *why = dlerror();
        return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                       "onnxruntime not found: tried %s (%s): %s; install it with tools/setup.sh, "
                       "or set RLFLOW_ORT_LIB to a libonnxruntime.so.1",
                       path, from, why ? why : "cannot be loaded");
    }
    const ort_api_base *(*get_base)(void) = NULL;
    void *sym = dlsym(h, "OrtGetApiBase");
    if (sym) memcpy(&get_base, &sym, sizeof sym);
    const ort_api_base *base = get_base ? get_base() : NULL;
    if (!base) {
        return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                       "%s (%s) is not ONNX Runtime: it has no OrtGetApiBase; install ONNX Runtime "
                       "with tools/setup.sh, or set RLFLOW_ORT_LIB to a libonnxruntime.so.1",
                       path, from);
    }
    out->version = base->GetVersionString();
    const ort_fn *table = base->GetApi(XF_ORT_API_VERSION);
    if (!table) {
        return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                       "%s (onnxruntime %s) does not offer C API version %u", path,
                       out->version ? out->version : "?", XF_ORT_API_VERSION);
    }
    unpack(table, &out->api);
    return self_check(out, err);
}

static xf_status map_code(int code)
{
    switch (code) {
    case XF_ORT_INVALID_ARGUMENT:
    case XF_ORT_NO_MODEL:
    case XF_ORT_INVALID_PROTOBUF:
    case XF_ORT_INVALID_GRAPH: return XF_ERR_INVALID;
    case XF_ORT_NO_SUCHFILE: return XF_ERR_IO;
    case XF_ORT_NOT_IMPLEMENTED: return XF_ERR_UNSUPPORTED;
    default: return XF_ERR_INTERNAL;
    }
}

xf_status xf_ort_check(const xf_ort_api *api, OrtStatus *s, xf_error *err, const char *what)
{
    if (!s) return XF_OK;
    xf_status code = map_code(api->GetErrorCode(s));
    XF_FAIL(err, code, "%s: onnxruntime: %s", what, api->GetErrorMessage(s));
    api->ReleaseStatus(s);
    return code;
}
