/*
 * module.c — the CPython extension rlflow._rlflow behind the rlflow package
 * (python/rlflow, docs/python.md): the library's one optimisation call
 * (optimize.h, xf_optimize_file) with its options from a dict and its
 * report back as a dict, the default rules database (optimize.h
 * xf_default_rules_find), the audit views (rules.c) and the comparison of
 * two models in ONNX Runtime (ort.c). The Python side
 * (python/rlflow/__init__.py) turns models into files and back and wraps
 * the dicts; this file only converts.
 *
 * The optimisation runs with the GIL released: nothing in it touches a
 * Python object, and its notes and progress go to stderr from C (on the
 * caller's `verbose`), as the tool's do. Calls into the library run one at
 * a time (rlx_lock, ext.h). A failure raises rlflow.Error with
 * the library's message (xf_error), InputError when an input (the model,
 * the rules, an option) was at fault. Options are checked before anything
 * runs: an unknown name or a value of the wrong kind is a TypeError or a
 * ValueError naming it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "ext.h"
#include "optimize/optimize.h"

PyObject *rlx_error, *rlx_input_error;

static pthread_mutex_t library_lock = PTHREAD_MUTEX_INITIALIZER;

void rlx_lock(void)
{
    pthread_mutex_lock(&library_lock);
}

void rlx_unlock(void)
{
    pthread_mutex_unlock(&library_lock);
}

/* ------------------------------------------------------------- options */

/* Progress and notes while the GIL is released: plain stderr lines. */
static void note(void *user, xf_optimize_note_kind kind, const char *text)
{
    int verbose = *(const int *)user;
    if (kind == XF_OPTIMIZE_WARN || (verbose && kind != XF_OPTIMIZE_PROGRESS_END))
        fprintf(stderr, "rlflow: %s\n", text);
}

static void search_progress(void *user, int expanded, double best_ms, double initial_ms)
{
    (void)user;
    fprintf(stderr, "\rrlflow: search: %d graphs expanded, best %.4f ms (%+.2f%%)   ", expanded,
            best_ms, initial_ms > 0 ? 100.0 * (best_ms - initial_ms) / initial_ms : 0.0);
}

/* Holds what the options' strings point into while the call runs. */
typedef struct held {
    PyObject *refs[32];
    int n;
    const char *dim_names[64];
    int64_t dim_values[64];
    int verbose;
    int budget_max_given; /* target_budget_max was given: target_budget does not fix it */
} held;

static const char *str_of(held *h, PyObject *v, const char *name)
{
    if (!PyUnicode_Check(v) && !PyBytes_Check(v) && !PyObject_HasAttrString(v, "__fspath__")) {
        PyErr_Format(PyExc_TypeError, "rlflow: option %s takes a string or a path", name);
        return NULL;
    }
    PyObject *b = NULL;
    if (!PyUnicode_FSConverter(v, &b)) return NULL;
    if (h->n == (int)(sizeof h->refs / sizeof h->refs[0])) {
        Py_DECREF(b);
        PyErr_SetString(PyExc_ValueError, "rlflow: too many string options");
        return NULL;
    }
    h->refs[h->n++] = b;
    return PyBytes_AS_STRING(b);
}

static int int_of(PyObject *v, const char *name, long lo, long hi, int *out)
{
    long x = PyLong_AsLong(v);
    if (x == -1 && PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError, "rlflow: option %s takes an integer", name);
        return -1;
    }
    if (x < lo || x > hi) {
        PyErr_Format(PyExc_ValueError, "rlflow: option %s must be in %ld..%ld, not %ld", name,
                     lo, hi, x);
        return -1;
    }
    *out = (int)x;
    return 0;
}

static int double_of(PyObject *v, const char *name, double *out)
{
    double x = PyFloat_AsDouble(v);
    if (x == -1.0 && PyErr_Occurred()) {
        PyErr_Format(PyExc_TypeError, "rlflow: option %s takes a number", name);
        return -1;
    }
    if (!(x >= 0)) {
        PyErr_Format(PyExc_ValueError, "rlflow: option %s must be >= 0", name);
        return -1;
    }
    *out = x;
    return 0;
}

static int choice_of(held *h, PyObject *v, const char *name, const char *const *names, int *out)
{
    const char *s = str_of(h, v, name);
    if (!s) return -1;
    for (int i = 0; names[i]; i++)
        if (!strcmp(s, names[i])) {
            *out = i;
            return 0;
        }
    PyErr_Format(PyExc_ValueError, "rlflow: option %s: unknown value '%s'", name, s);
    return -1;
}

