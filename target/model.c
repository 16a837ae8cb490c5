/*
 * model.c — one ONNX Runtime session over an xf_graph: serialise it with
 * the ONNX exporter, create the session with the target's settings, make
 * the inputs once (xf_graph_random_inputs) and wrap our buffers as
 * OrtValues in the order the session lists its inputs (matched by name),
 * then run and copy outputs back into xf_tensors. A model can also be the
 * ONNX file itself, as written, with the graph read from it giving inputs.
 */
#include <string.h>

#include "onnx/onnx.h"
#include "target/model_internal.h"

/* m's session: over the file at `path`; else over g written to the
 * scratch directory when it uses the shared weights or is big (share.c);
 * else over g's serialisation. */
static xf_status create_session(xf_target_model *m, const xf_graph *g, const char *path,
                                xf_error *err)
{
    xf_target *t = m->t;
    const xf_ort_api *a = &t->ort.api;
    OrtSessionOptions *so = NULL;
    t->export_failed = 0;
    xf_status s = target_ort_check(a, a->CreateSessionOptions(&so), err, "creating session options");
    if (s == XF_OK)
        s = target_ort_check(a, a->SetIntraOpNumThreads(so, t->threads), err, "setting threads");
    if (s == XF_OK)
        s = target_ort_check(a, a->SetInterOpNumThreads(so, 1), err, "setting inter-op threads");
    /* Timing alternates between sessions. Within a run the pool threads
     * spin between operators, as in every user's session (ONNX Runtime's
     * default); when a run returns they stop spinning
     * (session.force_spinning_stop), so an idle session's threads do not
     * spin-wait on the cores the next session needs (with spinning left on,
     * two sessions of two threads on two cores put the input 20-75% away
     * from itself; with spinning off, every parallel operator paid a thread
     * wake-up that users do not pay). */
    if (s == XF_OK && t->threads > 1)
        s = target_ort_check(a, a->AddSessionConfigEntry(so, "session.force_spinning_stop", "1"),
                         err, "stopping thread spinning between runs");
    if (s == XF_OK)
        s = target_ort_check(a, a->SetSessionExecutionMode(so, XF_ORT_SEQUENTIAL), err,
                         "setting sequential execution");
    if (s == XF_OK)
        s = target_ort_check(a, a->SetSessionGraphOptimizationLevel(so, t->ort_level), err,
                         "setting the optimisation level");
    if (s == XF_OK && path) {
        s = target_ort_check(a, a->CreateSession(t->env, path, so, &m->session), err,
                         "loading the model");
    } else if (s == XF_OK && target_share_wanted(t, g)) {
        s = target_share_session(m, g, so, err);
    } else if (s == XF_OK) {
        uint8_t *buf = NULL;
        size_t len = 0;
        s = xf_onnx_save_buffer_dynamic(g, t->dims, &buf, &len, err);
        t->export_failed = s != XF_OK && s != XF_ERR_NOMEM;
        if (s == XF_OK)
            s = target_ort_check(a, a->CreateSessionFromArray(t->env, buf, len, so, &m->session), err,
                             "loading the model");
        xf_free(buf);
    }
    if (so) a->ReleaseSessionOptions(so);
    return s;
}

/* The session's name of input or output i, copied with xf_strdup. */
static xf_status session_name(xf_target *t, OrtSession *s, int output, size_t i, char **out,
                              xf_error *err)
{
    const xf_ort_api *a = &t->ort.api;
    char *name = NULL;
    OrtStatus *st = output ? a->SessionGetOutputName(s, i, t->alloc, &name)
                           : a->SessionGetInputName(s, i, t->alloc, &name);
    xf_status rc = target_ort_check(a, st, err, "reading the model's names");
    if (rc != XF_OK) return rc;
    *out = xf_strdup(name);
    target_ort_check(a, a->AllocatorFree(t->alloc, name), NULL, "");
    return *out ? XF_OK : XF_FAIL(err, XF_ERR_NOMEM, "out of memory copying a name");
}

static int graph_input(const xf_graph *g, const char *name)
{
    for (int j = 0; j < g->n_inputs; j++) {
        const char *n = g->values[g->inputs[j]].name;
        if (n && !strcmp(n, name)) return j;
    }
    return -1;
}

