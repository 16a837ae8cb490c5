/*
 * target.c — opening and closing the target: load ONNX Runtime, create
 * its environment (logging only fatal errors: every error that matters
 * comes back through a status), the CPU memory description our input
 * buffers are handed over with, and the identity line reports print.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "target/model_internal.h"

static const struct {
    int ort;
    const char *name;
} levels[] = {
    [XF_TARGET_OPT_ALL] = {99, "all"},
    [XF_TARGET_OPT_DISABLED] = {0, "disabled"},
    [XF_TARGET_OPT_BASIC] = {1, "basic"},
    [XF_TARGET_OPT_EXTENDED] = {2, "extended"},
};

xf_target_options xf_target_default_options(void)
{
    xf_target_options o;
    memset(&o, 0, sizeof o);
    return o;
}

static int machine_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 && n < 4096 ? (int)n : 1;
}

xf_status xf_target_open(const xf_target_options *o, xf_target **out, xf_error *err)
{
    *out = NULL;
    xf_target_options d = xf_target_default_options();
    if (!o) o = &d;
    if (o->threads < 0 || (unsigned)o->opt_level > XF_TARGET_OPT_EXTENDED)
        return XF_FAIL(err, XF_ERR_INVALID, "target: threads must be >= 0 (got %d) and the "
                       "optimisation level one of all, disabled, basic, extended", o->threads);
    xf_target *t = xf_calloc(1, sizeof *t);
    if (!t) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory opening the target");
    xf_status s = target_ort_load(o->library, &t->ort, err);
    const xf_ort_api *a = &t->ort.api;
    if (s == XF_OK)
        s = target_ort_check(a, a->CreateEnv(XF_ORT_LOG_FATAL, "rlflow", &t->env), err,
                         "creating the environment");
    if (s == XF_OK)
        s = target_ort_check(a, a->CreateCpuMemoryInfo(XF_ORT_DEVICE_ALLOCATOR, XF_ORT_MEM_DEFAULT,
                                                   &t->mem), err, "describing CPU memory");
    if (s == XF_OK)
        s = target_ort_check(a, a->GetAllocatorWithDefaultOptions(&t->alloc), err,
                         "getting the default allocator");
    if (s != XF_OK) {
        xf_target_close(t);
        return s;
    }
    t->threads = o->threads ? o->threads : machine_cores();
    t->ort_level = levels[o->opt_level].ort;
    snprintf(t->identity, sizeof t->identity, "onnxruntime %s CPU, %d thread%s, optimisations %s",
             t->ort.version, t->threads, t->threads == 1 ? "" : "s", levels[o->opt_level].name);
    *out = t;
    return XF_OK;
}

const char *xf_target_identity(const xf_target *t)
{
    return t->identity;
}

int xf_target_threads(const xf_target *t)
{
    return t->threads;
}

void xf_target_keep_dims(xf_target *t, const xf_onnx_dynamic *d)
{
    t->dims = xf_onnx_dynamic_points(d) > 1 ? d : NULL;
}

const xf_onnx_dynamic *xf_target_kept_dims(const xf_target *t)
{
    return t->dims;
}

int xf_target_export_failed(const xf_target *t)
{
    return t->export_failed;
}

void xf_target_close(xf_target *t)
{
    if (!t) return;
    target_share_free(t);
    if (t->mem) t->ort.api.ReleaseMemoryInfo(t->mem);
    if (t->env) t->ort.api.ReleaseEnv(t->env);
    xf_free(t);
}
