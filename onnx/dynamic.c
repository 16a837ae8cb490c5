/*
 * dynamic.c — xf_onnx_dynamic (onnx.h): the symbolic dims of a model, the
 * three sizes of each at which it is checked, and the original's value
 * shapes at the probes the exporter needs (see dynamic_internal.h).
 *
 * Symbols are the graph inputs' dims that are named, unnamed or declared 0
 * (the importer's rule, imp_dim_symbolic), in order of first appearance.
 * The other two sizes of a symbol are found by importing the model with
 * that symbol moved (the others at point 0): the first two candidates that
 * import are taken, and the shapes of that import are the probe's. Sizes
 * the model rejects (a detector whose height must be a multiple of 32
 * fails to import at +1: its upsampled features no longer add up) are so
 * skipped without knowing the model. A symbol the model admits at no two
 * other sizes (a batch dim declared symbolic over Reshape targets baked at
 * batch 1) is not dynamic as far as the model goes: it is written fixed,
 * with a warning, and its sizes at the three points are equal.
 */
#include "dynamic_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { POINTS = XF_ONNX_POINTS };

void xf_onnx_dynamic_free(xf_onnx_dynamic *d)
{
    if (!d) return;
    for (int k = 0; d->probes && k <= 2 * d->n_sym; k++) {
        imp_map_free(&d->probes[k].index);
        xf_free(d->probes[k].shapes);
    }
    xf_free(d->probes);
    xf_free(d->names);
    xf_free(d->fixed);
    xf_free(d->sizes);
    xf_free(d->point_values);
    xf_free(d->inputs);
    xf_free(d->outputs);
    xf_arena_free(&d->arena);
    xf_free(d);
}

int xf_onnx_dynamic_count(const xf_onnx_dynamic *d)
{
    return d ? d->n_sym : 0;
}

const char *xf_onnx_dynamic_name(const xf_onnx_dynamic *d, int sym)
{
    return d->names[sym];
}

int xf_onnx_dynamic_points(const xf_onnx_dynamic *d)
{
    for (int s = 0; s < xf_onnx_dynamic_count(d); s++)
        if (!d->fixed[s]) return POINTS;
    return 1;
}

const char *xf_onnx_dynamic_fixed(const xf_onnx_dynamic *d, int sym)
{
    return d->fixed[sym];
}

int64_t xf_onnx_dynamic_size(const xf_onnx_dynamic *d, int sym, int point)
{
    return d->sizes[sym * POINTS + point];
}

int64_t xf_onnx_dyn_probe_size(const xf_onnx_dynamic *d, int sym, int k)
{
    return xf_onnx_dynamic_size(d, sym, sym == k / 2 ? 1 + k % 2 : 0);
}

const xf_shape *xf_onnx_dyn_probe_shape(const xf_onnx_dynamic *d, int k, const char *name,
                                        const xf_shape *at0)
{
    if (!name || !name[0]) return NULL;
    const dyn_probe *p0 = &d->probes[2 * d->n_sym], *pk = &d->probes[k];
    int e0 = imp_map_get(&p0->index, name), e = imp_map_get(&pk->index, name);
    if (e0 < 0 || e < 0 || !xf_shape_equal(&p0->shapes[e0], at0)) return NULL;
    return &pk->shapes[e];
}

xf_onnx_options xf_onnx_dynamic_options(const xf_onnx_dynamic *d, int point)
{
    xf_onnx_options o = d->opts;
    o.n_dim_overrides = d->n_sym;
    o.dim_names = d->names;
    o.dim_values = d->point_values + (size_t)point * (size_t)d->n_sym;
    return o;
}

/* ----------------------------------------------------------- the symbols */

static int find_sym(const xf_onnx_dynamic *d, const char *name)
{
    for (int i = 0; i < d->n_sym; i++)
        if (strcmp(d->names[i], name) == 0) return i;
    return -1;
}

static int tensor_shape_of(const Onnx__ValueInfoProto *vi)
{
    return vi->type && vi->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
           vi->type->tensor_type && vi->type->tensor_type->shape;
}

