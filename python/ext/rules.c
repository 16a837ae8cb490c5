/*
 * rules.c — rlflow.Rules's views of a rules database: the audit module's
 * views (audit.h: stats, list, families, show, explain), which write to a
 * FILE*, run into a temporary file (tmpfile(3), so nothing is allocated
 * outside the library's hook) and handed back as one str. A view that
 * fails, or fails on some rules (a rule id that does not exist), raises
 * rlflow.Error with the audit module's messages.
 */
#include "ext.h"

#include <stdio.h>
#include <string.h>

#include "audit/audit.h"
#include "rulesdb/rulesdb.h"

/* The first diagnostic of a view, for the exception. */
typedef struct diag {
    char msg[1024];
} diag;

static void on_diag(void *user, const xf_error *e)
{
    diag *d = user;
    if (!d->msg[0]) snprintf(d->msg, sizeof d->msg, "%s", e->msg);
}

/* The text written to f since its start, as a str. */
static PyObject *read_back(FILE *f)
{
    long len = ftell(f);
    if (len < 0 || fseek(f, 0, SEEK_SET) != 0)
        return PyErr_Format(rlx_error, "rlflow: reading a view back failed");
    PyObject *b = PyBytes_FromStringAndSize(NULL, len);
    if (!b) return NULL;
    if (fread(PyBytes_AS_STRING(b), 1, (size_t)len, f) != (size_t)len) {
        Py_DECREF(b);
        return PyErr_Format(rlx_error, "rlflow: reading a view back failed");
    }
    PyObject *s = PyUnicode_DecodeUTF8(PyBytes_AS_STRING(b), len, "replace");
    Py_DECREF(b);
    return s;
}

PyObject *rlx_rules_view(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *db_b = NULL;
    const char *view_name, *id = NULL, *ops = NULL, *status = NULL;
    int max_size = 0;
    long long limit = 0;
    if (!PyArg_ParseTuple(args, "O&s|zzziL", PyUnicode_FSConverter, &db_b, &view_name, &id, &ops,
                          &status, &max_size, &limit))
        return NULL;
    PyObject *res = NULL;
    xf_rulesdb *db = NULL;
    FILE *f = NULL;
    xf_audit_view *view = xf_audit_find_view(view_name, 1);
    xf_audit_options o;
    memset(&o, 0, sizeof o);
    o.filter.any_status = 1;
    o.filter.max_size = max_size;
    o.filter.limit = limit;
    o.id = id;
    diag d = {{0}};
    o.diag = on_diag;
    o.diag_user = &d;
    xf_error err = {0};
    if (!view) {
        PyErr_Format(PyExc_ValueError, "rlflow: no view '%s' (stats, list, families, show, "
                                       "explain)", view_name);
        goto done;
    }
    if (status) {
        if (xf_rulesdb_status_parse(status, &o.filter.status, &err) != XF_OK) {
            PyErr_Format(PyExc_ValueError, "rlflow: %s", err.msg);
            goto done;
        }
        o.filter.any_status = 0;
    }
    if (ops) {
        if (strlen(ops) >= sizeof o.ops_buf) {
            PyErr_SetString(PyExc_ValueError, "rlflow: the operator list is too long");
            goto done;
        }
        strcpy(o.ops_buf, ops);
        for (char *tok = strtok(o.ops_buf, ","); tok; tok = strtok(NULL, ",")) {
            if (o.filter.n_ops == XF_AUDIT_MAX_OPS) {
                PyErr_SetString(PyExc_ValueError, "rlflow: at most 32 operators");
                goto done;
            }
            o.ops[o.filter.n_ops++] = tok;
        }
        o.filter.ops = o.ops;
    }
    if (xf_rulesdb_open(PyBytes_AS_STRING(db_b), XF_RULESDB_READONLY, &db, &err) != XF_OK) {
        PyErr_SetString(rlx_input_error, err.msg);
        goto done;
    }
    if (!(f = tmpfile())) {
        PyErr_SetFromErrno(PyExc_OSError);
        goto done;
    }
    int64_t failed = 0;
    xf_status st;
    Py_BEGIN_ALLOW_THREADS
    rlx_lock();
    st = view(f, db, &o, &failed, &err);
    rlx_unlock();
    Py_END_ALLOW_THREADS
    if (st != XF_OK)
        PyErr_SetString(st == XF_ERR_INVALID ? rlx_input_error : rlx_error, err.msg);
    else if (failed)
        PyErr_Format(rlx_error, "%s", d.msg[0] ? d.msg : "the view failed on some rules");
    else
        res = read_back(f);
done:
    if (f) fclose(f);
    xf_rulesdb_close(db);
    Py_DECREF(db_b);
    return res;
}
