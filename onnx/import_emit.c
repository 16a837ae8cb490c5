/*
 * import_emit.c — turning an imported node into graph content: symbols and
 * their lazily materialised constants, node emission with constant folding
 * (a node whose inputs are all constants is run once with the reference
 * kernel and its outputs become constants; one that depends on a run-time
 * input only through Shape is run too, and remembered as a deferred node
 * that is added to the graph if its outputs are ever needed as tensors),
 * opaque nodes for everything the operator table cannot represent exactly,
 * and the node-context error helpers every message goes through.
 */
#include "import_internal.h"
#include "onnx_dtype_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Folded results larger than this stay nodes (keeps hostile models from
 * allocating gigabytes at import time): 64 Mi elements. */
#define FOLD_MAX_ELEMS ((int64_t)1 << 26)

const char *ox_str(const char *s)
{
    return s ? s : "";
}

/* ------------------------------------------------------------------ errors */

static void node_context(const imp_state *st, char *buf, size_t n)
{
    snprintf(buf, n, "%s: node %d '%s' (%s)", st->file, st->node_index,
             ox_str(st->node->name), ox_str(st->node->op_type));
}

xf_status ox_node_fail(imp_state *st, xf_error *err, xf_status code, const char *fmt, ...)
{
    char head[512], msg[768];
    node_context(st, head, sizeof head);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return XF_FAIL(err, code, "%s: %s", head, msg);
}

xf_status ox_node_prefix(imp_state *st, xf_error *err, xf_status code)
{
    char head[512];
    node_context(st, head, sizeof head);
    xf_error_prefix(err, "%s", head);
    return code;
}

/* ----------------------------------------------------------------- symbols */

int ox_sym_new(imp_state *st, const char *name, xf_error *err)
{
    if (st->n_syms == st->cap_syms) {
        int nc = st->cap_syms ? st->cap_syms * 2 : 256;
        imp_sym *p = xf_realloc(st->syms, sizeof *p * (size_t)nc);
        if (!p) {
            XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory indexing values", st->file);
            return -1;
        }
        st->syms = p;
        st->cap_syms = nc;
    }
    imp_sym *s = &st->syms[st->n_syms];
    memset(s, 0, sizeof *s);
    s->name = name;
    s->producer = -1;
    s->value = -1;
    s->deferred = -1;
    return st->n_syms++;
}

int ox_sym_find(const imp_state *st, const char *name)
{
    return ox_map_get(&st->names, name);
}

int ox_sym_is_const(const imp_state *st, int sym)
{
    const imp_sym *s = &st->syms[sym];
    if (s->has_const || s->init) return 1;
    return s->value >= 0 && st->g->values[s->value].kind == XF_VALUE_CONST;
}

/* The decoded tensor is the copy the import keeps: the protobuf's copy of
 * its bytes (protobuf-c allocates each bytes field through the ir hook,
 * import_pb.c) is released at once, so a model with inline weights costs
 * one copy of them plus the largest tensor, not two. Only the main graph's:
 * a branch's initializers are also packed, whole, into its If node's
 * attributes (written back on export) after the branch is imported. */
static void release_raw_data(const Onnx__TensorProto *init)
{
    Onnx__TensorProto *tp = (Onnx__TensorProto *)(uintptr_t)init;
    if (!tp->has_raw_data || !tp->raw_data.data) return;
    xf_free(tp->raw_data.data);
    tp->raw_data.data = NULL;
    tp->raw_data.len = 0;
}

xf_status ox_sym_decode(imp_state *st, int sym, xf_error *err)
{
    imp_sym *s = &st->syms[sym];
    if (s->has_const) return XF_OK;
    if (s->value >= 0 && st->g->values[s->value].kind == XF_VALUE_CONST) {
        const xf_value *v = &st->g->values[s->value];
        s->t.dtype = v->dtype;
        s->t.shape = v->shape;
        s->t.data = v->data;
        s->t_owned = 0;
        s->has_const = 1;
        return XF_OK;
    }
    if (!s->init)
        return XF_FAIL(err, XF_ERR_INTERNAL, "%s: value '%s' is not a constant", st->file,
                       s->name);
    char what[768];
    snprintf(what, sizeof what, "%s: initializer '%s'", st->file, s->name);
    imp_ext_src src = {st->base_dir, st->ext_mem};
    int borrowed = 0;
    xf_status rc = ox_tensor_decode_src(s->init, what, &src, &s->t, &borrowed, err);
    if (rc != XF_OK) return rc;
    if (st->graph == st->model->graph) release_raw_data(s->init);
    s->init = NULL;
    s->has_const = 1;
    s->t_owned = !borrowed;
    s->borrowed = borrowed;
    return XF_OK;
}

