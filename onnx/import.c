/*
 * import.c — ONNX model import: the public entry points (file, buffer),
 * the model-level checks (protobuf decoding, graph present, default-domain
 * opset 7..21), graph inputs with their static shapes (symbolic dims sized
 * from the options), then every node in a topological order, the graph
 * outputs, initializers nothing uses, and a final xf_graph_validate. On any error the partly built
 * graph is freed and left initialised, and the message names the model.
 * The same driver imports an If's branch subgraphs (ox_import_subgraph).
 */
#include "import_internal.h"
#include "onnx_dtype_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPSET_MIN 7
#define OPSET_MAX 21

xf_onnx_options xf_onnx_default_options(void)
{
    xf_onnx_options o;
    memset(&o, 0, sizeof o);
    o.fold_constants = 1;
    return o;
}

static int is_default_domain(const char *d)
{
    return d[0] == '\0' || strcmp(d, "ai.onnx") == 0;
}

int64_t ox_domain_version(const imp_state *st, const char *domain)
{
    int want_default = is_default_domain(domain);
    for (size_t i = 0; i < st->model->n_opset_import; i++) {
        const Onnx__OperatorSetIdProto *o = st->model->opset_import[i];
        const char *d = ox_str(o->domain);
        if (o->has_version &&
            (want_default ? is_default_domain(d) : strcmp(d, domain) == 0))
            return o->version;
    }
    return 0;
}

/* Size of symbolic dim `name`: from the options, else 1 (warned once). */
static int64_t symbolic_dim(imp_state *st, const char *name, const char *what, xf_error *err,
                            xf_status *rc)
{
    *rc = XF_OK;
    for (int i = 0; i < st->opts.n_dim_overrides; i++)
        if (st->opts.dim_names && st->opts.dim_values && st->opts.dim_names[i] &&
            strcmp(st->opts.dim_names[i], name) == 0) {
            if (ox_map_get(&st->dim_syms, name) < 0)
                *rc = ox_map_put(&st->dim_syms, name, 0, err);
            return st->opts.dim_values[i];
        }
    if (ox_map_get(&st->dim_syms, name) != 1) {
        xf_log(XF_LOG_WARN,
               "%s: symbolic dimension '%s' (%s) set to 1; give its size with a dim override",
               st->file, name, what);
        *rc = ox_map_put(&st->dim_syms, name, 1, err);
    }
    return 1;
}

int ox_dim_symbolic(const Onnx__TensorShapeProto__Dimension *d)
{
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
        return d->dim_value == 0;
    return 1;
}

void ox_dim_name(const Onnx__ValueInfoProto *vi, int axis, char *buf, size_t n)
{
    const Onnx__TensorShapeProto__Dimension *d = vi->type->tensor_type->shape->dim[axis];
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM && d->dim_param &&
        d->dim_param[0])
        snprintf(buf, n, "%s", d->dim_param);
    else
        snprintf(buf, n, "%s_dim%d", ox_str(vi->name), axis);
}

xf_status ox_value_type(imp_state *st, const Onnx__ValueInfoProto *vi, int is_input,
                         const char *what, xf_dtype *dt, xf_shape *sh, xf_error *err)
{
    memset(sh, 0, sizeof *sh);
    *dt = XF_DTYPE_INVALID;
    const Onnx__TypeProto *tp = vi->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                       "%s is not declared as a tensor (sequence, map and optional values are "
                       "not supported)",
                       what);
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    int code = tt->has_elem_type ? tt->elem_type : 0;
    *dt = xf_onnx_dtype_of_code(code);
    if (*dt == XF_DTYPE_INVALID)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                       "%s has dtype %s; rlflow supports " OX_DTYPES_SUPPORTED, what,
                       ox_dtype_name(code));
    if (!tt->shape)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                       "%s has an unknown rank; rlflow needs static shapes", what);
    if (tt->shape->n_dim > XF_MAX_DIMS)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "%s has rank %zu; rlflow supports at most %d",
                       what, tt->shape->n_dim, XF_MAX_DIMS);
    sh->rank = (int)tt->shape->n_dim;
    for (int i = 0; i < sh->rank; i++) {
        const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
            (d->dim_value != 0 || !is_input)) {
            if (d->dim_value < 0)
                return XF_FAIL(err, XF_ERR_PARSE, "%s: dim %d is negative (%lld)", what, i,
                               (long long)d->dim_value);
            sh->dims[i] = d->dim_value;
        } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                   d->dim_param && d->dim_param[0] &&
                   (is_input || ox_map_get(&st->dim_syms, d->dim_param) >= 0)) {
            xf_status rc;
            sh->dims[i] = symbolic_dim(st, d->dim_param, what, err, &rc);
            if (rc != XF_OK) return rc;
        } else if (is_input) {
            /* declared 0, unnamed or unknown on an input: symbolic, by a
             * generated name the user can size with a dim override */
            char gen[IMP_DIM_NAME_MAX];
            ox_dim_name(vi, i, gen, sizeof gen);
            const char *nm = xf_arena_strdup(&st->arena, gen);
            if (!nm) return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", st->file);
            xf_status rc;
            sh->dims[i] = symbolic_dim(st, nm, what, err, &rc);
            if (rc != XF_OK) return rc;
        } else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM)
            return XF_FAIL(err, XF_ERR_UNSUPPORTED, "%s: dim %d is symbolic ('%s')", what, i,
                           ox_str(d->dim_param));
        else
            return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                           "%s: dim %d is unknown; rlflow needs static shapes", what, i);
    }
    return XF_OK;
}

