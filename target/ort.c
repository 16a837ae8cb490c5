/*
 * ort.c — finds and loads libonnxruntime.so.1 with dlopen, takes its API
 * table (version XF_ORT_API_VERSION) apart into the entries of ort_internal.h by
 * index, checks a few of them against each other, and translates
 * ONNX Runtime's statuses into xf_error.
 *
 * Where the library comes from: the caller's path, else $RLFLOW_ORT_LIB,
 * else the path tools/setup.sh installs to (XF_ORT_DEFAULT_LIB, set at
 * configure time). Only the first one given is tried: a path the caller or
 * the user named is never silently replaced by another. The handle is
 * never closed: ONNX Runtime keeps global state and threads that must not
 * outlive their code.
 *
 * Before dlopen the file is checked (check_elf): a regular file with a
 * 64-bit ELF header whose program headers and loaded segments lie inside
 * it. dlopen maps a truncated library and the process dies of SIGBUS when
 * the loader touches a page past its end, with no message; this says which
 * file and what is missing. After dlopen every entry of the API table that
 * rlflow uses must be set (a table with NULL entries crashed the self
 * check).
 */
#include "target/ort_internal.h"

#include <dlfcn.h>
#include <elf.h>
#include <sys/stat.h>
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

/* Copies entry `idx` of the API table into the field at `field`; counts
 * a NULL one into *missing (the first one's index into *first). */
static void entry_of(const ort_fn *table, size_t idx, void *field, int *missing, int *first)
{
    if (!table[idx] && (*missing)++ == 0) *first = (int)idx;
    memcpy(field, &table[idx], sizeof(ort_fn));
}

#define entry(t, i, f) entry_of(t, i, f, &missing, first)

/* The entries of table t into a; the number of NULL entries (the first's
 * index in *first). */
static int unpack(const ort_fn *t, xf_ort_api *a, int *first)
{
    int missing = 0;
    entry(t, 0, &a->CreateStatus);
    entry(t, 1, &a->GetErrorCode);
    entry(t, 2, &a->GetErrorMessage);
    entry(t, 3, &a->CreateEnv);
    entry(t, 7, &a->CreateSession);
    entry(t, 8, &a->CreateSessionFromArray);
    entry(t, 9, &a->Run);
    entry(t, 10, &a->CreateSessionOptions);
    entry(t, 11, &a->SetOptimizedModelFilePath);
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
    return missing;
}

#undef entry

/* The library file is a regular file holding a whole 64-bit ELF shared
 * object: its header, program headers and every loaded segment lie inside
 * the file. XF_ERR_UNSUPPORTED naming the file and what is wrong. */
static xf_status check_elf(const char *path, const char *from, xf_error *err)
{
    struct stat sb;
    if (stat(path, &sb) != 0) return XF_OK; /* dlopen says it is not there */
    FILE *f = NULL;
    xf_status st = xf_infile_open(path, &f, err);
    if (st != XF_OK) {
        xf_error_prefix(err, "onnxruntime library %s (%s)", path, from);
        return XF_ERR_UNSUPPORTED;
    }
    Elf64_Ehdr eh;
    long size = -1;
    const char *bad = NULL;
    char why[160] = "";
    if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    if (size < (long)sizeof eh || fseek(f, 0, SEEK_SET) != 0 || fread(&eh, sizeof eh, 1, f) != 1)
        bad = "it is shorter than an ELF header";
    else if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0)
        bad = "it is not an ELF file";
    else if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr))
        bad = "it is not a 64-bit ELF file";
    else if (eh.e_type != ET_DYN)
        bad = "it is not a shared library";
    else if (eh.e_phoff > (uint64_t)size ||
             (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr) > (uint64_t)size - eh.e_phoff)
        bad = "its program headers lie past its end (truncated?)";
    for (int i = 0; !bad && i < eh.e_phnum; i++) {
        Elf64_Phdr ph;
        if (fseek(f, (long)(eh.e_phoff + (uint64_t)i * sizeof ph), SEEK_SET) != 0 ||
            fread(&ph, sizeof ph, 1, f) != 1) {
            bad = "its program headers cannot be read";
        } else if (ph.p_type == PT_LOAD &&
                   (ph.p_offset > (uint64_t)size || ph.p_filesz > (uint64_t)size - ph.p_offset)) {
            snprintf(why, sizeof why,
                     "it is truncated: %ld bytes, but segment %d needs bytes up to %llu", size, i,
                     (unsigned long long)(ph.p_offset + ph.p_filesz));
            bad = why;
        }
    }
    fclose(f);
    if (!bad) return XF_OK;
    return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                   "onnxruntime library %s (%s) cannot be loaded: %s; install it with "
                   "tools/setup.sh, or set RLFLOW_ORT_LIB to a libonnxruntime.so.1",
                   path, from, bad);
}

/* A status made by CreateStatus must give back its code and message: this
 * fails when the table is not laid out as ort_internal.h says. */
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

xf_status target_ort_load(const char *library, xf_ort *out, xf_error *err)
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
    /* a bare name (no '/') is for the dynamic loader's search path */
    if (strchr(path, '/')) {
        xf_status st = check_elf(path, from, err);
        if (st != XF_OK) return st;
    }
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
    if (!base || !base->GetApi || !base->GetVersionString) {
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
    int first = 0, missing = unpack(table, &out->api, &first);
    if (missing)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                       "%s (onnxruntime %s): %d entries of its C API table (version %u) that "
                       "rlflow uses are missing, the first at index %d",
                       path, out->version ? out->version : "?", missing, XF_ORT_API_VERSION, first);
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

xf_status target_ort_check(const xf_ort_api *api, OrtStatus *s, xf_error *err, const char *what)
{
    if (!s) return XF_OK;
    xf_status code = map_code(api->GetErrorCode(s));
    XF_FAIL(err, code, "%s: onnxruntime: %s", what, api->GetErrorMessage(s));
    api->ReleaseStatus(s);
    return code;
}
