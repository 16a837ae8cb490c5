/*
 * dynamic.c — xf_onnx_dynamic (onnx.h): the symbolic dims of a model, the
 * three sizes of each at which it is checked, and the original's value
 * shapes at the probes the exporter needs (see dynamic_internal.h).
 *
 * Symbols are the graph inputs' dims that are named, unnamed or declared 0
 * (the importer's rule, ox_dim_symbolic), in order of first appearance.
 * The other two sizes of a symbol are found by importing the model with
 * that symbol moved (the others at point 0): the first two candidates that
 * import are taken, and the shapes of that import are the probe's. The
 * candidates are far from the size imported at (x2, x3, x4, then /2, /4,
 * x1.5): a dim derived through strided convolutions and pools (width/4,
 * width/8) keeps its value over sizes one apart, so a size baked into a
 * parameter would pass a check there and fail at every other width; at
 * twice and three times the size every such dim moves. Sizes the model
 * rejects (a detector whose height must be a multiple of 32) are skipped
 * without knowing the model. A symbol the model admits at no two other
 * sizes (a batch dim declared symbolic over Reshape targets baked at batch
 * 1) is not dynamic as far as the model goes: it is written fixed, with a
 * warning, and its sizes at the three points are equal; so is a symbol
 * whose parameters cannot follow it in a written model (ox_dyn_fix,
 * called by the checked writer, write_checked.c).
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
        ox_map_free(&d->probes[k].index);
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

int64_t ox_dyn_probe_size(const xf_onnx_dynamic *d, int sym, int k)
{
    return xf_onnx_dynamic_size(d, sym, sym == k / 2 ? 1 + k % 2 : 0);
}

const xf_shape *ox_dyn_probe_shape(const xf_onnx_dynamic *d, int k, const char *name,
                                        const xf_shape *at0)
{
    if (!name || !name[0]) return NULL;
    const dyn_probe *p0 = &d->probes[2 * d->n_sym], *pk = &d->probes[k];
    int e0 = ox_map_get(&p0->index, name), e = ox_map_get(&pk->index, name);
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
    int position = 0; /* among the inputs without an initializer */
    for (size_t i = 0; i < gp->n_input; i++) {
        const Onnx__ValueInfoProto *vi = gp->input[i];
        int has_init = 0;
        for (size_t k = 0; k < gp->n_initializer && !has_init; k++)
            has_init = strcmp(ox_str(gp->initializer[k]->name), ox_str(vi->name)) == 0;
        if (has_init) continue;
        int input = position++;
        if (!tensor_shape_of(vi)) continue;
        for (size_t a = 0; a < vi->type->tensor_type->shape->n_dim; a++) {
            if (!ox_dim_symbolic(vi->type->tensor_type->shape->dim[a])) continue;
            char nm[IMP_DIM_NAME_MAX];
            ox_dim_name(vi, (int)a, nm, sizeof nm);
            int s = find_sym(d, nm);
            if (s < 0) {
                s = d->n_sym;
                d->names[d->n_sym++] = xf_arena_strdup(&d->arena, nm);
            }
            dyn_at *at = &d->inputs[d->n_inputs++];
            at->value = xf_arena_strdup(&d->arena, ox_str(vi->name));
            at->input = input;
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
            at->value = xf_arena_strdup(&d->arena, ox_str(vi->name));
            at->input = -1;
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

/* Records the shape of every named value of g into pr. */
static xf_status record_shapes(xf_onnx_dynamic *d, dyn_probe *pr, const xf_graph *g,
                               xf_error *err)
{
    pr->shapes = xf_malloc(sizeof *pr->shapes * ((size_t)g->n_values + 1));
    if (!pr->shapes) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
    for (int v = 0; v < g->n_values; v++) {
        const char *nm = g->values[v].name;
        if (!nm || !nm[0] || ox_map_get(&pr->index, nm) >= 0) continue;
        const char *key = xf_arena_strdup(&d->arena, nm);
        if (!key) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
        if (ox_map_put(&pr->index, key, pr->n, err) != XF_OK) return err->code;
        pr->shapes[pr->n++] = g->values[v].shape;
    }
    return XF_OK;
}

static void probe_free(dyn_probe *pr)
{
    ox_map_free(&pr->index);
    xf_free(pr->shapes);
    memset(pr, 0, sizeof *pr);
    ox_map_init(&pr->index);
}

/* Candidate sizes for a symbol imported at s, in the order tried: x2, x3,
 * then larger multiples (for a size small against the model's total
 * stride), then /2, /4 and x1.5 for a model that admits no larger size;
 * never s itself, nothing below 1, no overflow. */
static int candidates(int64_t s, int64_t *c, int max)
{
    static const int64_t mul[] = {2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128};
    int n = 0;
    for (size_t i = 0; i < sizeof mul / sizeof mul[0] && s <= INT64_MAX / 128; i++)
        c[n++] = s * mul[i];
    const int64_t down[] = {s / 2, s / 4, s <= INT64_MAX / 2 ? s + s / 2 : 0};
    for (size_t i = 0; i < sizeof down / sizeof down[0] && n < max; i++) {
        int dup = down[i] < 1 || down[i] == s;
        for (int j = 0; j < n; j++) dup |= c[j] == down[i];
        if (!dup) c[n++] = down[i];
    }
    return n;
}

/* Shapes of the original with symbol `sym` far from its size (x1024, x256,
 * x64 or x16 of it, the first at which the model imports): a dim that
 * moves there depends on the symbol, so the probes must move it too (a dim
 * derived through a stride of 32 stays 1 from size 1 to 32). Nothing is
 * recorded when the model imports at none of them. */
static xf_status far_shapes(xf_onnx_dynamic *d, int sym, int64_t *vals, const void *buf,
                            size_t len, const char *name, const char *base_dir, dyn_probe *far,
                            xf_error *err)
{
    static const int64_t mul[] = {1024, 256, 64, 16};
    int64_t s = d->sizes[sym * POINTS];
    xf_onnx_options o = xf_onnx_dynamic_options(d, 1);
    for (size_t i = 0; i < sizeof mul / sizeof mul[0]; i++) {
        if (s > INT64_MAX / mul[i]) continue;
        vals[sym] = s * mul[i];
        xf_graph g;
        xf_error e;
        xf_error_clear(&e);
        xf_status st = xf_onnx_load_buffer(buf, len, name, base_dir, &o, &g, &e);
        if (st == XF_ERR_NOMEM) return XF_FAIL(err, st, "%s", e.msg);
        if (st != XF_OK) continue;
        st = record_shapes(d, far, &g, err);
        xf_graph_free(&g);
        return st;
    }
    return XF_OK;
}

/* NULL when every dim that moves at the far size (far) moves in g too;
 * else which does not, in buf. */
static const char *stays(const xf_onnx_dynamic *d, const dyn_probe *far, const xf_graph *g,
                         char *buf, size_t n)
{
    const dyn_probe *p0 = &d->probes[2 * d->n_sym];
    for (int v = 0; v < g->n_values; v++) {
        const char *nm = g->values[v].name;
        int e0 = nm ? ox_map_get(&p0->index, nm) : -1, ef = nm ? ox_map_get(&far->index, nm) : -1;
        if (e0 < 0 || ef < 0) continue;
        const xf_shape *s0 = &p0->shapes[e0], *sf = &far->shapes[ef], *sg = &g->values[v].shape;
        if (s0->rank != sf->rank || s0->rank != sg->rank) continue;
        for (int a = 0; a < s0->rank; a++)
            if (sf->dims[a] != s0->dims[a] && sg->dims[a] == s0->dims[a]) {
                snprintf(buf, n, "dim %d of '%s' stays %lld", a, nm, (long long)s0->dims[a]);
                return buf;
            }
    }
    return NULL;
}

/* The two other sizes of symbol `sym`, each the first candidate at which
 * the model imports and every dim that depends on the symbol moves; the
 * imports give the symbol's probes. */
static xf_status pick_sizes(xf_onnx_dynamic *d, int sym, const void *buf, size_t len,
                            const char *name, const char *base_dir, xf_error *err)
{
    int64_t c[24];
    int nc = candidates(d->sizes[sym * POINTS], c, 24), found = 0;
    char tried[512] = "";
    xf_error last;
    xf_error_clear(&last);
    /* point 0 with this symbol moved (the scratch row of point 1) */
    int64_t *vals = d->point_values + d->n_sym;
    for (int s = 0; s < d->n_sym; s++) vals[s] = d->sizes[s * POINTS];
    xf_onnx_options o = xf_onnx_dynamic_options(d, 1);
    dyn_probe far;
    memset(&far, 0, sizeof far);
    ox_map_init(&far.index);
    xf_status st = far_shapes(d, sym, vals, buf, len, name, base_dir, &far, err);
    for (int i = 0; i < nc && found < 2 && st == XF_OK; i++) {
        vals[sym] = c[i];
        d->sizes[sym * POINTS + 1 + found] = c[i];
        xf_graph g;
        char why[512];
        const char *no = "";
        if (xf_onnx_load_buffer(buf, len, name, base_dir, &o, &g, &last) != XF_OK) {
            if (last.code == XF_ERR_NOMEM) st = XF_FAIL(err, XF_ERR_NOMEM, "%s", last.msg);
        } else {
            no = stays(d, &far, &g, why, sizeof why);
            if (!no) st = record_shapes(d, &d->probes[sym * 2 + found++], &g, err);
            xf_graph_free(&g);
        }
        if (no) {
            size_t n = strlen(tried);
            snprintf(tried + n, sizeof tried - n, "%s%lld%s%s%s", n ? ", " : "", (long long)c[i],
                     no[0] ? " (" : "", no, no[0] ? ")" : "");
        }
    }
    probe_free(&far);
    if (tried[0])
        xf_log(XF_LOG_INFO, "%s: symbolic dimension '%s' at %lld: sizes passed over: %s", name,
               d->names[sym], (long long)d->sizes[sym * POINTS], tried);
    if (st == XF_OK && found < 2) {
        /* not dynamic as far as the model goes: written fixed, and said so */
        char why[1024];
        snprintf(why, sizeof why,
                 "the model imports at %s other size among those tried (%s%s%s)",
                 found ? "only one" : "no", tried, last.msg[0] ? ": " : "", last.msg);
        return ox_dyn_fix(d, name, sym, why, err);
    }
    return st;
}

xf_status ox_dyn_fix(xf_onnx_dynamic *d, const char *model, int sym, const char *why,
                          xf_error *err)
{
    d->fixed[sym] = xf_arena_strdup(&d->arena, why);
    if (!d->fixed[sym]) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
    xf_log(XF_LOG_WARN, "%s: symbolic dimension '%s' is written fixed at %lld: %s", model,
           d->names[sym], (long long)d->sizes[sym * POINTS], why);
    for (int p = 1; p < POINTS; p++) d->sizes[sym * POINTS + p] = d->sizes[sym * POINTS];
    for (int k = sym * 2; k < sym * 2 + 2; k++) probe_free(&d->probes[k]);
    fill_point_values(d);
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
    st = record_shapes(d, &d->probes[2 * d->n_sym], &g, err);
    xf_graph_free(&g);
    return st;
}

xf_status ox_dyn_read(const void *buf, size_t len, const char *name, xf_onnx_dynamic **out,
                           xf_error *err)
{
    *out = NULL;
    xf_onnx_dynamic *d = xf_calloc(1, sizeof *d);
    if (!d) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
    xf_arena_init(&d->arena, 0);
    imp_pb_alloc pa;
    ox_pb_alloc_init(&pa);
    int too_deep = 0;
    Onnx__ModelProto *model = ox_pb_unpack_model(&pa, len, buf, &too_deep);
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
    if (st != XF_OK) {
        xf_onnx_dynamic_free(d);
        return st;
    }
    *out = d;
    return XF_OK;
}

xf_status xf_onnx_dynamic_open(const void *buf, size_t len, const char *name, const char *base_dir,
                               const xf_onnx_options *opts, xf_onnx_dynamic **out,
                               xf_error *err)
{
    *out = NULL;
    if (!name) name = "<memory>";
    xf_onnx_dynamic *d = NULL;
    xf_status st = ox_dyn_read(buf, len, name, &d, err);
    if (st != XF_OK) return st;
    d->opts = opts ? *opts : xf_onnx_default_options();
    d->opts.n_dim_overrides = 0;
    size_t n = (size_t)d->n_sym * POINTS + 1;
    d->sizes = xf_calloc(n, sizeof *d->sizes);
    d->point_values = xf_calloc(n, sizeof *d->point_values);
    d->probes = xf_calloc(2 * (size_t)d->n_sym + 1, sizeof *d->probes); /* + point 0 */
    d->fixed = xf_calloc((size_t)d->n_sym + 1, sizeof *d->fixed);
    if (!d->sizes || !d->point_values || !d->probes || !d->fixed)
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
    if (st == XF_OK) {
        initial_sizes(d, opts);
        for (int k = 0; k <= 2 * d->n_sym; k++) ox_map_init(&d->probes[k].index);
        fill_point_values(d);
        if (d->n_sym > 0) st = record_point0(d, buf, len, name, base_dir, err);
        /* each symbol is moved alone, the others staying at point 0 */
        for (int s = 0; s < d->n_sym && st == XF_OK; s++)
            st = pick_sizes(d, s, buf, len, name, base_dir, err);
        fill_point_values(d);
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
    xf_status st = ox_read_file(path, &buf, &len, err);
    if (st != XF_OK) return st;
    char *dir = ox_dirname(path);
    if (!dir) st = XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", path);
    else st = xf_onnx_dynamic_open(buf, len, path, dir, opts, out, err);
    xf_free(dir);
    xf_free(buf);
    return st;
}

xf_status xf_onnx_read_file(const char *path, uint8_t **buf, size_t *len, xf_error *err)
{
    return ox_read_file(path, buf, len, err);
}

void ox_dyn_describe_sizes(const xf_onnx_dynamic *d, const int64_t *values, char *buf,
                                size_t n)
{
    if (n) buf[0] = '\0';
    for (int s = 0; s < xf_onnx_dynamic_count(d); s++) {
        size_t k = strlen(buf);
        snprintf(buf + k, n - k, "%s%s=%lld", s ? ", " : "", d->names[s], (long long)values[s]);
    }
}

void xf_onnx_dynamic_describe(const xf_onnx_dynamic *d, int point, char *buf, size_t n)
{
    if (!xf_onnx_dynamic_count(d)) {
        if (n) buf[0] = '\0';
        return;
    }
    ox_dyn_describe_sizes(d, d->point_values + (size_t)point * (size_t)d->n_sym, buf, n);
}