static xf_status check_model(imp_state *st, xf_error *err)
{
    const Onnx__ModelProto *m = st->model;
    if (!m->graph)
        return XF_FAIL(err, XF_ERR_PARSE, "%s: not a valid ONNX model (it has no graph)", st->file);
    st->graph = m->graph;
    st->opset = ox_domain_version(st, "");
    if (st->opset == 0 && m->n_opset_import == 0)
        return XF_FAIL(err, XF_ERR_PARSE, "%s: not a valid ONNX model (it has no opset_import)",
                       st->file);
    if (st->opset == 0)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                       "%s: the model imports only custom operator domains (domain '%s'); "
                       "rlflow needs the default ONNX domain",
                       st->file, ox_str(m->opset_import[0]->domain));
    if (st->opset < OPSET_MIN || st->opset > OPSET_MAX)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                       "%s: the model uses default-domain opset %lld; rlflow imports opsets %d "
                       "to %d (convert it with onnx.version_converter)",
                       st->file, (long long)st->opset, OPSET_MIN, OPSET_MAX);
    return XF_OK;
}

static xf_status index_value_info(imp_state *st, xf_error *err)
{
    const Onnx__GraphProto *gp = st->graph;
    for (size_t i = 0; i < gp->n_value_info; i++) {
        const char *nm = ox_str(gp->value_info[i]->name);
        if (nm[0] && ox_map_put(&st->vinfo, nm, (int)i, err) != XF_OK) return err->code;
    }
    for (size_t i = 0; i < gp->n_output; i++) {
        const char *nm = ox_str(gp->output[i]->name);
        if (nm[0] && ox_map_put(&st->vinfo, nm, (int)(gp->n_value_info + i), err) != XF_OK)
            return err->code;
    }
    return XF_OK;
}

static xf_status add_inputs(imp_state *st, xf_error *err)
{
    const Onnx__GraphProto *gp = st->graph;
    for (size_t i = 0; i < gp->n_input; i++) {
        const char *nm = ox_str(gp->input[i]->name);
        int s = ox_sym_find(st, nm);
        if (!st->syms[s].is_input) continue; /* has an initializer: a constant */
        char what[512];
        snprintf(what, sizeof what, "input '%s'", nm);
        xf_dtype dt;
        xf_shape sh;
        if (ox_value_type(st, gp->input[i], 1, what, &dt, &sh, err) != XF_OK) {
            xf_error_prefix(err, "%s", st->file);
            return err->code;
        }
        int v = xf_graph_add_input(st->g, nm, dt, &sh, err);
        if (v < 0) {
            xf_error_prefix(err, "%s", st->file);
            return err->code;
        }
        st->syms[s].value = v;
    }
    return XF_OK;
}

/* Initializers nothing consumes are kept as graph constants (nothing in a
 * model is dropped), and so are those a subgraph uses (an If branch reads
 * them by name from the outer scope); those consumed only as parameters
 * or by folded nodes are not, since the graph no longer refers to them. */