static int dims_of(held *h, PyObject *v, xf_optimize_options *o)
{
    if (!PyDict_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "rlflow: option dims takes a dict {name: size}");
        return -1;
    }
    PyObject *key, *val;
    Py_ssize_t pos = 0;
    int n = 0;
    while (PyDict_Next(v, &pos, &key, &val)) {
        if (n == 64) {
            PyErr_SetString(PyExc_ValueError, "rlflow: option dims: at most 64 dims");
            return -1;
        }
        int size;
        if (!(h->dim_names[n] = str_of(h, key, "dims")) ||
            int_of(val, "dims", 1, 1L << 30, &size))
            return -1;
        h->dim_values[n++] = size;
    }
    o->n_dims = n;
    o->dim_names = h->dim_names;
    o->dim_values = h->dim_values;
    return 0;
}

/* One option; -1 with a Python exception set when it is bad. */
static int set_option(held *h, xf_optimize_options *o, const char *k, PyObject *v)
{
    static const char *const passes[] = {"rules", "expert", "both", NULL};
    static const char *const agents[] = {"search", "ppo", "wm", NULL};
    static const char *const backends[] = {"analytic", "onednn", NULL};
    int i;
    if (!strcmp(k, "rules")) return (o->rules = str_of(h, v, k)) ? 0 : -1;
    if (!strcmp(k, "cache")) return (o->cache = str_of(h, v, k)) ? 0 : -1;
    if (!strcmp(k, "data")) return (o->data = str_of(h, v, k)) ? 0 : -1;
    if (!strcmp(k, "external_data")) return (o->external_data = str_of(h, v, k)) ? 0 : -1;
    if (!strcmp(k, "search")) {
        const char *s = str_of(h, v, k);
        xf_error err;
        xf_search_kind kind;
        if (!s) return -1;
        if (xf_search_kind_parse(s, &kind, &err) != XF_OK) {
            PyErr_Format(PyExc_ValueError, "rlflow: option search: %s", err.msg);
            return -1;
        }
        o->search = kind;
        return 0;
    }
    if (!strcmp(k, "agent")) {
        if (choice_of(h, v, k, agents, &i)) return -1;
        o->agent = (xf_optimize_agent)i;
        return 0;
    }
    if (!strcmp(k, "passes")) {
        if (choice_of(h, v, k, passes, &i)) return -1;
        o->passes = (xf_optimize_passes)i;
        return 0;
    }
    if (!strcmp(k, "backend")) {
        if (choice_of(h, v, k, backends, &i)) return -1;
        o->backend = i == 0 ? XF_COST_ANALYTIC : XF_COST_ONEDNN;
        return 0;
    }
    if (!strcmp(k, "target")) {
        o->target = PyObject_IsTrue(v);
        return o->target < 0 ? -1 : 0;
    }
    if (!strcmp(k, "check")) return (o->check = PyObject_IsTrue(v)) < 0 ? -1 : 0;
    if (!strcmp(k, "derived_rules")) return (o->derived_rules = PyObject_IsTrue(v)) < 0 ? -1 : 0;
    if (!strcmp(k, "verbose")) return (h->verbose = PyObject_IsTrue(v)) < 0 ? -1 : 0;
    if (!strcmp(k, "threads")) return int_of(v, k, 0, 1024, &o->threads);
    if (!strcmp(k, "budget")) return int_of(v, k, 0, 1 << 30, &o->budget);
    if (!strcmp(k, "locations")) return int_of(v, k, 1, 1 << 30, &o->locations);
    if (!strcmp(k, "max_rule_size")) return int_of(v, k, 0, 64, &o->max_rule_size);
    if (!strcmp(k, "candidates")) return int_of(v, k, 1, 1000, &o->candidates);
    if (!strcmp(k, "latency")) return int_of(v, k, 0, 2, &o->latency);
    if (!strcmp(k, "seed")) {
        if (int_of(v, k, 0, 2147483647, &i)) return -1;
        o->seed = (uint64_t)i;
        return 0;
    }
    if (!strcmp(k, "time_limit")) return double_of(v, k, &o->time_limit);
    if (!strcmp(k, "target_budget")) { /* a budget given is kept, as in rlflow-agent */
        if (double_of(v, k, &o->target_budget)) return -1;
        if (!h->budget_max_given) o->target_budget_max = o->target_budget;
        return 0;
    }
    if (!strcmp(k, "target_budget_max")) {
        h->budget_max_given = 1;
        return double_of(v, k, &o->target_budget_max);
    }
    if (!strcmp(k, "alpha")) return double_of(v, k, &o->alpha);
    if (!strcmp(k, "rtol")) return double_of(v, k, &o->rtol);
    if (!strcmp(k, "atol")) return double_of(v, k, &o->atol);
    if (!strcmp(k, "dims")) return dims_of(h, v, o);
    PyErr_Format(PyExc_TypeError, "rlflow: unknown option '%s' (docs/python.md lists them)", k);
    return -1;
}

/* ------------------------------------------------------------- report */