/* Adds deferred node d to the graph (its inputs first). */
static xf_status emit_deferred(imp_state *st, int d, xf_error *err)
{
    if (st->deferred[d].emitted) return XF_OK;
    imp_deferred rec = st->deferred[d];
    st->deferred[d].emitted = 1;
    int ids_local[16];
    int *ids = rec.n_in <= 16 ? ids_local : xf_malloc(sizeof(int) * (size_t)rec.n_in);
    if (!ids) return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", st->file);
    xf_status rc = XF_OK;
    for (int i = 0; i < rec.n_in && rc == XF_OK; i++) {
        ids[i] = rec.in_syms[i] < 0 ? -1 : ox_sym_value(st, rec.in_syms[i], err);
        if (rec.in_syms[i] >= 0 && ids[i] < 0) rc = err->code;
    }
    int saved_index = st->node_index;
    const Onnx__NodeProto *saved_node = st->node;
    st->node_index = rec.node_index;
    st->node = st->graph->node[rec.node_index];
    int idx = -1;
    if (rc == XF_OK && rec.op == XF_OP_OPAQUE) {
        rc = ox_emit_opaque(st, NULL, err); /* its inputs are in the graph now */
        rec.n_out = 0;
    } else if (rc == XF_OK) {
        idx = xf_graph_add_node(st->g, rec.op, &rec.p, ids, rec.n_in, rec.n_out, rec.node_name,
                                err);
        if (idx < 0) rc = ox_node_prefix(st, err, err->code);
    }
    for (int k = 0; k < rec.n_out && rc == XF_OK; k++)
        rc = ox_bind_output(st, st->g->nodes[idx].outputs[k], rec.out_names[k], err);
    st->node_index = saved_index;
    st->node = saved_node;
    if (ids != ids_local) xf_free(ids);
    return rc;
}

int ox_sym_value(imp_state *st, int sym, xf_error *err)
{
    imp_sym *s = &st->syms[sym];
    if (s->value >= 0) return s->value;
    if (s->deferred >= 0) {
        if (emit_deferred(st, s->deferred, err) != XF_OK) return -1;
        if (st->syms[sym].value < 0) {
            XF_FAIL(err, XF_ERR_INTERNAL, "%s: deferred value '%s' was not produced", st->file,
                    st->syms[sym].name);
            return -1;
        }
        return st->syms[sym].value;
    }
    if (!s->has_const && !s->init) {
        XF_FAIL(err, XF_ERR_INTERNAL, "%s: value '%s' is used before it is computed", st->file,
                s->name);
        return -1;
    }
    if (ox_sym_decode(st, sym, err) != XF_OK) return -1;
    s = &st->syms[sym];
    int v = xf_graph_add_const_owned(st->g, s->name, s->t.dtype, &s->t.shape,
                                     s->borrowed ? NULL : s->t.data, err);
    s->t_owned = 0; /* the graph owns the data now (or freed it on failure) */
    if (v >= 0 && s->borrowed) {
        st->g->values[v].data = s->t.data;
        st->g->values[v].borrowed = 1;
    }
    if (v < 0) {
        s->has_const = 0;
        s->t.data = NULL;
        return -1;
    }
    s->value = v;
    return v;
}

xf_status ox_sym_info(imp_state *st, int sym, xf_dtype *dt, xf_shape *sh, xf_error *err)
{
    imp_sym *s = &st->syms[sym];
    if (s->value >= 0) {
        *dt = st->g->values[s->value].dtype;
        *sh = st->g->values[s->value].shape;
        return XF_OK;
    }
    xf_status rc = ox_sym_decode(st, sym, err);
    if (rc != XF_OK) return rc;
    *dt = st->syms[sym].t.dtype;
    *sh = st->syms[sym].t.shape;
    return XF_OK;
}

/* Symbol for an output name, creating one for synthetic names. */
static int out_sym(imp_state *st, const char *name, xf_error *err)
{
    int s = ox_sym_find(st, name);
    if (s >= 0) return s;
    s = ox_sym_new(st, name, err);
    if (s < 0) return -1;
    if (ox_map_put(&st->names, st->syms[s].name, s, err) != XF_OK) return -1;
    return s;
}