static xf_status add_unused_initializers(imp_state *st, xf_error *err)
{
    const Onnx__GraphProto *gp = st->graph;
    for (size_t i = 0; i < gp->n_initializer; i++) {
        int s = ox_sym_find(st, ox_str(gp->initializer[i]->name));
        if (s < 0 || st->syms[s].value >= 0 ||
            (st->syms[s].uses > 0 && st->syms[s].sub_uses == 0))
            continue;
        if (ox_sym_value(st, s, err) < 0) return err->code;
    }
    return XF_OK;
}

static xf_status add_outputs(imp_state *st, xf_error *err)
{
    const Onnx__GraphProto *gp = st->graph;
    for (size_t i = 0; i < gp->n_output; i++) {
        const char *nm = ox_str(gp->output[i]->name);
        int s = nm[0] ? ox_sym_find(st, nm) : -1;
        if (s < 0)
            return XF_FAIL(err, XF_ERR_GRAPH,
                           "%s: graph output %zu '%s' is produced by no node, input or "
                           "initializer",
                           st->file, i, nm);
        int v = ox_sym_value(st, s, err);
        if (v < 0) return err->code;
        if (xf_graph_mark_output(st->g, v, err) != XF_OK) return err->code;
    }
    return XF_OK;
}

/* Everything after the model checks, for the top-level graph and for
 * subgraphs (import_if.c). */
static xf_status build_graph(imp_state *st, xf_error *err)
{
    xf_status rc;
    st->g->opset = st->opset;
    const char *gname = ox_str(st->graph->name);
    st->g->name = xf_malloc(strlen(gname) + 1);
    if (!st->g->name) return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", st->file);
    memcpy(st->g->name, gname, strlen(gname) + 1);
    if ((rc = index_value_info(st, err)) != XF_OK) return rc;
    int *order = NULL;
    if ((rc = ox_resolve(st, &order, err)) != XF_OK) return rc;
    rc = add_inputs(st, err);
    for (size_t k = 0; k < st->graph->n_node && rc == XF_OK; k++) {
        st->node_index = order[k];
        st->node = st->graph->node[order[k]];
        rc = ox_map_node(st, err);
    }
    xf_free(order);
    if (rc == XF_OK) rc = add_outputs(st, err);
    if (rc == XF_OK) rc = add_unused_initializers(st, err);
    if (rc == XF_OK && (rc = xf_graph_validate(st->g, err)) != XF_OK)
        xf_error_prefix(err, "%s: imported graph is invalid", st->file);
    return rc;
}

static xf_status import_graph(imp_state *st, xf_error *err)
{
    xf_status rc = check_model(st, err);
    if (rc != XF_OK) return rc;
    return build_graph(st, err);
}

static void state_free(imp_state *st);

/* An outer value as symbol o->name of st: a constant (a copy st owns) or
 * a graph input of st->g. */
static xf_status outer_value(imp_state *st, const imp_outer *o, xf_error *err)
{
    int s = ox_sym_new(st, o->name, err);
    if (s < 0) return err->code;
    if (!o->value) {
        st->syms[s].is_input = 1;
        st->syms[s].value = xf_graph_add_input(st->g, o->name, o->dtype, &o->shape, err);
        if (st->syms[s].value < 0) return err->code;
        return ox_map_put(&st->names, o->name, s, err);
    }
    size_t bytes = xf_tensor_bytes(o->value);
    void *data = xf_malloc(bytes ? bytes : 1);
    if (!data) return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", st->file);
    if (bytes) memcpy(data, o->value->data, bytes);
    st->syms[s].has_const = 1;
    st->syms[s].t_owned = 1;
    st->syms[s].t = *o->value;
    st->syms[s].t.data = data;
    return ox_map_put(&st->names, o->name, s, err);
}

xf_status ox_import_subgraph(imp_state *parent, const Onnx__GraphProto *sg, const char *file,
                              const imp_outer *outer, int n_outer, xf_graph *g, xf_error *err)
{
    xf_graph_init(g);
    imp_state st;
    memset(&st, 0, sizeof st);
    st.file = file;
    st.base_dir = parent->base_dir;
    st.opts = parent->opts;
    st.model = parent->model;
    st.graph = sg;
    st.opset = parent->opset;
    st.g = g;
    ox_map_init(&st.names);
    ox_map_init(&st.vinfo);
    ox_map_init(&st.dim_syms);
    xf_arena_init(&st.arena, 0);
    xf_status rc = XF_OK;
    for (size_t i = 0; i < parent->dim_syms.n && rc == XF_OK; i++)
        rc = ox_map_put(&st.dim_syms, parent->dim_syms.keys[i], parent->dim_syms.vals[i], err);
    for (int i = 0; i < n_outer && rc == XF_OK; i++) rc = outer_value(&st, &outer[i], err);
    if (rc == XF_OK) rc = build_graph(&st, err);
    state_free(&st);
    if (rc != XF_OK) xf_graph_free(g);
    return rc;
}