static int put(PyObject *d, const char *k, PyObject *v)
{
    if (!v) return -1;
    int rc = PyDict_SetItemString(d, k, v);
    Py_DECREF(v);
    return rc;
}

static PyObject *report_dict(const xf_optimize_options *o, const xf_optimize_report *r)
{
    PyObject *d = PyDict_New(), *applied = PyList_New(0);
    if (!d || !applied) goto fail;
    for (int i = 0; i < r->n_distinct; i++) {
        const xf_optimize_applied *a = &r->applied[i];
        /* a negative id is the rule applied in reverse (xf_ruleset_rule_id) */
        PyObject *t = Py_BuildValue(
            "{s:i,s:L,s:O,s:O,s:s}", "count", a->count, "rule_id",
            (long long)(a->rule_id < 0 ? -a->rule_id : a->rule_id), "reversed",
            a->rule_id < 0 ? Py_True : Py_False, "backward", a->backward ? Py_True : Py_False,
            "text", a->text ? a->text : "");
        if (!t || PyList_Append(applied, t)) {
            Py_XDECREF(t);
            goto fail;
        }
        Py_DECREF(t);
    }
    int measured = r->latency_state > 0;
    /* with the target: the arbiter's verdict on what was written, and its
     * confirmed ratio against the input (None when the input was kept) */
    const xf_arbiter_entry *chosen =
        r->target && r->arb.n > 0 && r->arb.chosen > 0 ? &r->arb.e[r->arb.chosen] : NULL;
    const char *verdict = !r->target || r->arb.n == 0 ? ""
                          : chosen ? xf_optimize_verdict_name(chosen->verdict)
                                   : "input kept";
    if (put(d, "rules", PyUnicode_DecodeFSDefault(o->rules)) ||
        put(d, "nodes_before", PyLong_FromLong(r->nodes_before)) ||
        put(d, "nodes_after", PyLong_FromLong(r->nodes_after)) ||
        put(d, "cost_before_ms", PyFloat_FromDouble(r->cost_before)) ||
        put(d, "cost_after_ms", PyFloat_FromDouble(r->cost_after)) ||
        put(d, "latency_before_ms",
            measured ? PyFloat_FromDouble(r->latency_before) : Py_NewRef(Py_None)) ||
        put(d, "latency_after_ms",
            measured ? PyFloat_FromDouble(r->latency_after) : Py_NewRef(Py_None)) ||
        put(d, "latency_noise", measured ? PyFloat_FromDouble(r->latency_spread)
                                         : Py_NewRef(Py_None)) ||
        put(d, "latency_on", PyUnicode_FromString(measured ? r->latency_identity
                                                   : r->latency_state < 0 ? r->latency_error
                                                                          : "")) ||
        put(d, "kept_original", PyBool_FromLong(r->kept_original)) ||
        put(d, "max_abs_error",
            r->check.max_abs >= 0 ? PyFloat_FromDouble(r->check.max_abs) : Py_NewRef(Py_None)) ||
        put(d, "actions", PyLong_FromLong(r->actions)) ||
        put(d, "applicable", PyLong_FromLong(r->applicable)) ||
        put(d, "applied", Py_NewRef(applied)) ||
        put(d, "n_applied", PyLong_FromLong(r->n_applied)) ||
        put(d, "target", PyUnicode_FromString(r->target ? r->target_identity : "")) ||
        put(d, "target_refused", PyUnicode_FromString(r->target_refused)) ||
        put(d, "verdict", PyUnicode_FromString(verdict)) ||
        put(d, "target_ratio", chosen ? PyFloat_FromDouble(chosen->confirm.ratio)
                                      : Py_NewRef(Py_None)) ||
        put(d, "cost_model", PyUnicode_FromString(r->cost_identity)) ||
        put(d, "seconds", PyFloat_FromDouble(r->seconds)))
        goto fail;
    Py_DECREF(applied);
    return d;
fail:
    Py_XDECREF(applied);
    Py_XDECREF(d);
    return NULL;
}

/* ------------------------------------------------------------ methods */