xf_status ox_set_const(imp_state *st, const char *name, xf_tensor *t, xf_error *err)
{
    int s = out_sym(st, name, err);
    if (s < 0) {
        xf_tensor_free(t);
        return err->code;
    }
    imp_sym *sy = &st->syms[s];
    sy->t = *t;
    sy->t_owned = 1;
    sy->has_const = 1;
    t->data = NULL;
    return XF_OK;
}

const char *ox_fresh_name(imp_state *st, const char *base, const char *suffix, xf_error *err)
{
    size_t n = strlen(base) + strlen(suffix) + 24;
    char *buf = xf_arena_alloc(&st->arena, n);
    if (!buf) {
        XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", st->file);
        return NULL;
    }
    snprintf(buf, n, "%s%s", base, suffix);
    /* numbered from where the last fresh name stopped: a Sum of 20,000
     * inputs asks 20,000 times, and counting from 1 each time took
     * quadratic time (27 s) */
    while (ox_sym_find(st, buf) >= 0) snprintf(buf, n, "%s%s_%d", base, suffix, ++st->fresh_next);
    return buf;
}

xf_status ox_bind_output(imp_state *st, int v, const char *name, xf_error *err)
{
    xf_value *val = &st->g->values[v];
    xf_graph_release(st->g, val->name);
    val->name = NULL;
    if (!name[0]) return XF_OK;
    size_t n = strlen(name) + 1;
    val->name = xf_malloc(n);
    if (!val->name) return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", st->file);
    memcpy(val->name, name, n);
    int s = out_sym(st, name, err);
    if (s < 0) return err->code;
    st->syms[s].value = v;
    return XF_OK;
}

/* ---------------------------------------------------------------- emission */

/* Runs op on inputs whose data is known (for XF_OP_SHAPE only the input's
 * shape is needed); *folded = 0 (nothing done) when the result would be too
 * large to keep as a constant. */
static xf_status fold(imp_state *st, xf_op op, const xf_params *p, const int *in_syms, int n_in,
                      const char *const *out_names, int n_out, int *folded, xf_error *err)
{
    *folded = 0;
    xf_dtype dt[XF_MAX_SPLIT + 8], odt[XF_MAX_SPLIT + 8];
    xf_shape sh[XF_MAX_SPLIT + 8], osh[XF_MAX_SPLIT + 8];
    const xf_tensor *in[XF_MAX_SPLIT + 8];
    xf_tensor shape_only;
    if (n_in > XF_MAX_SPLIT + 8 || n_out > XF_MAX_SPLIT + 8) return XF_OK;
    for (int i = 0; i < n_in; i++) {
        in[i] = NULL;
        dt[i] = XF_DTYPE_INVALID;
        memset(&sh[i], 0, sizeof sh[i]);
        if (in_syms[i] < 0) continue;
        if (op == XF_OP_SHAPE && !ox_sym_is_const(st, in_syms[i])) {
            xf_status rc = ox_sym_info(st, in_syms[i], &shape_only.dtype, &shape_only.shape, err);
            if (rc != XF_OK) return rc;
            shape_only.data = NULL;
            in[i] = &shape_only;
            dt[i] = shape_only.dtype;
            sh[i] = shape_only.shape;
            continue;
        }
        xf_status rc = ox_sym_decode(st, in_syms[i], err);
        if (rc != XF_OK) return rc;
        in[i] = &st->syms[in_syms[i]].t;
        dt[i] = in[i]->dtype;
        sh[i] = in[i]->shape;
    }
    if (xf_op_infer(op, p, n_in, dt, sh, n_out, odt, osh, err) != XF_OK)
        return ox_node_prefix(st, err, err->code);
    for (int k = 0; k < n_out; k++)
        if (xf_shape_numel(&osh[k]) > FOLD_MAX_ELEMS) return XF_OK;
    xf_tensor out[XF_MAX_SPLIT + 8];
    memset(out, 0, sizeof out);
    xf_status rc = XF_OK;
    for (int k = 0; k < n_out && rc == XF_OK; k++) rc = xf_tensor_alloc(&out[k], odt[k], &osh[k], err);
    if (rc == XF_OK) rc = xf_op_run(op, p, n_in, in, n_out, out, err);
    if (rc != XF_OK) {
        for (int k = 0; k < n_out; k++) xf_tensor_free(&out[k]);
        return ox_node_prefix(st, err, rc);
    }
    for (int k = 0; k < n_out; k++) {
        if (rc == XF_OK && out_names[k][0])
            rc = ox_set_const(st, out_names[k], &out[k], err);
        xf_tensor_free(&out[k]);
    }
    *folded = rc == XF_OK;
    return rc;
}

