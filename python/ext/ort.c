/*
 * ort.c — rlflow.compare_in_ort: two ONNX files run in ONNX Runtime (the
 * target module, target.h) on the same random inputs, and how far their
 * outputs are apart (the largest |a - b| and |a - b| / |a| over every
 * output, xf_tensor_compare). ONNX Runtime reads each file as written,
 * external data included; the first file's graph gives the inputs. Used by
 * the package's tests and by a user who wants to see that an optimised
 * model computes what the original does, in the runtime that will run it.
 */
#include "ext.h"

#include <string.h>

#include "onnx/onnx.h"
#include "target/target.h"

/* Loads and runs `path` (inputs from g, seed); its outputs into *out. */
static xf_status run_file(xf_target *t, const char *path, const xf_graph *g, uint64_t seed,
                          xf_tensor **out, xf_error *err)
{
    xf_target_model *m = NULL;
    xf_status st = xf_target_model_load_file(t, path, g, seed, &m, err);
    if (st == XF_OK) st = xf_target_model_run(m, err);
    if (st == XF_OK && !(*out = xf_tensor_array_alloc(g->n_outputs)))
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory for %s's outputs", path);
    if (st == XF_OK && (st = xf_target_model_outputs(m, *out, err)) != XF_OK) {
        xf_tensor_array_free(*out, g->n_outputs);
        *out = NULL;
    }
    xf_target_model_free(m);
    if (st != XF_OK) xf_error_prefix(err, "%s in ONNX Runtime: ", path);
    return st;
}

static xf_status diff(const char *a, const char *b, uint64_t seed, int threads, double *max_abs,
                      double *max_rel, char *identity, size_t n, xf_error *err)
{
    xf_graph ga, gb;
    xf_graph_init(&ga);
    xf_graph_init(&gb);
    xf_target *t = NULL;
    xf_tensor *out[2] = {NULL, NULL};
    xf_target_options to = xf_target_default_options();
    to.threads = threads;
    xf_status st = xf_onnx_load(a, NULL, &ga, err);
    if (st == XF_OK) st = xf_onnx_load(b, NULL, &gb, err);
    if (st == XF_OK && ga.n_outputs != gb.n_outputs)
        st = XF_FAIL(err, XF_ERR_MISMATCH, "%s has %d outputs, %s %d", a, ga.n_outputs, b,
                     gb.n_outputs);
    if (st == XF_OK) st = xf_target_open(&to, &t, err);
    if (st == XF_OK) snprintf(identity, n, "%s", xf_target_identity(t));
    if (st == XF_OK) st = run_file(t, a, &ga, seed, &out[0], err);
    if (st == XF_OK) st = run_file(t, b, &ga, seed, &out[1], err);
    *max_abs = *max_rel = 0;
    for (int i = 0; st == XF_OK && i < ga.n_outputs; i++) {
        double ma = 0, mr = 0;
        st = xf_tensor_compare(&out[0][i], &out[1][i], &ma, &mr, err);
        if (st != XF_OK) xf_error_prefix(err, "output %d: ", i);
        if (!(ma <= *max_abs)) *max_abs = ma;
        if (!(mr <= *max_rel)) *max_rel = mr;
    }
    if (out[0]) xf_tensor_array_free(out[0], ga.n_outputs);
    if (out[1]) xf_tensor_array_free(out[1], ga.n_outputs);
    xf_target_close(t);
    xf_graph_free(&ga);
    xf_graph_free(&gb);
    return st;
}

PyObject *rlx_ort_diff(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *a_b = NULL, *b_b = NULL;
    unsigned long long seed = 1;
    int threads = 1;
    if (!PyArg_ParseTuple(args, "O&O&|Ki", PyUnicode_FSConverter, &a_b, PyUnicode_FSConverter,
                          &b_b, &seed, &threads)) {
        Py_XDECREF(a_b);
        return NULL;
    }
    double max_abs = 0, max_rel = 0;
    char identity[256] = "";
    xf_error err = {0};
    xf_status st;
    const char *a = PyBytes_AS_STRING(a_b), *b = PyBytes_AS_STRING(b_b);
    Py_BEGIN_ALLOW_THREADS
    rlx_lock();
    st = diff(a, b, (uint64_t)seed, threads, &max_abs, &max_rel, identity, sizeof identity, &err);
    rlx_unlock();
    Py_END_ALLOW_THREADS
    Py_DECREF(a_b);
    Py_DECREF(b_b);
    if (st != XF_OK) return PyErr_Format(rlx_error, "%s", err.msg);
    return Py_BuildValue("{s:d,s:d,s:s}", "max_abs", max_abs, "max_rel", max_rel, "runtime",
                         identity);
}