/* Names, input values over m->inputs and output slots. */
static xf_status bind(xf_target_model *m, const xf_graph *g, xf_error *err)
{
    xf_target *t = m->t;
    const xf_ort_api *a = &t->ort.api;
    size_t n_in = 0, n_out = 0;
    xf_status s = target_ort_check(a, a->SessionGetInputCount(m->session, &n_in), err,
                               "counting inputs");
    if (s == XF_OK)
        s = target_ort_check(a, a->SessionGetOutputCount(m->session, &n_out), err,
                         "counting outputs");
    if (s != XF_OK) return s;
    if (n_in != (size_t)g->n_inputs || n_out != (size_t)g->n_outputs)
        return XF_FAIL(err, XF_ERR_INTERNAL, "onnxruntime sees %zu inputs and %zu outputs, the "
                       "graph has %d and %d", n_in, n_out, g->n_inputs, g->n_outputs);
    m->in_names = xf_calloc(n_in + 1, sizeof *m->in_names);
    m->in_values = xf_calloc(n_in + 1, sizeof *m->in_values);
    m->out_names = xf_calloc(n_out + 1, sizeof *m->out_names);
    m->outs = xf_calloc(n_out + 1, sizeof *m->outs);
    if (!m->in_names || !m->in_values || !m->out_names || !m->outs)
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory binding a model");
    for (int i = 0; i < m->n_in; i++) {
        s = session_name(t, m->session, 0, (size_t)i, &m->in_names[i], err);
        if (s != XF_OK) return s;
        int j = graph_input(g, m->in_names[i]);
        if (j < 0)
            return XF_FAIL(err, XF_ERR_INTERNAL, "onnxruntime input '%s' is not a graph input",
                           m->in_names[i]);
        xf_tensor *x = &m->inputs[j];
        s = target_ort_check(a, a->CreateTensorWithDataAsOrtValue(
                                t->mem, x->data, xf_tensor_bytes(x), x->shape.dims,
                                (size_t)x->shape.rank, xf_onnx_dtype_code(x->dtype), &m->in_values[i]),
                         err, "wrapping an input");
        if (s != XF_OK) return s;
    }
    for (int i = 0; i < m->n_out; i++) {
        s = session_name(t, m->session, 1, (size_t)i, &m->out_names[i], err);
        if (s != XF_OK) return s;
    }
    return XF_OK;
}

xf_status xf_target_model_load(xf_target *t, const xf_graph *g, uint64_t seed,
                               xf_target_model **out, xf_error *err)
{
    return xf_target_model_load_file(t, NULL, g, seed, out, err);
}

xf_status xf_target_model_load_file(xf_target *t, const char *path, const xf_graph *g,
                                    uint64_t seed, xf_target_model **out, xf_error *err)
{
    return target_model_load_then(t, path, g, seed, NULL, NULL, out, err);
}

xf_status target_model_load_then(xf_target *t, const char *path, const xf_graph *g,
                                    uint64_t seed, void (*written)(void *), void *ctx,
                                    xf_target_model **out, xf_error *err)
{
    *out = NULL;
    xf_target_model *m = xf_calloc(1, sizeof *m);
    if (!m) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory loading a model");
    m->t = t;
    m->written = written;
    m->written_ctx = ctx;
    m->n_in = g->n_inputs;
    m->n_out = g->n_outputs;
    xf_status s = create_session(m, g, path, err);
    if (s == XF_OK) {
        m->inputs = xf_tensor_array_alloc(g->n_inputs);
        s = m->inputs ? xf_graph_random_inputs(g, seed, m->inputs, err)
                      : XF_FAIL(err, XF_ERR_NOMEM, "out of memory making inputs");
    }
    for (int i = 0; s == XF_OK && i < g->n_inputs; i++)
        if (!xf_onnx_dtype_code(m->inputs[i].dtype))
            s = XF_FAIL(err, XF_ERR_UNSUPPORTED, "input %d has dtype %s", i,
                        xf_dtype_name(m->inputs[i].dtype));
    if (s == XF_OK) s = bind(m, g, err);
    if (s != XF_OK) {
        xf_target_model_free(m);
        return s;
    }
    *out = m;
    return XF_OK;
}