/* Records the folded node as deferred and marks its outputs. */
static xf_status defer(imp_state *st, xf_op op, const xf_params *p, const int *in_syms, int n_in,
                       const char *const *out_names, int n_out, const char *node_name,
                       xf_error *err)
{
    if (st->n_deferred == st->cap_deferred) {
        int nc = st->cap_deferred ? st->cap_deferred * 2 : 64;
        imp_deferred *d = xf_realloc(st->deferred, sizeof *d * (size_t)nc);
        if (!d) return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", st->file);
        st->deferred = d;
        st->cap_deferred = nc;
    }
    imp_deferred *d = &st->deferred[st->n_deferred];
    memset(d, 0, sizeof *d);
    d->op = op;
    d->p = p ? *p : xf_params_default();
    d->n_in = n_in;
    d->n_out = n_out;
    d->in_syms = xf_arena_alloc(&st->arena, sizeof(int) * (size_t)(n_in + 1));
    d->out_names = xf_arena_alloc(&st->arena, sizeof(char *) * (size_t)(n_out + 1));
    d->node_name = node_name && node_name[0] ? xf_arena_strdup(&st->arena, node_name) : NULL;
    d->node_index = st->node_index;
    if (!d->in_syms || !d->out_names || (node_name && node_name[0] && !d->node_name))
        return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", st->file);
    if (n_in) memcpy(d->in_syms, in_syms, sizeof(int) * (size_t)n_in);
    for (int k = 0; k < n_out; k++) {
        d->out_names[k] = out_names[k];
        int s = out_names[k][0] ? ox_sym_find(st, out_names[k]) : -1;
        if (s >= 0) st->syms[s].deferred = st->n_deferred;
    }
    st->n_deferred++;
    return XF_OK;
}

xf_status ox_defer_opaque(imp_state *st, xf_error *err)
{
    const Onnx__NodeProto *n = st->node;
    int n_in = (int)n->n_input, n_out = (int)n->n_output;
    int *in = xf_arena_alloc(&st->arena, sizeof(int) * (size_t)(n_in + 1));
    const char **out = xf_arena_alloc(&st->arena, sizeof(char *) * (size_t)(n_out + 1));
    if (!in || !out) return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", st->file);
    for (int i = 0; i < n_in; i++) in[i] = ox_in_sym(st, i);
    for (int k = 0; k < n_out; k++) out[k] = ox_out_name(st, k);
    return defer(st, XF_OP_OPAQUE, NULL, in, n_in, out, n_out, n->name, err);
}

xf_status ox_emit(imp_state *st, xf_op op, const xf_params *p, const int *in_syms, int n_in,
                   const char *const *out_names, int n_out, const char *node_name,
                   xf_error *err)
{
    return ox_emit_as(st, op, p, in_syms, n_in, out_names, n_out, node_name, 0, err);
}

xf_status ox_emit_as(imp_state *st, xf_op op, const xf_params *p, const int *in_syms, int n_in,
                     const char *const *out_names, int n_out, const char *node_name,
                     int params_deferred, xf_error *err)
{
    int known = st->opts.fold_constants != 0, deferred = params_deferred;
    for (int i = 0; i < n_in && known; i++) {
        if (in_syms[i] < 0) continue;
        if (!ox_sym_is_const(st, in_syms[i]))
            deferred = 1, known = op == XF_OP_SHAPE;
        else if (st->syms[in_syms[i]].deferred >= 0)
            deferred = 1;
    }
    if (known) {
        int folded = 0;
        xf_status rc = fold(st, op, p, in_syms, n_in, out_names, n_out, &folded, err);
        if (rc == XF_OK && folded && deferred)
            rc = defer(st, op, p, in_syms, n_in, out_names, n_out, node_name, err);
        if (rc != XF_OK || folded) return rc;
    }
    int ids_local[16];
    int *ids = n_in <= 16 ? ids_local : xf_malloc(sizeof(int) * (size_t)n_in);
    if (!ids) return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", st->file);
    xf_status rc = XF_OK;
    for (int i = 0; i < n_in && rc == XF_OK; i++) {
        ids[i] = in_syms[i] < 0 ? -1 : ox_sym_value(st, in_syms[i], err);
        if (in_syms[i] >= 0 && ids[i] < 0) rc = err->code;
    }
    int idx = -1;
    if (rc == XF_OK) {
        idx = xf_graph_add_node(st->g, op, p, ids, n_in, n_out,
                                node_name && node_name[0] ? node_name : NULL, err);
        if (idx < 0) rc = ox_node_prefix(st, err, err->code);
    }
    for (int k = 0; k < n_out && rc == XF_OK; k++)
        rc = ox_bind_output(st, st->g->nodes[idx].outputs[k], out_names[k], err);
    if (ids != ids_local) xf_free(ids);
    return rc;
}