/* Symbols of the graph inputs (those without an initializer) and the
 * named dims of the graph outputs. */
static xf_status read_symbols(xf_onnx_dynamic *d, const Onnx__GraphProto *gp, xf_error *err)
{
    size_t n_dims = 0;
    for (size_t i = 0; i < gp->n_input; i++)
        if (tensor_shape_of(gp->input[i])) n_dims += gp->input[i]->type->tensor_type->shape->n_dim;
    for (size_t i = 0; i < gp->n_output; i++)
        if (tensor_shape_of(gp->output[i])) n_dims += gp->output[i]->type->tensor_type->shape->n_dim;
    d->names = xf_calloc(n_dims + 1, sizeof *d->names);
    d->inputs = xf_calloc(n_dims + 1, sizeof *d->inputs);
    d->outputs = xf_calloc(n_dims + 1, sizeof *d->outputs);
    if (!d->names || !d->inputs || !d->outputs) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        int has_init = 0;
        for (size_t k = 0; k < gp->n_initializer && !has_init; k++)
            has_init = strcmp(imp_str(gp->initializer[k]->name), imp_str(vi->name)) == 0;
        if (has_init || !tensor_shape_of(vi)) continue;
        for (size_t a = 0; a < vi->type->tensor_type->shape->n_dim; a++) {
            if (!imp_dim_symbolic(vi->type->tensor_type->shape->dim[a])) continue;
            char nm[IMP_DIM_NAME_MAX];
            imp_dim_name(vi, (int)a, nm, sizeof nm);
            int s = find_sym(d, nm);
            if (s < 0) {
                s = d->n_sym;
                d->names[d->n_sym++] = xf_arena_strdup(&d->arena, nm);
            }
            dyn_at *at = &d->inputs[d->n_inputs++];
            at->value = xf_arena_strdup(&d->arena, imp_str(vi->name));
            at->axis = (int)a;
            at->sym = s;
            at->name = d->names[s];
            if (!at->value || !at->name) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
        }
    }
    for (size_t i = 0; i < gp->n_output; i++) {
        const Onnx__ValueInfoProto *vi = gp->output[i];
        if (!tensor_shape_of(vi)) continue;
        for (size_t a = 0; a < vi->type->tensor_type->shape->n_dim; a++) {
            const Onnx__TensorShapeProto__Dimension *dim = vi->type->tensor_type->shape->dim[a];
            if (dim->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ||
                !dim->dim_param || !dim->dim_param[0])
                continue;
            dyn_at *at = &d->outputs[d->n_outputs++];
            at->value = xf_arena_strdup(&d->arena, imp_str(vi->name));
            at->axis = (int)a;
            at->sym = find_sym(d, dim->dim_param);
            at->name = xf_arena_strdup(&d->arena, dim->dim_param);
            if (!at->value || !at->name) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
        }
    }
    return XF_OK;
}

/* Point-0 sizes from the options (else 1). */
static void initial_sizes(xf_onnx_dynamic *d, const xf_onnx_options *opts)
{
    for (int s = 0; s < d->n_sym; s++) {
        int64_t v = 1;
        for (int i = 0; opts && i < opts->n_dim_overrides; i++)
            if (opts->dim_names && opts->dim_values && opts->dim_names[i] &&
                strcmp(opts->dim_names[i], d->names[s]) == 0)
                v = opts->dim_values[i];
        for (int p = 0; p < POINTS; p++) d->sizes[s * POINTS + p] = v;
    }
}

static void fill_point_values(xf_onnx_dynamic *d)
{
    for (int p = 0; p < POINTS; p++)
        for (int s = 0; s < d->n_sym; s++)
            d->point_values[p * d->n_sym + s] = d->sizes[s * POINTS + p];
}

