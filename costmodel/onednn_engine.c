/*
 * onednn_engine.c — the oneDNN backend's table entry and its lifetime: one
 * CPU engine and one stream per opened backend, the OpenMP thread count
 * (Debian's libdnnl uses the OpenMP CPU runtime, so omp_set_num_threads
 * is how the requested thread count reaches its kernels; the function is
 * looked up in the already loaded libgomp, libdnnl's own dependency, so
 * building needs nothing beyond -ldnnl), the identity the
 * cost cache is keyed by (CPU model, oneDNN version and the instruction set
 * its JIT kernels actually use, since an AVX2 and an AVX-512 machine of the
 * same model name time differently) and the translation of oneDNN status
 * codes into xf_status with oneDNN's own message text.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include <dnnl_debug.h>

#include "onednn_internal.h"

xf_status cm_onednn_check(dnnl_status_t s, xf_error *err, const char *what)
{
    switch (s) {
    case dnnl_success: return XF_OK;
    case dnnl_unimplemented:
    case dnnl_invalid_arguments:
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "%s: oneDNN has no kernel for it (%s)", what,
                       dnnl_status2str(s));
    case dnnl_out_of_memory:
        return XF_FAIL(err, XF_ERR_NOMEM, "%s: oneDNN ran out of memory", what);
    default:
        return XF_FAIL(err, XF_ERR_INTERNAL, "%s: oneDNN failed (%s)", what,
                       dnnl_status2str(s));
    }
}

typedef void (*set_threads_fn)(int);

/* omp_set_num_threads of the OpenMP runtime libdnnl loaded, or NULL: in
 * the global scope (a tool), else in a runtime already loaded privately
 * (RTLD_NOLOAD: the Python extension, loaded RTLD_LOCAL, brings libdnnl and
 * its runtime in where a global lookup does not see them). */
static set_threads_fn omp_setter(void)
{
    static int looked;
    static set_threads_fn fn;
    static const char *const runtimes[] = {NULL, "libgomp.so.1", "libomp.so.5", "libiomp5.so"};
    if (!looked) {
        looked = 1;
        for (size_t i = 0; !fn && i < sizeof runtimes / sizeof runtimes[0]; i++) {
            void *h = dlopen(runtimes[i], RTLD_LAZY | (runtimes[i] ? RTLD_NOLOAD : 0));
            if (!h) continue;
            *(void **)&fn = dlsym(h, "omp_set_num_threads");
            dlclose(h);
        }
        if (!fn)
            xf_log(XF_LOG_WARN, "onednn: no OpenMP runtime found; the thread count is "
                                "left to oneDNN's default");
    }
    return fn;
}

void cm_onednn_set_threads(const ox_state *st)
{
    set_threads_fn fn = omp_setter();
    if (fn) fn(st->cfg.threads);
}

static xf_status onednn_init(const xf_backend_config *cfg, void **state, xf_error *err)
{
    *state = NULL;
    if (dnnl_engine_get_count(dnnl_cpu) == 0)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "onednn: oneDNN reports no CPU engine");
    ox_state *st = xf_calloc(1, sizeof *st);
    if (!st) return XF_FAIL(err, XF_ERR_NOMEM, "onednn: out of memory");
    st->cfg = *cfg;
    cm_onednn_set_threads(st);
    xf_status s = cm_onednn_check(dnnl_engine_create(&st->engine, dnnl_cpu, 0), err,
                           "onednn: creating the CPU engine");
    if (s == XF_OK)
        s = cm_onednn_check(dnnl_stream_create(&st->stream, st->engine, dnnl_stream_default_flags),
                     err, "onednn: creating a stream");
    if (s != XF_OK) {
        if (st->engine) dnnl_engine_destroy(st->engine);
        xf_free(st);
        return s;
    }
    *state = st;
    return XF_OK;
}

static void onednn_free(void *state)
{
    ox_state *st = state;
    if (!st) return;
    dnnl_stream_destroy(st->stream);
    dnnl_engine_destroy(st->engine);
    xf_free(st);
}

static const char *isa_name(dnnl_cpu_isa_t isa)
{
    switch (isa) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "any";
    }
}

/* Revision of the backend's own kernels and of how they are timed (2:
 * erf's vectorised loop; 3: disturbed runs timed again, see
 * xf_cost_runs_median; 4: runs another process preempted are not counted
 * and a measurement without a clean attempt is not cached, see
 * xf_cost_runs_summary; 5: nor one whose runs other running tasks shared
 * the machine with, XF_COST_RUNS_SHARED). Part of the identity, so a cost
 * cache never returns timings of older kernels, nor ones a busy machine
 * spoiled: entries of revision 4, which may have been timed beside busy
 * neighbours, are measured again once. */
#define OX_KERNELS_REVISION 5

static void onednn_identity(void *state, char *buf, size_t n)
{
    (void)state;
    char cpu[256];
    cm_cpu_model(cpu, sizeof cpu);
    const dnnl_version_t *v = dnnl_version();
    snprintf(buf, n, "%s|dnnl %d.%d.%d|isa=%s|kernels=%d", cpu, v->major, v->minor, v->patch,
             isa_name(dnnl_get_effective_cpu_isa()), OX_KERNELS_REVISION);
}

const xf_backend cm_backend_onednn = {
    .name = "onednn",
    .init = onednn_init,
    .free = onednn_free,
    .identity = onednn_identity,
    .measure = cm_onednn_measure,
    .exec_prepare = cm_onednn_exec_prepare,
    .exec_run = cm_onednn_exec_run,
    .exec_output = cm_onednn_exec_output,
    .exec_free = cm_onednn_exec_free,
};
