/*
 * export.c — writes an rlflow graph as an ONNX ModelProto: chooses the
 * opset and IR version, names every value uniquely, writes graph inputs and
 * outputs with full types, every constant as a raw_data initializer (used or
 * not: nothing is dropped), value_info for every node output, and the nodes
 * in topological order (their ONNX form comes from export_ops.c). Weights
 * that go to an external data file are moved there by external_write.c,
 * which also writes files (through the ir's xf_outfile: atomic onto a
 * regular file, through onto a device or FIFO, every write checked).
 *
 * The model is built by hand in an arena (see export_internal.h) and packed
 * with protobuf-c; the arena is the single owner of every message.
 */
#include "export_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx_dtype_internal.h"


/* ------------------------------------------------------------- helpers */

static int host_little_endian(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

xf_status ox_export_fail_nomem(xf_export *x)
{
    if (x->st == XF_OK) x->st = XF_FAIL(x->err, XF_ERR_NOMEM, "out of memory building the ONNX model");
    return x->st;
}

void *ox_export_alloc(xf_export *x, size_t bytes)
{
    void *p = xf_arena_alloc(&x->arena, bytes);
    if (!p) ox_export_fail_nomem(x);
    return p;
}

static char *arena_str(xf_export *x, const char *s)
{
    char *p = xf_arena_strdup(&x->arena, s ? s : "");
    if (!p) ox_export_fail_nomem(x);
    return p;
}

static int vec_push(xf_export *x, xf_export_vec *v, void *item)
{
    if (v->n == v->cap) {
        size_t nc = v->cap ? v->cap * 2 : 64;
        void **p = xf_realloc(v->items, nc * sizeof *p);
        if (!p) {
            ox_export_fail_nomem(x);
            return 0;
        }
        v->items = p;
        v->cap = nc;
    }
    v->items[v->n++] = item;
    return 1;
}

/* ---------------------------------------------------------------- names */

static uint64_t name_hash(const char *s)
{
    return xf_htab_key(xf_hash_bytes(0x9E3779B97F4A7C15ull, s, strlen(s)));
}

static int names_has(const xf_export_names *s, const char *name)
{
    size_t pos = XF_HTAB_START;
    for (const uint64_t *v; (v = xf_htab_next(&s->index, name_hash(name), &pos));)
        if (strcmp((const char *)(uintptr_t)*v, name) == 0) return 1;
    return 0;
}

/* Adds `name` (an arena string not yet in the set); 0 when out of memory. */
static int names_add(xf_export *x, xf_export_names *s, const char *name)
{
    if (xf_htab_add(&s->index, name_hash(name), (uint64_t)(uintptr_t)name, NULL) != XF_OK) {
        ox_export_fail_nomem(x);
        return 0;
    }
    return 1;
}

/* `base` itself when unused, else "<base>_<k>" for the smallest free k;
 * the result is claimed in `s`. */
static const char *unique_name(xf_export *x, xf_export_names *s, const char *base)
{
    char *name;
    if (base[0] && !names_has(s, base)) {
        name = arena_str(x, base);
    } else {
        size_t n = strlen(base) + 24;
        name = ox_export_alloc(x, n);
        if (!name) return NULL;
        for (unsigned long k = 1;; k++) {
            snprintf(name, n, "%s_%lu", base, k);
            if (!names_has(s, name)) break;
        }
    }
    if (!name || !names_add(x, s, name)) return NULL;
    return name;
}

/* Values an If's branches read by name (xf_opaque.captured) take that
 * name when it is free; emit_opaque renames any other through Identity. */
static void claim_captured(xf_export *x)
{
    const xf_graph *g = x->g;
    for (int i = 0; i < g->n_nodes && x->st == XF_OK; i++) {
        const xf_node *n = &g->nodes[i];
        const xf_opaque *o = n->opaque;
        for (int k = 0; o && k < o->n_captured && x->st == XF_OK; k++) {
            int v = n->inputs[n->n_inputs - o->n_captured + k];
            if (v < 0 || x->vname[v] || names_has(&x->used_values, o->captured[k])) continue;
            x->vname[v] = (char *)unique_name(x, &x->used_values, o->captured[k]);
        }
    }
}

const char *ox_export_claim(xf_export *x, const char *name)
{
    if (names_has(&x->used_values, name)) return NULL;
    return unique_name(x, &x->used_values, name);
}

/* Named values claim their names first (graph inputs, then outputs, then
 * the rest by id; a later duplicate becomes "<name>_<k>"); unnamed values
 * then get "v<id>" made unique. */
static xf_status assign_value_names(xf_export *x)
{
    const xf_graph *g = x->g;
    x->vname = ox_export_alloc(x, sizeof(char *) * ((size_t)g->n_values + 1));
    if (!x->vname) return x->st;
    int n_order = g->n_inputs + g->n_outputs + g->n_values;
    int *order = xf_malloc(sizeof(int) * ((size_t)n_order + 1));
    if (!order) return ox_export_fail_nomem(x);
    int k = 0;
    for (int i = 0; i < g->n_inputs; i++) order[k++] = g->inputs[i];
    for (int i = 0; i < g->n_inputs && x->st == XF_OK; i++) { /* inputs first, then captured */
        const char *nm = g->values[g->inputs[i]].name;
        if (nm && nm[0] && !x->vname[g->inputs[i]])
            x->vname[g->inputs[i]] = (char *)unique_name(x, &x->used_values, nm);
    }
    claim_captured(x);
    for (int i = 0; i < g->n_outputs; i++) order[k++] = g->outputs[i];
    for (int i = 0; i < g->n_values; i++) order[k++] = i;
    for (int pass = 0; pass < 2 && x->st == XF_OK; pass++) {
        for (int i = 0; i < n_order; i++) {
            int v = order[i];
            const char *orig = g->values[v].name;
            int named = orig && orig[0];
            if (x->vname[v] || named != (pass == 0)) continue;
            char buf[32];
            if (!named) snprintf(buf, sizeof buf, "v%d", v);
            const char *nm = unique_name(x, &x->used_values, named ? orig : buf);
            if (!nm) break;
            x->vname[v] = (char *)nm;
        }
    }
    xf_free(order);
    return x->st;
}

const char *ox_export_vname(const xf_export *x, int v)
{
    return v < 0 ? "" : x->vname[v];
}

/* "<node name or OpType_idx>/<suffix>" (or without suffix). */
static void node_base(const xf_export *x, int node, const char *suffix, char *buf, size_t n)
{
    const xf_node *nd = &x->g->nodes[node];
    char own[256];
    if (nd->name && nd->name[0]) snprintf(own, sizeof own, "%s", nd->name);
    else snprintf(own, sizeof own, "%s_%d", xf_onnx_op_type(nd), node);
    if (suffix) snprintf(buf, n, "%s/%s", own, suffix);
    else snprintf(buf, n, "%s", own);
}

/* ------------------------------------------------------------ messages */

/* v: the graph value the type is for (its dims may be symbolic), -1 for
 * none, -2 for an exporter's temporary (shape left out when symbols are
 * kept: it would be the one at point 0). */
static Onnx__TypeProto *tensor_type(xf_export *x, xf_dtype dt, const xf_shape *sh, int v)
{
    Onnx__TypeProto *tp = ox_export_alloc(x, sizeof *tp);
    Onnx__TypeProto__Tensor *tt = ox_export_alloc(x, sizeof *tt);
    Onnx__TensorShapeProto *shp = ox_export_alloc(x, sizeof *shp);
    Onnx__TensorShapeProto__Dimension **dims =
        ox_export_alloc(x, sizeof *dims * (size_t)(sh->rank + 1));
    if (!tp || !tt || !shp || !dims) return NULL;
    onnx__type_proto__init(tp);
    onnx__type_proto__tensor__init(tt);
    onnx__tensor_shape_proto__init(shp);
    for (int i = 0; i < sh->rank; i++) {
        dims[i] = ox_export_alloc(x, sizeof *dims[i]);
        if (!dims[i]) return NULL;
        onnx__tensor_shape_proto__dimension__init(dims[i]);
        const char *sym = v >= 0 && x->n_probe ? ox_export_dyn_dim_name(x, v, i) : NULL;
        if (sym && sym[0]) {
            dims[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            dims[i]->dim_param = (char *)sym;
        } else if (!sym) {
            dims[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            dims[i]->dim_value = sh->dims[i];
        } /* else a dim that moves without a name: neither */
    }
    shp->n_dim = (size_t)sh->rank;
    shp->dim = dims;
    tt->has_elem_type = 1;
    tt->elem_type = xf_onnx_dtype_code(dt);
    tt->shape = v == -2 && x->n_probe ? NULL : shp;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    return tp;
}

static Onnx__ValueInfoProto *value_info(xf_export *x, const char *name, xf_dtype dt,
                                        const xf_shape *sh, int v)
{
    Onnx__ValueInfoProto *vi = ox_export_alloc(x, sizeof *vi);
    if (!vi) return NULL;
    onnx__value_info_proto__init(vi);
    vi->name = (char *)name;
    vi->type = tensor_type(x, dt, sh, v);
    return vi->type ? vi : NULL;
}

/* A TensorProto with raw little-endian data; references `data` unless a
 * copy is asked for or bytes must be swapped. */
static Onnx__TensorProto *tensor_proto(xf_export *x, const char *name, xf_dtype dt,
                                       const xf_shape *sh, const void *data, int copy)
{
    Onnx__TensorProto *t = ox_export_alloc(x, sizeof *t);
    int64_t *dims = ox_export_alloc(x, sizeof(int64_t) * (size_t)(sh->rank + 1));
    if (!t || !dims) return NULL;
    onnx__tensor_proto__init(t);
    memcpy(dims, sh->dims, sizeof(int64_t) * (size_t)sh->rank);
    t->n_dims = (size_t)sh->rank;
    t->dims = dims;
    t->has_data_type = 1;
    t->data_type = xf_onnx_dtype_code(dt);
    t->name = (char *)name;
    size_t esz = xf_dtype_size(dt);
    size_t bytes = (size_t)xf_shape_numel(sh) * esz;
    uint8_t *raw = (uint8_t *)(uintptr_t)data;
    int le = host_little_endian();
    if (bytes && (copy || !le)) {
        raw = ox_export_alloc(x, bytes);
        if (!raw) return NULL;
        const uint8_t *src = data;
        for (size_t i = 0; i < bytes; i += esz)
            for (size_t b = 0; b < esz; b++) raw[i + b] = src[i + (le ? b : esz - 1 - b)];
    }
    t->has_raw_data = 1;
    t->raw_data.len = bytes;
    t->raw_data.data = bytes ? raw : NULL;
    return t;
}

xf_status ox_export_initializer(xf_export *x, const char *name, xf_dtype dt, const xf_shape *sh,
                                const void *data, int copy)
{
    Onnx__TensorProto *t = tensor_proto(x, name, dt, sh, data, copy);
    if (!t || !vec_push(x, &x->inits, t)) return ox_export_fail_nomem(x);
    return XF_OK;
}

const char *ox_export_const_vec(xf_export *x, int node, const char *suffix, xf_dtype dt,
                                const void *v, int n)
{
    char base[512];
    node_base(x, node, suffix, base, sizeof base);
    const char *name = unique_name(x, &x->used_values, base);
    int64_t d = n;
    xf_shape sh = xf_shape_make(1, &d);
    if (!name || ox_export_initializer(x, name, dt, &sh, v, 1) != XF_OK) return NULL;
    return name;
}

const char *ox_export_const_i64(xf_export *x, int node, const char *suffix, const int64_t *v,
                                int n)
{
    return ox_export_const_vec(x, node, suffix, XF_I64, v, n);
}

static void scalar_bytes(xf_dtype dt, double value, void *out)
{
    switch (dt) {
    case XF_F32: {
        float f = (float)value;
        memcpy(out, &f, sizeof f);
        break;
    }
    case XF_I64: {
        int64_t i = (int64_t)value;
        memcpy(out, &i, sizeof i);
        break;
    }
    case XF_I32: {
        int32_t i = (int32_t)value;
        memcpy(out, &i, sizeof i);
        break;
    }
    default: *(uint8_t *)out = value != 0.0; break;
    }
}

const char *ox_export_const_scalar(xf_export *x, int node, const char *suffix, xf_dtype dt,
                                   double value)
{
    char base[512];
    node_base(x, node, suffix, base, sizeof base);
    const char *name = unique_name(x, &x->used_values, base);
    uint8_t bytes[8];
    scalar_bytes(dt, value, bytes);
    xf_shape sh = xf_shape_make(0, NULL);
    if (!name || ox_export_initializer(x, name, dt, &sh, bytes, 1) != XF_OK) return NULL;
    return name;
}

const char *ox_export_shared_scalar(xf_export *x, const char **slot, const char *base, float value)
{
    if (*slot) return *slot;
    const char *name = unique_name(x, &x->used_values, base);
    xf_shape sh = xf_shape_make(0, NULL);
    if (!name || ox_export_initializer(x, name, XF_F32, &sh, &value, 1) != XF_OK) return NULL;
    *slot = name;
    return name;
}

const char *ox_export_temp(xf_export *x, int node, const char *suffix, xf_dtype dt,
                           const xf_shape *sh)
{
    char base[512];
    node_base(x, node, suffix, base, sizeof base);
    const char *name = unique_name(x, &x->used_values, base);
    if (!name) return NULL;
    Onnx__ValueInfoProto *vi = value_info(x, name, dt, sh, -2);
    if (!vi || !vec_push(x, &x->value_info, vi)) {
        ox_export_fail_nomem(x);
        return NULL;
    }
    return name;
}

static char **name_array(xf_export *x, int n, const char *const *names)
{
    char **a = ox_export_alloc(x, sizeof(char *) * ((size_t)n + 1));
    if (!a) return NULL;
    for (int i = 0; i < n; i++) a[i] = (char *)names[i];
    return a;
}

Onnx__NodeProto *ox_export_node(xf_export *x, int node, const char *suffix, const char *op_type,
                                int n_in, const char *const *in, int n_out,
                                const char *const *out)
{
    char base[512];
    node_base(x, node, suffix, base, sizeof base);
    Onnx__NodeProto *n = ox_export_alloc(x, sizeof *n);
    if (!n) return NULL;
    onnx__node_proto__init(n);
    n->name = (char *)unique_name(x, &x->used_nodes, base);
    n->op_type = arena_str(x, op_type);
    n->input = name_array(x, n_in, in);
    n->output = name_array(x, n_out, out);
    if (!n->name || !n->op_type || !n->input || !n->output || !vec_push(x, &x->nodes, n)) {
        ox_export_fail_nomem(x);
        return NULL;
    }
    n->n_input = (size_t)n_in;
    n->n_output = (size_t)n_out;
    return n;
}

/* ----------------------------------------------------------- attributes */

xf_status ox_export_attr_raw(xf_export *x, Onnx__NodeProto *n, Onnx__AttributeProto *a)
{
    Onnx__AttributeProto **arr = ox_export_alloc(x, sizeof *arr * (n->n_attribute + 1));
    if (!arr) return x->st;
    if (n->n_attribute) memcpy(arr, n->attribute, sizeof *arr * n->n_attribute);
    arr[n->n_attribute++] = a;
    n->attribute = arr;
    return XF_OK;
}

static Onnx__AttributeProto *new_attr(xf_export *x, const char *name,
                                      Onnx__AttributeProto__AttributeType type)
{
    Onnx__AttributeProto *a = ox_export_alloc(x, sizeof *a);
    if (!a) return NULL;
    onnx__attribute_proto__init(a);
    a->name = arena_str(x, name);
    a->has_type = 1;
    a->type = type;
    return a->name ? a : NULL;
}

xf_status ox_export_attr_int(xf_export *x, Onnx__NodeProto *n, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = new_attr(x, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    if (!a) return x->st;
    a->has_i = 1;
    a->i = v;
    return ox_export_attr_raw(x, n, a);
}

xf_status ox_export_attr_ints(xf_export *x, Onnx__NodeProto *n, const char *name,
                              const int64_t *v, int count)
{
    Onnx__AttributeProto *a = new_attr(x, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    int64_t *vals = ox_export_alloc(x, sizeof(int64_t) * ((size_t)count + 1));
    if (!a || !vals) return x->st;
    if (count) memcpy(vals, v, sizeof(int64_t) * (size_t)count);
    a->n_ints = (size_t)count;
    a->ints = vals;
    return ox_export_attr_raw(x, n, a);
}

xf_status ox_export_attr_float(xf_export *x, Onnx__NodeProto *n, const char *name, float v)
{
    Onnx__AttributeProto *a = new_attr(x, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    if (!a) return x->st;
    a->has_f = 1;
    a->f = v;
    return ox_export_attr_raw(x, n, a);
}

xf_status ox_export_attr_string(xf_export *x, Onnx__NodeProto *n, const char *name,
                                const char *v)
{
    Onnx__AttributeProto *a = new_attr(x, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    char *s = arena_str(x, v);
    if (!a || !s) return x->st;
    a->has_s = 1;
    a->s.len = strlen(s);
    a->s.data = (uint8_t *)s;
    return ox_export_attr_raw(x, n, a);
}

/* ---------------------------------------------------------------- model */

/* g->opset when in 11..17, 17 above, 13 below (opsets 7..10 are converted
 * on import); at least 17 when LayerNormalization is used, 14 for
 * HardSwish. */
static int64_t target_opset(const xf_graph *g)
{
    int64_t opset = g->opset > 17 ? 17 : g->opset >= 11 ? g->opset : 13;
    for (int i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].op == XF_OP_LAYERNORM) opset = 17;
        if (g->nodes[i].op == XF_OP_HARDSWISH && opset < 14) opset = 14;
    }
    return opset;
}

static int64_t ir_version_for(int64_t opset)
{
    if (opset <= 11) return 6;
    if (opset <= 14) return 7;
    return 8;
}

static int default_domain(const char *d)
{
    return !d || !d[0] || strcmp(d, "ai.onnx") == 0;
}

/* The default domain at x->opset, plus each domain opaque nodes come from
 * (at the highest version any of them recorded). */
static xf_status opset_imports(xf_export *x, Onnx__ModelProto *m)
{
    const xf_graph *g = x->g;
    Onnx__OperatorSetIdProto **ids = ox_export_alloc(x, sizeof *ids * ((size_t)g->n_nodes + 1));
    if (!ids) return x->st;
    size_t n = 0;
    for (int i = -1; i < g->n_nodes; i++) {
        const char *domain = "";
        int64_t version = x->opset;
        if (i >= 0) {
            const xf_opaque *o = g->nodes[i].opaque;
            if (g->nodes[i].op != XF_OP_OPAQUE || !o || default_domain(o->domain)) continue;
            domain = o->domain;
            version = o->domain_version > 0 ? o->domain_version : 1;
        }
        size_t k = 0;
        while (k < n && strcmp(ids[k]->domain, domain) != 0) k++;
        if (k < n) {
            if (ids[k]->version < version) ids[k]->version = version;
            continue;
        }
        ids[n] = ox_export_alloc(x, sizeof *ids[n]);
        if (!ids[n]) return x->st;
        onnx__operator_set_id_proto__init(ids[n]);
        ids[n]->domain = arena_str(x, domain);
        if (!ids[n]->domain) return x->st;
        ids[n]->has_version = 1;
        ids[n]->version = version;
        n++;
    }
    m->n_opset_import = n;
    m->opset_import = ids;
    return XF_OK;
}

static xf_status check_values(const xf_export *x)
{
    const xf_graph *g = x->g;
    for (int i = 0; i < g->n_values; i++) {
        const xf_value *v = &g->values[i];
        if (xf_onnx_dtype_code(v->dtype) == 0)
            return XF_FAIL(x->err, XF_ERR_GRAPH, "value %d '%s' has no valid dtype", i,
                           v->name ? v->name : "");
    }
    return XF_OK;
}

/* Graph inputs, outputs, constants and the value_info of node outputs. */
static xf_status graph_interface(xf_export *x, Onnx__GraphProto *gp)
{
    const xf_graph *g = x->g;
    gp->input = ox_export_alloc(x, sizeof *gp->input * ((size_t)g->n_inputs + 1));
    gp->output = ox_export_alloc(x, sizeof *gp->output * ((size_t)g->n_outputs + 1));
    if (!gp->input || !gp->output) return x->st;
    for (int i = 0; i < g->n_inputs; i++) {
        const xf_value *v = &g->values[g->inputs[i]];
        gp->input[i] = value_info(x, x->vname[g->inputs[i]], v->dtype, &v->shape, g->inputs[i]);
        if (!gp->input[i]) return ox_export_fail_nomem(x);
    }
    gp->n_input = (size_t)g->n_inputs;
    for (int i = 0; i < g->n_outputs; i++) {
        const xf_value *v = &g->values[g->outputs[i]];
        gp->output[i] =
            value_info(x, x->vname[g->outputs[i]], v->dtype, &v->shape, g->outputs[i]);
        if (!gp->output[i]) return ox_export_fail_nomem(x);
    }
    gp->n_output = (size_t)g->n_outputs;
    for (int i = 0; i < g->n_values; i++) {
        const xf_value *v = &g->values[i];
        if (v->kind == XF_VALUE_CONST) {
            if (ox_export_initializer(x, x->vname[i], v->dtype, &v->shape, v->data, 0) != XF_OK)
                return x->st;
        } else if (v->kind == XF_VALUE_NODE && !xf_graph_is_output(g, i) &&
                   !ox_export_is_generator(g->nodes[v->producer].op)) {
            /* a generator's output is an initializer, which carries its type */
            Onnx__ValueInfoProto *vi = value_info(x, x->vname[i], v->dtype, &v->shape, i);
            if (!vi || !vec_push(x, &x->value_info, vi)) return ox_export_fail_nomem(x);
        }
    }
    return XF_OK;
}

static xf_status emit_nodes(xf_export *x)
{
    const xf_graph *g = x->g;
    int *order = xf_malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
    if (!order) return ox_export_fail_nomem(x);
    xf_status st = xf_graph_topo_order(g, order, x->err);
    for (int k = 0; st == XF_OK && k < g->n_nodes; k++) {
        st = ox_export_emit(x, order[k]);
        if (st != XF_OK && x->st == XF_OK) x->st = st;
    }
    xf_free(order);
    return st;
}

xf_status ox_export_pack(xf_export *x, xf_export_layout *layout, uint8_t **buf, size_t *len)
{
    const xf_graph *g = x->g;
    Onnx__ModelProto *m = &x->model;
    Onnx__GraphProto *gp = &x->graph;
    onnx__model_proto__init(m);
    onnx__graph_proto__init(gp);
    x->opset = target_opset(g);
    xf_status st = xf_graph_validate(g, x->err);
    if (st != XF_OK) return st;
    if ((st = check_values(x)) != XF_OK) return st;
    if (xf_onnx_dynamic_count(x->dyn) > 0 && (st = ox_export_dyn_follow(x)) != XF_OK) return st;
    if (assign_value_names(x) != XF_OK || graph_interface(x, gp) != XF_OK) return x->st;
    if ((st = emit_nodes(x)) != XF_OK) return st;
    if (opset_imports(x, m) != XF_OK) return x->st;
    gp->name = arena_str(x, g->name && g->name[0] ? g->name : "rlflow");
    if (!gp->name) return x->st;
    gp->n_node = x->nodes.n;
    gp->node = (Onnx__NodeProto **)x->nodes.items;
    gp->n_initializer = x->inits.n;
    gp->initializer = (Onnx__TensorProto **)x->inits.items;
    gp->n_value_info = x->value_info.n;
    gp->value_info = (Onnx__ValueInfoProto **)x->value_info.items;
    m->has_ir_version = 1;
    m->ir_version = ir_version_for(x->opset);
    m->producer_name = "rlflow";
    m->graph = gp;
    if (layout && layout->shared && (st = ox_export_share(x, layout)) != XF_OK) return st;
    size_t size = onnx__model_proto__get_packed_size(m);
    if (layout && (layout->location || size > layout->inline_limit)) {
        if ((st = ox_export_externalize(x, layout)) != XF_OK) return st;
        size = onnx__model_proto__get_packed_size(m);
    }
    if (size > MAX_PROTO_BYTES)
        return XF_FAIL(x->err, XF_ERR_UNSUPPORTED,
                       "the model would be %zu bytes, over protobuf's 2 GiB limit%s", size,
                       layout ? " even with its weights in external data"
                              : "; write it to a file, where its weights go to an external "
                                "data file");
    x->packed_size = size;
    if (!buf) return XF_OK;
    *buf = xf_malloc(size ? size : 1);
    if (!*buf) return XF_FAIL(x->err, XF_ERR_NOMEM, "out of memory for a %zu-byte model", size);
    *len = onnx__model_proto__pack(m, *buf);
    return XF_OK;
}

/* protobuf-c's output buffer over a FILE: pack_to_buffer hands the message
 * over piece by piece, so a model is written without a copy in memory. */
typedef struct file_sink {
    ProtobufCBuffer base;
    FILE *f;
    int failed;
} file_sink;

static void sink_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
    file_sink *s = (file_sink *)b;
    if (!s->failed && len && fwrite(data, 1, len, s->f) != len) s->failed = 1;
}

int ox_export_stream(xf_export *x, FILE *f)
{
    file_sink s = {{sink_append}, f, 0};
    onnx__model_proto__pack_to_buffer(&x->model, &s.base);
    return !s.failed;
}

void ox_export_init(xf_export *x, const xf_graph *g, xf_error *err)
{
    memset(x, 0, sizeof *x);
    x->g = g;
    x->err = err;
    x->fail_sym = -1;
    xf_arena_init(&x->arena, 1 << 16);
}

void ox_export_free(xf_export *x)
{
    xf_arena_free(&x->arena);
    xf_htab_free(&x->used_values.index);
    xf_htab_free(&x->used_nodes.index);
    xf_free(x->nodes.items);
    xf_free(x->inits.items);
    xf_free(x->value_info.items);
    xf_free(x->pshape);
}

xf_status xf_onnx_save_buffer(const xf_graph *g, uint8_t **buf, size_t *len, xf_error *err)
{
    return xf_onnx_save_buffer_dynamic(g, NULL, buf, len, err);
}

xf_status xf_onnx_save_buffer_dynamic(const xf_graph *g, const xf_onnx_dynamic *d, uint8_t **buf,
                                      size_t *len, xf_error *err)
{
    *buf = NULL;
    *len = 0;
    xf_export x;
    ox_export_init(&x, g, err);
    x.dyn = d;
    xf_status st = ox_export_pack(&x, NULL, buf, len);
    ox_export_free(&x);
    return st;
}

/* ---------------------------------------------------------------- files */

xf_status xf_onnx_save(const xf_graph *g, const char *path, xf_error *err)
{
    return xf_onnx_save_with(g, path, NULL, err);
}

xf_status xf_onnx_save_tensor(const char *path, const xf_tensor *t, const char *name,
                              xf_error *err)
{
    if (xf_onnx_dtype_code(t->dtype) == 0 || t->shape.rank < 0 || t->shape.rank > XF_MAX_DIMS)
        return XF_FAIL(err, XF_ERR_INVALID, "%s: tensor has no valid dtype or rank", path);
    xf_export x;
    memset(&x, 0, sizeof x);
    x.err = err;
    xf_arena_init(&x.arena, 4096);
    xf_status st = XF_OK;
    Onnx__TensorProto *tp = tensor_proto(&x, name ? name : "", t->dtype, &t->shape, t->data, 0);
    uint8_t *buf = NULL;
    if (!tp) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", path);
        goto out;
    }
    size_t size = onnx__tensor_proto__get_packed_size(tp);
    if (size > MAX_PROTO_BYTES) {
        st = XF_FAIL(err, XF_ERR_UNSUPPORTED, "%s: tensor of %zu bytes is over protobuf's 2 GiB limit",
                     path, size);
        goto out;
    }
    buf = xf_malloc(size ? size : 1);
    if (!buf) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", path);
        goto out;
    }
    size_t len = onnx__tensor_proto__pack(tp, buf);
    st = xf_outfile_write_all(path, buf, len, err);
out:
    xf_free(buf);
    xf_arena_free(&x.arena);
    return st;
}
