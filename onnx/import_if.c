/*
 * import_if.c — an If node's branches as graphs the interpreter can run.
 *
 * ONNX branches read values of the enclosing graphs by name (outer scope).
 * Each name a branch (or a graph nested in it) reads without defining it
 * becomes a captured value: an extra input of the If node in the outer
 * graph, so rewrites keep it alive and ordered before the If (and export
 * writes it under that name), and in the branch a graph input declared
 * with the outer value's dtype and shape, or a constant when the outer
 * value is known at import time (weights, values computed from shapes).
 * The branch is then imported like a model's graph (import.c), nested Ifs
 * recursively. The node stays opaque: rules never match through it, and
 * export writes its attributes (the original branches) back unchanged.
 */
#include "import_internal.h"

#include <stdio.h>
#include <string.h>

/* Names in first-seen order, with a set for membership. */
typedef struct name_list {
    imp_map set;
    const char **v;
    int n, cap;
} name_list;

static xf_status list_add(name_list *l, const char *nm, xf_error *err)
{
    if (ox_map_get(&l->set, nm) >= 0) return XF_OK;
    if (l->n == l->cap) {
        int nc = l->cap ? 2 * l->cap : 16;
        const char **p = xf_realloc(l->v, sizeof *p * (size_t)nc);
        if (!p) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory listing a branch's outer values");
        l->v = p;
        l->cap = nc;
    }
    l->v[l->n] = nm;
    return ox_map_put(&l->set, nm, l->n++, err);
}

static void list_free(name_list *l)
{
    ox_map_free(&l->set);
    xf_free(l->v);
}

/* Adds to `out` every name sg reads (itself or in its nested graphs) that
 * sg does not define. */
static xf_status free_names(const Onnx__GraphProto *sg, name_list *out, int depth, xf_error *err)
{
    if (depth > 64)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "subgraphs are nested more than 64 deep");
    name_list def = {0}, inner = {0};
    ox_map_init(&def.set);
    ox_map_init(&inner.set);
    xf_status rc = XF_OK;
    for (size_t i = 0; i < sg->n_input && rc == XF_OK; i++)
        rc = list_add(&def, ox_str(sg->input[i]->name), err);
    for (size_t i = 0; i < sg->n_initializer && rc == XF_OK; i++)
        rc = list_add(&def, ox_str(sg->initializer[i]->name), err);
    for (size_t i = 0; i < sg->n_node && rc == XF_OK; i++)
        for (size_t k = 0; k < sg->node[i]->n_output && rc == XF_OK; k++)
            rc = list_add(&def, ox_str(sg->node[i]->output[k]), err);
    for (size_t i = 0; i < sg->n_node && rc == XF_OK; i++) {
        const Onnx__NodeProto *n = sg->node[i];
        for (size_t k = 0; k < n->n_input && rc == XF_OK; k++)
            rc = list_add(&inner, ox_str(n->input[k]), err);
        for (size_t a = 0; a < n->n_attribute && rc == XF_OK; a++) {
            const Onnx__AttributeProto *at = n->attribute[a];
            if (at->g) rc = free_names(at->g, &inner, depth + 1, err);
            for (size_t j = 0; j < at->n_graphs && rc == XF_OK; j++)
                rc = free_names(at->graphs[j], &inner, depth + 1, err);
        }
    }
    for (size_t i = 0; i < sg->n_output && rc == XF_OK; i++)
        rc = list_add(&inner, ox_str(sg->output[i]->name), err);
    for (int i = 0; i < inner.n && rc == XF_OK; i++)
        if (inner.v[i][0] && ox_map_get(&def.set, inner.v[i]) < 0)
            rc = list_add(out, inner.v[i], err);
    list_free(&def);
    list_free(&inner);
    return rc;
}

/* Imports branch `sg`: the captured names known at import time as
 * constants, the others as its graph inputs. */
static xf_status import_branch(imp_state *st, const Onnx__GraphProto *sg, const char *attr,
                               const name_list *caps, xf_graph *g, xf_error *err)
{
    imp_outer *outer = xf_arena_alloc(&st->arena, sizeof *outer * ((size_t)caps->n + 1));
    if (!outer) return ox_node_fail(st, err, XF_ERR_NOMEM, "out of memory");
    for (int i = 0; i < caps->n; i++) {
        int s = ox_sym_find(st, caps->v[i]);
        outer[i].name = caps->v[i];
        if (ox_sym_is_const(st, s)) {
            if (ox_sym_decode(st, s, err) != XF_OK) return err->code;
            outer[i].value = &st->syms[s].t;
        } else if (ox_sym_info(st, s, &outer[i].dtype, &outer[i].shape, err) != XF_OK) {
            return err->code;
        }
    }
    char file[1024];
    snprintf(file, sizeof file, "%s: %s of node %d '%s' (If)", st->file, attr, st->node_index,
             ox_str(st->node->name));
    const char *fname = xf_arena_strdup(&st->arena, file);
    if (!fname) return ox_node_fail(st, err, XF_ERR_NOMEM, "out of memory");
    return ox_import_subgraph(st, sg, fname, outer, caps->n, g, err);
}

