/*
 * sizes.c — xf_onnx_sizes (onnx.h): a size for every symbolic input dim of
 * a model, so that a user who gives none still gets a model that imports
 * and runs.
 *
 * A symbol takes, in this order: the size the options give (--dim); its
 * size in the data's input tensors (an ONNX test_data_set: the tensor of
 * input k is input_<k>.pb, as xfonnx run --data reads them); 1 when the
 * model imports with every remaining symbol at 1; else the result of a
 * size search: every remaining symbol at 2, 4, 8 ... 4096 until the model
 * imports, then each lowered in turn to the smallest power of two at which
 * it still does. A power of two is a multiple of the total stride of the
 * usual convolution backbone (8, 16, 32), which is what the probes of the
 * written model (dynamic.c: x2, x3) then scale. The choice is said in one
 * line (xf_onnx_sizes_said).
 */
#include "dynamic_internal.h"

#include <stdio.h>
#include <string.h>

/* The largest size the search tries. */
#define SEARCH_MAX 4096

enum { FROM_GIVEN = 1, FROM_DATA = 2, FROM_ONE = 3, FROM_SEARCH = 4 };

struct xf_onnx_sizes {
    xf_onnx_dynamic *d; /* the symbols (names, where they are) */
    xf_onnx_options opts;
    int64_t *values;
    int *from;
    char said[2048];
};

void xf_onnx_sizes_free(xf_onnx_sizes *s)
{
    if (!s) return;
    xf_onnx_dynamic_free(s->d);
    xf_free(s->values);
    xf_free(s->from);
    xf_free(s);
}

xf_onnx_options xf_onnx_sizes_options(const xf_onnx_sizes *s)
{
    return s->opts;
}

const char *xf_onnx_sizes_said(const xf_onnx_sizes *s)
{
    return s->said;
}

/* Sizes from the data: every symbol not given that a graph input of the
 * data has. */
static xf_status from_data(xf_onnx_sizes *s, const char *dir, xf_error *err)
{
    const xf_onnx_dynamic *d = s->d;
    int last_input = -1;
    for (int a = 0; a < d->n_inputs; a++) last_input = d->inputs[a].input > last_input
                                                            ? d->inputs[a].input
                                                            : last_input;
    for (int k = 0; k <= last_input; k++) {
        int wanted = 0;
        for (int a = 0; a < d->n_inputs; a++)
            wanted |= d->inputs[a].input == k && s->from[d->inputs[a].sym] != FROM_GIVEN;
        if (!wanted) continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/input_%d.pb", dir, k);
        xf_tensor t;
        xf_status st = xf_onnx_load_tensor(path, &t, NULL, err);
        if (st != XF_OK) return st;
        for (int a = 0; a < d->n_inputs && st == XF_OK; a++) {
            const dyn_at *at = &d->inputs[a];
            if (at->input != k || s->from[at->sym] == FROM_GIVEN) continue;
            if (at->axis >= t.shape.rank || t.shape.dims[at->axis] < 1) {
                char sh[128];
                st = XF_FAIL(err, XF_ERR_SHAPE,
                             "%s: shape %s has no size for dim %d of input '%s' ('%s')", path,
                             xf_shape_str(&t.shape, sh, sizeof sh), at->axis, at->value,
                             d->names[at->sym]);
            } else if (s->from[at->sym] == FROM_DATA &&
                       s->values[at->sym] != t.shape.dims[at->axis]) {
                st = XF_FAIL(err, XF_ERR_SHAPE,
                             "%s: dim %d of input '%s' is %lld, but '%s' is %lld in an input "
                             "before it",
                             path, at->axis, at->value, (long long)t.shape.dims[at->axis],
                             d->names[at->sym], (long long)s->values[at->sym]);
            } else {
                s->values[at->sym] = t.shape.dims[at->axis];
                s->from[at->sym] = FROM_DATA;
            }
        }
        xf_tensor_free(&t);
        if (st != XF_OK) return st;
    }
    return XF_OK;
}

typedef struct model_bytes {
    const uint8_t *buf;
    size_t len;
    const char *path, *dir;
} model_bytes;

/* Whether the model imports at the sizes of s; hard failures (memory) are
 * returned, the importer's message on a refusal kept in *why. */
static xf_status imports(const xf_onnx_sizes *s, const model_bytes *m, int *ok, xf_error *why)
{
    xf_graph g;
    xf_status st = xf_onnx_load_buffer(m->buf, m->len, m->path, m->dir, &s->opts, &g, why);
    *ok = st == XF_OK;
    if (st == XF_OK) xf_graph_free(&g);
    return st == XF_ERR_NOMEM ? st : XF_OK;
}

/* Sets every symbol still to be chosen to v. */
static void set_open(xf_onnx_sizes *s, int64_t v)
{
    for (int i = 0; i < s->d->n_sym; i++)
        if (s->from[i] >= FROM_ONE) s->values[i] = v;
}