static void state_free(imp_state *st)
{
    for (int i = 0; i < st->n_syms; i++)
        if (st->syms[i].t_owned) xf_tensor_free(&st->syms[i].t);
    xf_free(st->syms);
    xf_free(st->deferred);
    ox_map_free(&st->names);
    ox_map_free(&st->vinfo);
    ox_map_free(&st->dim_syms);
    xf_arena_free(&st->arena);
}

xf_status xf_onnx_load_buffer(const void *buf, size_t len, const char *name, const char *base_dir,
                              const xf_onnx_options *opts, xf_graph *g, xf_error *err)
{
    return ox_load(buf, len, name, base_dir, NULL, opts, g, err);
}

/* ox_load; `owned` (may be NULL) is buf when the caller hands it over: it
 * is freed as soon as the model is decoded (protobuf-c copies what it
 * keeps), so the file's bytes and the imported weights never coexist. */
static xf_status load_bytes(const void *buf, size_t len, void *owned, const char *name,
                            const char *base_dir, const imp_ext_mem *ext_mem,
                            const xf_onnx_options *opts, xf_graph *g, xf_error *err)
{
    xf_error local;
    if (!err) err = &local;
    xf_graph_init(g);
    if (!name) name = "<memory>";
    if (!buf && len) return XF_FAIL(err, XF_ERR_INVALID, "%s: no buffer given", name);
    imp_pb_alloc pa;
    ox_pb_alloc_init(&pa);
    int too_deep = 0;
    Onnx__ModelProto *model = ox_pb_unpack_model(&pa, len, buf, &too_deep);
    xf_free(owned);
    if (too_deep)
        return XF_FAIL(err, XF_ERR_PARSE,
                       "%s: its messages nest deeper than %d levels (graphs in If or Loop "
                       "branches within branches, or types within types): refused before "
                       "decoding",
                       name, IMP_PB_MAX_DEPTH);
    if (!model && pa.failed)
        return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory decoding the model", name);
    if (!model)
        return XF_FAIL(err, XF_ERR_PARSE,
                       "%s: not a valid ONNX model (protobuf decoding failed: the file is "
                       "truncated or not an ONNX ModelProto)",
                       name);
    imp_state st;
    memset(&st, 0, sizeof st);
    st.file = name;
    st.base_dir = base_dir;
    st.ext_mem = ext_mem;
    st.opts = opts ? *opts : xf_onnx_default_options();
    st.model = model;
    st.g = g;
    ox_map_init(&st.names);
    ox_map_init(&st.vinfo);
    ox_map_init(&st.dim_syms);
    xf_arena_init(&st.arena, 0);
    xf_status rc = import_graph(&st, err);
    state_free(&st);
    onnx__model_proto__free_unpacked(model, &pa.base);
    if (rc != XF_OK) xf_graph_free(g);
    return rc;
}

xf_status ox_load(const void *buf, size_t len, const char *name, const char *base_dir,
                   const imp_ext_mem *ext_mem, const xf_onnx_options *opts, xf_graph *g,
                   xf_error *err)
{
    return load_bytes(buf, len, NULL, name, base_dir, ext_mem, opts, g, err);
}

xf_status xf_onnx_load(const char *path, const xf_onnx_options *opts, xf_graph *g, xf_error *err)
{
    xf_graph_init(g);
    uint8_t *buf = NULL;
    size_t len = 0;
    xf_status rc = ox_read_file(path, &buf, &len, err);
    if (rc != XF_OK) return rc;
    char *dir = ox_dirname(path);
    if (!dir) {
        rc = XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", path);
        xf_free(buf);
    } else {
        rc = load_bytes(buf, len, buf, path, dir, NULL, opts, g, err);
    }
    xf_free(dir);
    return rc;
}