/* ------------------------------------------------------------- opaque nodes */

/* Packs every attribute of the current node into o. */
static xf_status pack_attrs(imp_state *st, xf_opaque *o, xf_error *err)
{
    const Onnx__NodeProto *n = st->node;
    if (!n->n_attribute) return XF_OK;
    o->attr_bytes = xf_calloc(n->n_attribute, sizeof *o->attr_bytes);
    o->attr_len = xf_calloc(n->n_attribute, sizeof *o->attr_len);
    if (!o->attr_bytes || !o->attr_len) return ox_node_fail(st, err, XF_ERR_NOMEM, "out of memory");
    for (size_t i = 0; i < n->n_attribute; i++) {
        size_t len = onnx__attribute_proto__get_packed_size(n->attribute[i]);
        o->attr_bytes[i] = xf_malloc(len ? len : 1);
        if (!o->attr_bytes[i]) return ox_node_fail(st, err, XF_ERR_NOMEM, "out of memory");
        o->attr_len[i] = onnx__attribute_proto__pack(n->attribute[i], o->attr_bytes[i]);
        o->n_attrs = (int)i + 1;
    }
    return XF_OK;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = xf_malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

/* dtype/shape of an opaque node's output from value_info / graph outputs. */
static xf_status opaque_out_type(imp_state *st, int out, const char *name, xf_dtype *dt,
                                 xf_shape *sh, xf_error *err)
{
    int k = ox_map_get(&st->vinfo, name);
    if (k < 0) {
        int known = ox_opaque_infer(st, out, dt, sh, err);
        if (known != 0) return known > 0 ? XF_OK : err->code;
        if (ox_calc_unknown_size(st, name, err) != XF_OK) return err->code;
        const char *domain = ox_str(st->node->domain);
        return ox_node_fail(st, err, XF_ERR_UNSUPPORTED,
                             "cannot infer the output shape of opaque node: output '%s' has no "
                             "value_info and rlflow has no shape rule for %s%s%s; record the "
                             "output shapes in the model first (%s)",
                             name, domain[0] ? "domain '" : "this operator", domain,
                             domain[0] ? "' operators" : "",
                             domain[0] ? "onnxruntime's symbolic_shape_infer.py knows many "
                                         "custom-domain ops"
                                       : "onnx.shape_inference.infer_shapes does it");
    }
    const Onnx__GraphProto *gp = st->graph;
    const Onnx__ValueInfoProto *vi = (size_t)k < gp->n_value_info
                                         ? gp->value_info[k]
                                         : gp->output[(size_t)k - gp->n_value_info];
    const Onnx__TypeProto *tp = vi->type;
    if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->tensor_type &&
        tp->tensor_type->has_elem_type &&
        xf_onnx_dtype_of_code(tp->tensor_type->elem_type) == XF_DTYPE_INVALID)
        return ox_node_fail(st, err, XF_ERR_UNSUPPORTED,
                             "output '%s' has dtype %s; rlflow supports " OX_DTYPES_SUPPORTED,
                             name, ox_dtype_name(tp->tensor_type->elem_type));
    char what[512];
    snprintf(what, sizeof what, "output '%s'", name);
    if (ox_value_type(st, vi, 0, what, dt, sh, err) != XF_OK) {
        /* value_info with a dim of its own (onnx's shape inference writes
         * 'unk__0' where a size follows data): the operator's rule, if any */
        xf_error verr = err ? *err : (xf_error){0};
        int known = ox_opaque_infer(st, out, dt, sh, err);
        if (known != 0) return known > 0 ? XF_OK : err->code;
        if (ox_calc_unknown_size(st, name, err) != XF_OK) return err->code;
        if (err) *err = verr;
        xf_error_prefix(err, "cannot infer the output shape of opaque node");
        return ox_node_prefix(st, err, err->code);
    }
    return XF_OK;
}

xf_status ox_no_kernel(imp_state *st, xf_opaque *o, const char *why, xf_error *err)
{
    xf_log(XF_LOG_INFO, "%s: node %d '%s' (%s) cannot run in the interpreter: %s", st->file,
           st->node_index, ox_str(st->node->name), ox_str(st->node->op_type), why);
    xf_free(o->no_kernel);
    o->no_kernel = dup_str(why);
    return o->no_kernel ? XF_OK : ox_node_fail(st, err, XF_ERR_NOMEM, "out of memory");
}