/* The size search over the symbols neither given nor in the data. */
static xf_status search(xf_onnx_sizes *s, const model_bytes *m, xf_error *err)
{
    int n_open = 0, ok = 0;
    for (int i = 0; i < s->d->n_sym; i++)
        if (!s->from[i]) s->from[i] = FROM_ONE, n_open++;
    if (!n_open) return XF_OK;
    xf_error why, at1;
    xf_error_clear(&why);
    xf_error_clear(&at1);
    int64_t c = 1;
    for (; c <= SEARCH_MAX && !ok; c *= 2) {
        set_open(s, c);
        if (imports(s, m, &ok, &why) != XF_OK) return XF_FAIL(err, XF_ERR_NOMEM, "%s", why.msg);
        if (c == 1) at1 = why;
    }
    c /= 2;
    if (!ok && strcmp(at1.msg, why.msg) == 0)
        return XF_FAIL(err, why.code, "%s (at every size of its symbolic dims from 1 to %d)",
                       why.msg, SEARCH_MAX);
    if (!ok)
        return XF_FAIL(err, XF_ERR_SHAPE,
                       "%s: the model imports at no size of its symbolic dims from 1 to %d "
                       "(at 1: %s; at %d: %s); give them with --dim NAME=N",
                       m->path, SEARCH_MAX, at1.msg, SEARCH_MAX, why.msg);
    if (c == 1) return XF_OK;
    for (int i = 0; i < s->d->n_sym; i++) {
        if (s->from[i] != FROM_ONE) continue;
        s->from[i] = FROM_SEARCH;
        for (int64_t v = 1; v < c; v *= 2) {
            s->values[i] = v;
            if (imports(s, m, &ok, &why) != XF_OK)
                return XF_FAIL(err, XF_ERR_NOMEM, "%s", why.msg);
            if (ok) break;
        }
        if (!ok) s->values[i] = c;
    }
    return XF_OK;
}

/* "A=1, B=2 (why)" for the symbols from `from`, appended to s->said. */
static void say(xf_onnx_sizes *s, int from, const char *why)
{
    size_t n = strlen(s->said);
    int any = 0;
    for (int i = 0; i < s->d->n_sym; i++) {
        if (s->from[i] != from) continue;
        snprintf(s->said + n, sizeof s->said - n, "%s%s=%lld", n ? (any ? ", " : "; ") : "",
                 s->d->names[i], (long long)s->values[i]);
        n = strlen(s->said);
        any = 1;
    }
    if (any) snprintf(s->said + n, sizeof s->said - n, " (%s)", why);
}

static xf_status choose(xf_onnx_sizes *s, const model_bytes *m, const xf_onnx_options *given,
                        const char *data_dir, xf_error *err)
{
    xf_onnx_dynamic *d = s->d;
    size_t n = (size_t)d->n_sym + 1;
    s->values = xf_calloc(n, sizeof *s->values);
    s->from = xf_calloc(n, sizeof *s->from);
    if (!s->values || !s->from) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
    s->opts = given ? *given : xf_onnx_default_options();
    s->opts.n_dim_overrides = d->n_sym;
    s->opts.dim_names = d->names;
    s->opts.dim_values = s->values;
    for (int i = 0; i < d->n_sym; i++)
        for (int k = 0; given && k < given->n_dim_overrides; k++)
            if (given->dim_names && given->dim_values && given->dim_names[k] &&
                strcmp(given->dim_names[k], d->names[i]) == 0) {
                s->values[i] = given->dim_values[k];
                s->from[i] = FROM_GIVEN;
            }
    xf_status st = data_dir ? from_data(s, data_dir, err) : XF_OK;
    if (st == XF_OK) st = search(s, m, err);
    if (st != XF_OK) return st;
    char data[4200];
    snprintf(data, sizeof data, "from %s", data_dir ? data_dir : "");
    say(s, FROM_DATA, data);
    say(s, FROM_ONE, "not given: the model imports with 1");
    say(s, FROM_SEARCH, "not given: the smallest powers of two at which the model imports");
    if (s->said[0]) say(s, FROM_GIVEN, "given");
    if (s->said[0]) {
        char line[2048];
        snprintf(line, sizeof line, "sizes of the symbolic dims: %s; --dim NAME=N sets one",
                 s->said);
        snprintf(s->said, sizeof s->said, "%s", line);
    }
    return XF_OK;
}

xf_status xf_onnx_sizes_choose(const char *path, const xf_onnx_options *given,
                               const char *data_dir, xf_onnx_sizes **out, xf_error *err)
{
    *out = NULL;
    uint8_t *buf = NULL;
    size_t len = 0;
    xf_status st = ox_read_file(path, &buf, &len, err);
    if (st != XF_OK) return st;
    char *dir = ox_dirname(path);
    xf_onnx_sizes *s = xf_calloc(1, sizeof *s);
    if (!dir || !s) st = XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", path);
    if (st == XF_OK) st = ox_dyn_read(buf, len, path, &s->d, err);
    model_bytes m = {buf, len, path, dir};
    if (st == XF_OK) st = choose(s, &m, given, data_dir, err);
    xf_free(dir);
    xf_free(buf);
    if (st != XF_OK) {
        xf_onnx_sizes_free(s);
        return st;
    }
    *out = s;
    return XF_OK;
}