static xf_status set_captured(imp_state *st, xf_opaque *o, const name_list *caps, int **cap_ids,
                              xf_error *err)
{
    o->captured = xf_calloc((size_t)caps->n + 1, sizeof *o->captured);
    *cap_ids = xf_calloc((size_t)caps->n + 1, sizeof **cap_ids);
    if (!o->captured || !*cap_ids) return ox_node_fail(st, err, XF_ERR_NOMEM, "out of memory");
    for (int i = 0; i < caps->n; i++) {
        size_t len = strlen(caps->v[i]) + 1;
        o->captured[i] = xf_malloc(len);
        if (!o->captured[i]) return ox_node_fail(st, err, XF_ERR_NOMEM, "out of memory");
        memcpy(o->captured[i], caps->v[i], len);
        o->n_captured = i + 1;
        (*cap_ids)[i] = ox_sym_value(st, ox_sym_find(st, caps->v[i]), err);
        if ((*cap_ids)[i] < 0) return err->code;
    }
    return XF_OK;
}

xf_status ox_if_branches(imp_state *st, xf_opaque *o, int **cap_ids, int *n_cap, xf_error *err)
{
    *cap_ids = NULL;
    *n_cap = 0;
    const char *attr[2] = {"then_branch", "else_branch"};
    const Onnx__AttributeProto *a[2] = {ox_attr(st->node, attr[0]), ox_attr(st->node, attr[1])};
    if (!a[0] || !a[0]->g || !a[1] || !a[1]->g)
        return ox_node_fail(st, err, XF_ERR_PARSE, "If needs then_branch and else_branch graphs");
    name_list caps = {0};
    ox_map_init(&caps.set);
    xf_status rc = XF_OK;
    for (int b = 0; b < 2 && rc == XF_OK; b++) rc = free_names(a[b]->g, &caps, 0, err);
    if (rc != XF_OK) goto out;
    for (int i = 0; i < caps.n; i++)
        if (ox_sym_find(st, caps.v[i]) < 0) { /* no kernel, as for a branch we cannot import */
            char why[1024];
            snprintf(why, sizeof why,
                     "a branch reads '%s', which no outer node, input or initializer produces",
                     caps.v[i]);
            rc = ox_no_kernel(st, o, why, err);
            goto out;
        }
    o->branches = xf_calloc(2, sizeof *o->branches);
    if (!o->branches) {
        rc = ox_node_fail(st, err, XF_ERR_NOMEM, "out of memory");
        goto out;
    }
    for (int b = 0; b < 2 && rc == XF_OK; b++) {
        xf_error why = {0};
        rc = import_branch(st, a[b]->g, attr[b], &caps, &o->branches[b], &why);
        if (rc == XF_OK) {
            o->n_branches = b + 1;
        } else if (rc != XF_ERR_NOMEM) { /* the If stays opaque without a kernel */
            rc = ox_no_kernel(st, o, why.msg, err);
            goto out;
        } else {
            *err = why;
        }
    }
    if (rc == XF_OK) rc = set_captured(st, o, &caps, cap_ids, err);
    if (rc == XF_OK) {
        *n_cap = caps.n;
        o->kernel = XF_OPAQUE_IF;
    }
out:
    list_free(&caps);
    return rc;
}

int ox_if_out_type(imp_state *st, const xf_opaque *o, int k, xf_dtype *dt, xf_shape *sh)
{
    if (o->kernel != XF_OPAQUE_IF || o->n_branches != 2) return 0;
    const xf_graph *br[2] = {&o->branches[0], &o->branches[1]};
    const xf_value *v[2];
    for (int b = 0; b < 2; b++) {
        if (k >= br[b]->n_outputs) return 0;
        v[b] = &br[b]->values[br[b]->outputs[k]];
    }
    int pick = -1, s = ox_in_sym(st, 0);
    xf_error ignored;
    /* a condition known at import time (from shapes) picks the branch that runs */
    if (s >= 0 && ox_sym_is_const(st, s) && ox_sym_decode(st, s, &ignored) == XF_OK &&
        xf_opaque_if_branch(&st->syms[s].t, &pick, &ignored) != XF_OK)
        pick = -1;
    if (pick < 0 && (v[0]->dtype != v[1]->dtype || !xf_shape_equal(&v[0]->shape, &v[1]->shape)))
        return 0;
    *dt = v[pick < 0 ? 0 : pick]->dtype;
    *sh = v[pick < 0 ? 0 : pick]->shape;
    return 1;
}