/* Records the shape of every named value of g as probe k's. */
static xf_status record_probe(xf_onnx_dynamic *d, int k, const xf_graph *g, xf_error *err)
{
    dyn_probe *pr = &d->probes[k];
    pr->shapes = xf_malloc(sizeof *pr->shapes * ((size_t)g->n_values + 1));
    if (!pr->shapes) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
    for (int v = 0; v < g->n_values; v++) {
        const char *nm = g->values[v].name;
        if (!nm || !nm[0] || imp_map_get(&pr->index, nm) >= 0) continue;
        const char *key = xf_arena_strdup(&d->arena, nm);
        if (!key) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
        if (imp_map_put(&pr->index, key, pr->n, err) != XF_OK) return err->code;
        pr->shapes[pr->n++] = g->values[v].shape;
    }
    return XF_OK;
}

/* Candidate sizes after s, in the order tried. */
static int candidates(int64_t s, int64_t *c)
{
    static const int64_t add[] = {1, 2, 4, 8, 16, 32}, mul[] = {2, 3, 4};
    int n = 0;
    for (size_t i = 0; i < sizeof add / sizeof add[0]; i++) c[n++] = s + add[i];
    for (size_t i = 0; i < sizeof mul / sizeof mul[0]; i++) {
        int dup = 0;
        for (int j = 0; j < n; j++) dup |= c[j] == s * mul[i];
        if (!dup && s > 0) c[n++] = s * mul[i];
    }
    return n;
}

/* The two other sizes of symbol `sym`, each the first candidate at which
 * the model imports; the imports give the symbol's probes. */
static xf_status pick_sizes(xf_onnx_dynamic *d, int sym, const void *buf, size_t len,
                            const char *name, const char *base_dir, xf_error *err)
{
    int64_t c[16];
    int nc = candidates(d->sizes[sym * POINTS], c), found = 0;
    char tried[256] = "";
    xf_error last;
    xf_error_clear(&last);
    /* point 0 with this symbol moved (the scratch row of point 1) */
    int64_t *vals = d->point_values + d->n_sym;
    for (int s = 0; s < d->n_sym; s++) vals[s] = d->sizes[s * POINTS];
    xf_onnx_options o = xf_onnx_dynamic_options(d, 1);
    for (int i = 0; i < nc && found < 2; i++) {
        vals[sym] = c[i];
        d->sizes[sym * POINTS + 1 + found] = c[i];
        xf_graph g;
        if (xf_onnx_load_buffer(buf, len, name, base_dir, &o, &g, &last) != XF_OK) {
            if (last.code == XF_ERR_NOMEM) return XF_FAIL(err, XF_ERR_NOMEM, "%s", last.msg);
            size_t n = strlen(tried);
            snprintf(tried + n, sizeof tried - n, "%s%lld", n ? ", " : "", (long long)c[i]);
            continue;
        }
        xf_status st = record_probe(d, sym * 2 + found, &g, err);
        xf_graph_free(&g);
        if (st != XF_OK) return st;
        found++;
    }
    if (found < 2) {
        /* not dynamic as far as the model goes: written fixed, and said so */
        char why[1024];
        snprintf(why, sizeof why,
                 "the model imports at %s other size among those tried (%s: %s)",
                 found ? "only one" : "no", tried, last.msg);
        d->fixed[sym] = xf_arena_strdup(&d->arena, why);
        if (!d->fixed[sym]) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
        xf_log(XF_LOG_WARN, "%s: symbolic dimension '%s' is written fixed at %lld: %s", name,
               d->names[sym], (long long)d->sizes[sym * POINTS], why);
        for (int p = 1; p < POINTS; p++) d->sizes[sym * POINTS + p] = d->sizes[sym * POINTS];
        imp_map_free(&d->probes[sym * 2].index);
        imp_map_free(&d->probes[sym * 2 + 1].index);
        xf_free(d->probes[sym * 2].shapes);
        xf_free(d->probes[sym * 2 + 1].shapes);
        memset(&d->probes[sym * 2], 0, 2 * sizeof *d->probes);
    }
    return XF_OK;
}

/* The original's shapes at point 0, against which a value of a rewritten
 * graph is recognised as the original's (same name, same shape). */
static xf_status record_point0(xf_onnx_dynamic *d, const void *buf, size_t len, const char *name,
                               const char *base_dir, xf_error *err)
{
    xf_onnx_options o = xf_onnx_dynamic_options(d, 0);
    xf_graph g;
    xf_status st = xf_onnx_load_buffer(buf, len, name, base_dir, &o, &g, err);
    if (st != XF_OK) return st;
    st = record_probe(d, 2 * d->n_sym, &g, err);
    xf_graph_free(&g);
    return st;
}