static void release_outputs(xf_target_model *m)
{
    for (int i = 0; m->outs && i < m->n_out; i++) {
        if (m->outs[i]) m->t->ort.api.ReleaseValue(m->outs[i]);
        m->outs[i] = NULL;
    }
}

xf_status xf_target_model_run(xf_target_model *m, xf_error *err)
{
    const xf_ort_api *a = &m->t->ort.api;
    release_outputs(m);
    m->ran = 0;
    xf_status s = target_ort_check(a, a->Run(m->session, NULL, (const char *const *)m->in_names,
                                         (const OrtValue *const *)m->in_values, (size_t)m->n_in,
                                         (const char *const *)m->out_names, (size_t)m->n_out,
                                         m->outs),
                               err, "running the model");
    m->ran = s == XF_OK;
    return s;
}

static xf_status copy_output(xf_target_model *m, OrtValue *v, xf_tensor *dst, xf_error *err)
{
    const xf_ort_api *a = &m->t->ort.api;
    OrtTypeShape *info = NULL;
    int type = 0;
    size_t rank = 0;
    xf_shape shape = {0, {0}};
    void *data = NULL;
    dst->data = NULL;
    xf_status s = target_ort_check(a, a->GetTensorTypeAndShape(v, &info), err, "reading an output");
    if (s == XF_OK) s = target_ort_check(a, a->GetTensorElementType(info, &type), err, "output type");
    if (s == XF_OK) s = target_ort_check(a, a->GetDimensionsCount(info, &rank), err, "output rank");
    if (s == XF_OK && (rank > XF_MAX_DIMS || xf_onnx_dtype_of_code(type) == XF_DTYPE_INVALID))
        s = XF_FAIL(err, XF_ERR_UNSUPPORTED, "output of rank %zu and ONNX type %d", rank, type);
    if (s == XF_OK) {
        shape.rank = (int)rank;
        s = target_ort_check(a, a->GetDimensions(info, shape.dims, rank), err, "output shape");
    }
    if (info) a->ReleaseTensorTypeAndShapeInfo(info);
    if (s == XF_OK) s = target_ort_check(a, a->GetTensorMutableData(v, &data), err, "output data");
    if (s == XF_OK) s = xf_tensor_alloc(dst, xf_onnx_dtype_of_code(type), &shape, err);
    if (s == XF_OK) memcpy(dst->data, data, xf_tensor_bytes(dst));
    return s;
}

xf_status xf_target_model_outputs(xf_target_model *m, xf_tensor *outs, xf_error *err)
{
    if (!m->ran) return XF_FAIL(err, XF_ERR_INVALID, "no outputs: the model has not run");
    for (int i = 0; i < m->n_out; i++) {
        xf_status s = copy_output(m, m->outs[i], &outs[i], err);
        if (s != XF_OK) {
            xf_error_prefix(err, "output '%s'", m->out_names[i]);
            for (int j = 0; j < i; j++) xf_tensor_free(&outs[j]);
            return s;
        }
    }
    return XF_OK;
}

void xf_target_model_free(xf_target_model *m)
{
    if (!m) return;
    const xf_ort_api *a = &m->t->ort.api;
    release_outputs(m);
    for (int i = 0; m->in_values && i < m->n_in; i++)
        if (m->in_values[i]) a->ReleaseValue(m->in_values[i]);
    for (int i = 0; m->in_names && i < m->n_in; i++) xf_free(m->in_names[i]);
    for (int i = 0; m->out_names && i < m->n_out; i++) xf_free(m->out_names[i]);
    if (m->session) a->ReleaseSession(m->session);
    for (int i = 0; i < m->n_shared; i++) a->ReleaseValue(m->shared_vals[i]);
    xf_free(m->shared_vals);
    xf_tensor_array_free(m->inputs, m->n_in);
    xf_free(m->in_values);
    xf_free(m->in_names);
    xf_free(m->out_names);
    xf_free(m->outs);
    xf_free(m);
}
