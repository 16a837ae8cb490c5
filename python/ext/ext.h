/*
 * ext.h — (private to the extension) what module.c and rules.c share: the
 * package's exception types and the audit views' method.
 */
#ifndef XF_PYTHON_EXT_EXT_H
#define XF_PYTHON_EXT_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

extern PyObject *rlx_error, *rlx_input_error;

/* The library keeps process-wide state while a call runs (the files a run
 * must not write over, ir's xf_outfile_protect; the memory limit; signal
 * handlers) and is made for one call at a time, as a tool makes it. Every
 * call into it takes this lock, after the GIL is released (so a thread
 * waiting for it does not hold the GIL): calls from several Python threads
 * run one after the other. Each optimisation forgets the files it
 * registered when it returns (xf_outfile_protect_release), so a long-lived
 * process can call it again and again. */
void rlx_lock(void);
void rlx_unlock(void);

/* rules_view(db, view, id, ops, status, max_size, limit) -> str */
PyObject *rlx_rules_view(PyObject *self, PyObject *args);
/* ort_diff(a, b, seed=1, threads=1) -> {max_abs, max_rel, runtime} */
PyObject *rlx_ort_diff(PyObject *self, PyObject *args);

#endif
