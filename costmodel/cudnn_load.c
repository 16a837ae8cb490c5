/*
 * cudnn_load.c — opens the CUDA runtime, cuBLAS and cuDNN with dlopen the
 * first time the cudnn backend is initialised and fills cm_cudnn_fn with the
 * functions the backend calls (CX_FUNCS, cudnn_internal.h).
 *
 * Why not link them: a process linked with cuBLAS loads cuBLASLt at start,
 * and cuBLASLt's start-up leaves about 60 MB of it resident, whether the
 * cudnn backend is ever used or not (rlflow-agent on a machine without a
 * GPU carried it through every run). The libraries are the ones CMake
 * found (XF_CUDART_LIB, XF_CUBLAS_LIB, XF_CUDNN_LIB_PATH); their handles
 * are never closed, as CUDA keeps global state.
 */
#include "cudnn_internal.h"

#include <dlfcn.h>
#include <string.h>

#ifndef XF_CUDART_LIB
#error "XF_CUDART_LIB, XF_CUBLAS_LIB and XF_CUDNN_LIB_PATH are set by costmodel/CMakeLists.txt"
#endif

enum { CX_LIB_cudart, CX_LIB_cublas, CX_LIB_cudnn, CX_N_LIBS };

static const char *const lib_path[CX_N_LIBS] = {XF_CUDART_LIB, XF_CUBLAS_LIB, XF_CUDNN_LIB_PATH};

cx_api cm_cudnn_fn;
static int loaded;

/* The function's name after the headers' renaming (cublasCreate is
 * cublasCreate_v2). */
#define CX_NAME(f) CX_NAME2(f)
#define CX_NAME2(f) #f

static xf_status resolve(void *h, int lib, const char *name, void *fn, size_t size, xf_error *err)
{
    void *p = dlsym(h, name);
    if (!p)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "cudnn backend: %s has no function %s",
                       lib_path[lib], name);
    memcpy(fn, &p, size);
    return XF_OK;
}

xf_status cm_cudnn_load(xf_error *err)
{
    if (loaded) return XF_OK;
    void *h[CX_N_LIBS];
    for (int i = 0; i < CX_N_LIBS; i++) {
        h[i] = dlopen(lib_path[i], RTLD_NOW | RTLD_LOCAL);
        if (!h[i]) {
            const char *why = dlerror();
            return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                           "cudnn backend: cannot load %s: %s (install the CUDA toolkit and "
                           "cuDNN rlflow was built with, or use --backend onednn)",
                           lib_path[i], why ? why : "unknown reason");
        }
    }
    xf_status st = XF_OK;
#define CX_RESOLVE(lib, f)                                                                        \
    if (st == XF_OK)                                                                              \
        st = resolve(h[CX_LIB_##lib], CX_LIB_##lib, CX_NAME(f), &cm_cudnn_fn.f, sizeof cm_cudnn_fn.f, err);
    CX_FUNCS(CX_RESOLVE)
#undef CX_RESOLVE
    loaded = st == XF_OK;
    return st;
}
