/*
 * ext.h — (private to the extension) what module.c and rules.c share: the
 * package's exception types and the audit views' method.
 */
#ifndef XF_PYTHON_EXT_EXT_H
#define XF_PYTHON_EXT_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

extern PyObject *rlx_error, *rlx_input_error;

/* rules_view(db, view, id, ops, status, max_size, limit) -> str */
PyObject *rlx_rules_view(PyObject *self, PyObject *args);
/* ort_diff(a, b, seed=1, threads=1) -> {max_abs, max_rel, runtime} */
PyObject *rlx_ort_diff(PyObject *self, PyObject *args);

#endif