xf_status xf_onnx_dynamic_open(const void *buf, size_t len, const char *name, const char *base_dir,
                               const xf_onnx_options *opts, xf_onnx_dynamic **out,
                               xf_error *err)
{
    *out = NULL;
    if (!name) name = "<memory>";
    xf_onnx_dynamic *d = xf_calloc(1, sizeof *d);
    if (!d) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
    xf_arena_init(&d->arena, 0);
    d->opts = opts ? *opts : xf_onnx_default_options();
    d->opts.n_dim_overrides = 0;
    imp_pb_alloc pa;
    imp_pb_alloc_init(&pa);
    int too_deep = 0;
    Onnx__ModelProto *model = imp_pb_unpack_model(&pa, len, buf, &too_deep);
    xf_status st = XF_OK;
    if (too_deep)
        st = XF_FAIL(err, XF_ERR_PARSE, "%s: its messages nest deeper than %d levels: refused "
                                        "before decoding",
                     name, IMP_PB_MAX_DEPTH);
    else if (!model || !model->graph)
        st = XF_FAIL(err, pa.failed ? XF_ERR_NOMEM : XF_ERR_PARSE,
                     "%s: not a valid ONNX model (protobuf decoding failed or no graph)", name);
    else
        st = read_symbols(d, model->graph, err);
    if (model) onnx__model_proto__free_unpacked(model, &pa.base);
    if (st == XF_OK) {
        size_t n = (size_t)d->n_sym * POINTS + 1;
        d->sizes = xf_calloc(n, sizeof *d->sizes);
        d->point_values = xf_calloc(n, sizeof *d->point_values);
        d->probes = xf_calloc(2 * (size_t)d->n_sym + 1, sizeof *d->probes); /* + point 0 */
        d->fixed = xf_calloc((size_t)d->n_sym + 1, sizeof *d->fixed);
        if (!d->sizes || !d->point_values || !d->probes || !d->fixed)
            st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
    }
    if (st == XF_OK) {
        initial_sizes(d, opts);
        for (int k = 0; k <= 2 * d->n_sym; k++) imp_map_init(&d->probes[k].index);
        /* each symbol is moved alone, the others staying at point 0 */
        for (int s = 0; s < d->n_sym && st == XF_OK; s++)
            st = pick_sizes(d, s, buf, len, name, base_dir, err);
        fill_point_values(d);
        if (st == XF_OK && d->n_sym > 0) st = record_point0(d, buf, len, name, base_dir, err);
    }
    if (st != XF_OK) {
        xf_onnx_dynamic_free(d);
        return st;
    }
    *out = d;
    return XF_OK;
}

xf_status xf_onnx_dynamic_open_file(const char *path, const xf_onnx_options *opts,
                                    xf_onnx_dynamic **out, xf_error *err)
{
    *out = NULL;
    uint8_t *buf = NULL;
    size_t len = 0;
    xf_status st = imp_read_file(path, &buf, &len, err);
    if (st != XF_OK) return st;
    char *dir = imp_dirname(path);
    if (!dir) st = XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", path);
    else st = xf_onnx_dynamic_open(buf, len, path, dir, opts, out, err);
    xf_free(dir);
    xf_free(buf);
    return st;
}

xf_status xf_onnx_read_file(const char *path, uint8_t **buf, size_t *len, xf_error *err)
{
    return imp_read_file(path, buf, len, err);
}

void xf_onnx_dynamic_describe(const xf_onnx_dynamic *d, int point, char *buf, size_t n)
{
    if (n) buf[0] = '\0';
    for (int s = 0; s < xf_onnx_dynamic_count(d); s++) {
        size_t k = strlen(buf);
        snprintf(buf + k, n - k, "%s%s=%lld", s ? ", " : "", d->names[s],
                 (long long)xf_onnx_dynamic_size(d, s, point));
    }
}