/* optimize_file(input, output, options: dict) -> report dict */
static PyObject *py_optimize_file(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *in_b = NULL, *out_b = NULL, *opts;
    if (!PyArg_ParseTuple(args, "O&O&O!", PyUnicode_FSConverter, &in_b, PyUnicode_FSConverter,
                          &out_b, &PyDict_Type, &opts)) {
        Py_XDECREF(in_b);
        return NULL;
    }
    held h;
    memset(&h, 0, sizeof h);
    xf_optimize_options o = xf_optimize_options_default();
    o.agent = XF_OPTIMIZE_SEARCH;
    o.search = XF_SEARCH_TASO;
    PyObject *key, *val, *res = NULL;
    Py_ssize_t pos = 0;
    while (PyDict_Next(opts, &pos, &key, &val)) {
        const char *k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
        if (!k) {
            PyErr_SetString(PyExc_TypeError, "rlflow: option names are strings");
            goto done;
        }
        if (val != Py_None && set_option(&h, &o, k, val)) goto done;
    }
    if (!o.rules) {
        PyErr_SetString(PyExc_ValueError, "rlflow: no rules database (the package passes one)");
        goto done;
    }
    o.note = note;
    o.user = &h.verbose;
    if (h.verbose) o.search_progress = search_progress;
    xf_optimize_report r;
    xf_optimize_report_init(&r);
    xf_error err = {0};
    xf_status st;
    const char *in = PyBytes_AS_STRING(in_b), *out = PyBytes_AS_STRING(out_b);
    Py_BEGIN_ALLOW_THREADS
    rlx_lock();
    st = xf_optimize_file(in, out, &o, &r, &err);
    rlx_unlock();
    Py_END_ALLOW_THREADS
    if (h.verbose) fprintf(stderr, "\n");
    if (st != XF_OK)
        PyErr_SetString(r.input_error ? rlx_input_error : rlx_error, err.msg);
    else
        res = report_dict(&o, &r);
    xf_optimize_report_free(&r);
done:
    for (int i = 0; i < h.n; i++) Py_DECREF(h.refs[i]);
    Py_DECREF(in_b);
    Py_DECREF(out_b);
    return res;
}

static void rules_progress(void *user, const char *line)
{
    (void)user;
    if (*line) fprintf(stderr, "rlflow: %s\n", line);
}

/* default_rules(dirs: list of str, make: bool, max_ops: int) -> (path, origin) */
static PyObject *py_default_rules(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *dirs;
    int make = 1, max_ops = 0;
    if (!PyArg_ParseTuple(args, "O!|pi", &PyList_Type, &dirs, &make, &max_ops)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(dirs);
    if (n > 8) {
        PyErr_SetString(PyExc_ValueError, "rlflow: at most 8 directories");
        return NULL;
    }
    held h;
    memset(&h, 0, sizeof h);
    const char *d[8];
    PyObject *res = NULL;
    for (Py_ssize_t i = 0; i < n; i++)
        if (!(d[i] = str_of(&h, PyList_GET_ITEM(dirs, i), "dirs"))) goto done;
    xf_default_rules_options o;
    xf_default_rules_options_init(&o);
    o.dirs = d;
    o.n_dirs = (int)n;
    o.make = make;
    o.max_ops = max_ops;
    o.progress = rules_progress;
    char path[4096];
    xf_default_rules_origin origin = XF_DEFAULT_RULES_FOUND;
    xf_error err = {0};
    xf_status st;
    Py_BEGIN_ALLOW_THREADS
    rlx_lock();
    st = xf_default_rules_find(&o, path, sizeof path, &origin, &err);
    rlx_unlock();
    Py_END_ALLOW_THREADS
    if (st != XF_OK) {
        PyErr_Format(rlx_error, "the default rules database: %s", err.msg);
        goto done;
    }
    static const char *const how[] = {"package", "cache", "made"};
    res = Py_BuildValue("(Ns)", PyUnicode_DecodeFSDefault(path), how[origin]);
done:
    for (int i = 0; i < h.n; i++) Py_DECREF(h.refs[i]);
    return res;
}

static PyMethodDef methods[] = {
    {"optimize_file", py_optimize_file, METH_VARARGS,
     "optimize_file(input, output, options) -> report dict (rlflow.optimize wraps it)"},
    {"default_rules", py_default_rules, METH_VARARGS,
     "default_rules(dirs, make=True, max_ops=0) -> (path, origin)"},
    {"rules_view", rlx_rules_view, METH_VARARGS,
     "rules_view(db, view, id, ops, status, max_size, limit) -> str (rlflow.Rules wraps it)"},
    {"ort_diff", rlx_ort_diff, METH_VARARGS,
     "ort_diff(a, b, seed=1, threads=1) -> {max_abs, max_rel, runtime} (rlflow.compare_in_ort)"},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "rlflow._rlflow",
                                    "The C side of the rlflow package (docs/python.md).", -1,
                                    methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__rlflow(void)
{
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    rlx_error = PyErr_NewExceptionWithDoc("rlflow.Error",
                                          "A failure of the rlflow library, with its message.",
                                          PyExc_RuntimeError, NULL);
    rlx_input_error = rlx_error ? PyErr_NewExceptionWithDoc(
                                      "rlflow.InputError",
                                      "An input (model, rules, option) could not be used.",
                                      rlx_error, NULL)
                                : NULL;
    if (!rlx_input_error || PyModule_AddObjectRef(m, "Error", rlx_error) ||
        PyModule_AddObjectRef(m, "InputError", rlx_input_error) ||
        PyModule_AddIntConstant(m, "DEFAULT_RULES_OPS", XF_DEFAULT_RULES_OPS)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