xf_status ox_emit_opaque(imp_state *st, const char *why, xf_error *err)
{
    const Onnx__NodeProto *n = st->node;
    const char *domain = ox_str(n->domain);
    if (strcmp(domain, "ai.onnx") == 0) domain = "";
    if (why)
        xf_log(XF_LOG_INFO, "%s: node %d '%s' (%s) kept as an opaque node: %s", st->file,
               st->node_index, ox_str(n->name), ox_str(n->op_type), why);
    int n_in = (int)n->n_input, n_out = (int)n->n_output;
    while (n_out > 0 && !ox_str(n->output[n_out - 1])[0]) n_out--;
    int *ids = xf_calloc((size_t)n_in + 1, sizeof *ids);
    xf_dtype *dts = xf_calloc((size_t)n_out + 1, sizeof *dts);
    xf_shape *shs = xf_calloc((size_t)n_out + 1, sizeof *shs);
    const char **names = xf_calloc((size_t)n_out + 1, sizeof *names);
    xf_opaque *o = xf_calloc(1, sizeof *o);
    int *cap_ids = NULL;
    xf_status rc = XF_OK;
    if (!ids || !dts || !shs || !names || !o) {
        rc = ox_node_fail(st, err, XF_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < n_in && rc == XF_OK; i++) {
        int s = ox_in_sym(st, i);
        ids[i] = s < 0 ? -1 : ox_sym_value(st, s, err);
        if (s >= 0 && ids[i] < 0) rc = err->code;
    }
    int n_cap = 0;
    if (rc == XF_OK && !domain[0] && strcmp(ox_str(n->op_type), "If") == 0)
        rc = ox_if_branches(st, o, &cap_ids, &n_cap, err);
    else if (rc == XF_OK && !domain[0] && strcmp(ox_str(n->op_type), "LSTM") == 0)
        rc = ox_lstm_attrs(st, o, err);
    else if (rc == XF_OK && !domain[0])
        rc = ox_calc_attrs(st, o, err);
    for (int k = 0; k < n_out && rc == XF_OK; k++) {
        names[k] = ox_str(n->output[k]);
        int calc = 0;
        if (!names[k][0])
            dts[k] = XF_F32; /* omitted output: a placeholder nothing can use */
        else if (ox_if_out_type(st, o, k, &dts[k], &shs[k]))
            continue;
        else if ((calc = ox_calc_out_type(st, o, k, &dts[k], &shs[k], err)) < 0)
            rc = err->code;
        else if (!calc)
            rc = opaque_out_type(st, k, names[k], &dts[k], &shs[k], err);
    }
    if (rc != XF_OK) goto out;
    if (n_cap) {
        int *all = xf_realloc(ids, sizeof *all * (size_t)(n_in + n_cap + 1));
        if (!all) {
            rc = ox_node_fail(st, err, XF_ERR_NOMEM, "out of memory");
            goto out;
        }
        ids = all;
        memcpy(ids + n_in, cap_ids, sizeof *ids * (size_t)n_cap);
        n_in += n_cap;
    }
    o->op_type = dup_str(ox_str(n->op_type));
    o->domain = dup_str(domain);
    /* a domain the model forgot to declare is given version 1 */
    int64_t ver = ox_domain_version(st, domain);
    o->domain_version = ver > 0 ? ver : 1;
    if (!o->op_type || !o->domain) {
        rc = ox_node_fail(st, err, XF_ERR_NOMEM, "out of memory");
        goto out;
    }
    if ((rc = pack_attrs(st, o, err)) != XF_OK) goto out;
    const char *nm = ox_str(n->name);
    int idx = xf_graph_add_opaque(st->g, o, ids, n_in, dts, shs, n_out, nm[0] ? nm : NULL, err);
    o = NULL; /* owned by the graph, or freed */
    if (idx < 0) {
        rc = ox_node_prefix(st, err, err->code);
        goto out;
    }
    for (int k = 0; k < n_out && rc == XF_OK; k++)
        rc = ox_bind_output(st, st->g->nodes[idx].outputs[k], names[k], err);
out:
    xf_opaque_free(o);
    xf_free(cap_ids);
    xf_free(ids);
    xf_free(dts);
    xf_free(shs);
    xf_free(names);
    return rc;
}
