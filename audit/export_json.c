/*
 * export_json.c — `xferdb export --format json`: one rule as a JSON
 * document, the interchange format documented field by field in
 * docs/xferdb.md (format "rlflow.rule", version XF_AUDIT_JSON_VERSION).
 *
 * Both sides are node lists in topological order. Values are named: graph
 * inputs by the rule's input names, node outputs s0, s1, ... (source) and
 * t0, t1, ... (target) in that order. Parameters are the fields of
 * xf_params that are not zero (zero is every field's default), named as the
 * C fields, with enums as strings. The verdict carries the axioms with their
 * descriptions and the decoded counterexample inputs.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verify/verify.h"
#include "audit_impl.h"

typedef struct jparams {
    FILE *f;
    int n; /* fields written so far */
} jparams;

static void key(jparams *j, const char *name)
{
    fprintf(j->f, "%s\"%s\": ", j->n++ ? ", " : "", name);
}

static void int_field(jparams *j, const char *name, int64_t v)
{
    if (v == 0) return;
    key(j, name);
    fprintf(j->f, "%" PRId64, v);
}

static void str_field(jparams *j, const char *name, int32_t v, const char *text)
{
    if (v == 0) return;
    key(j, name);
    audit_json_str(j->f, text);
}

/* `len` entries, or (len < 0) up to the last non-zero one; nothing when
 * every entry is zero. */
static void i64_array(jparams *j, const char *name, const int64_t *v, int cap, int len)
{
    int n = len;
    if (n < 0)
        for (n = cap; n > 0 && v[n - 1] == 0; n--) continue;
    int any = 0;
    for (int i = 0; i < n; i++) any |= v[i] != 0;
    if (!any) return;
    key(j, name);
    fputc('[', j->f);
    for (int i = 0; i < n; i++) fprintf(j->f, "%s%" PRId64, i ? ", " : "", v[i]);
    fputc(']', j->f);
}

static void i32_array(jparams *j, const char *name, const int32_t *v, int n)
{
    int64_t w[4];
    for (int i = 0; i < n; i++) w[i] = v[i];
    int any = 0;
    for (int i = 0; i < n; i++) any |= w[i] != 0;
    if (!any) return;
    i64_array(j, name, w, n, n);
}

static void real_field(jparams *j, const char *name, double v, int is_double)
{
    if (v == 0.0) return;
    key(j, name);
    if (is_double && isfinite(v))
        fprintf(j->f, "%.17g", v);
    else
        audit_json_num(j->f, v);
}

static const char *act_name(int32_t a)
{
    static const char *const names[] = {"none", "relu", "sigmoid", "tanh"};
    return a >= 0 && a < 4 ? names[a] : "unknown";
}

static const char *pad_mode_name(int32_t m)
{
    static const char *const names[] = {"constant", "reflect", "edge"};
    return m >= 0 && m < 3 ? names[m] : "unknown";
}

static void write_params(FILE *f, const xf_params *p)
{
    jparams j = {f, 0};
    fputc('{', f);
    int na = p->n_axes > 0 && p->n_axes <= XF_MAX_DIMS ? p->n_axes : -1;
    int_field(&j, "axis", p->axis);
    i64_array(&j, "axes", p->axes, XF_MAX_DIMS, na);
    i64_array(&j, "starts", p->starts, XF_MAX_DIMS, na);
    i64_array(&j, "ends", p->ends, XF_MAX_DIMS, na);
    i64_array(&j, "steps", p->steps, XF_MAX_DIMS, na);
    i32_array(&j, "kernel", p->kernel, 2);
    i32_array(&j, "stride", p->stride, 2);
    i32_array(&j, "pads", p->pads, 4);
    i32_array(&j, "dilation", p->dilation, 2);
    int_field(&j, "group", p->group);
    str_field(&j, "activation", p->activation, act_name(p->activation));
    int_field(&j, "keepdims", p->keepdims);
    int_field(&j, "trans_a", p->trans_a);
    int_field(&j, "trans_b", p->trans_b);
    int_field(&j, "count_include_pad", p->count_include_pad);
    int_field(&j, "ceil_mode", p->ceil_mode);
    str_field(&j, "to", p->to, xf_dtype_name((xf_dtype)p->to));
    str_field(&j, "pad_mode", p->pad_mode, pad_mode_name(p->pad_mode));
    if (p->n_shape > 0 && p->n_shape <= XF_MAX_DIMS)
        i64_array(&j, "shape", p->shape, XF_MAX_DIMS, p->n_shape);
    if (p->n_split > 0 && p->n_split <= XF_MAX_SPLIT)
        i64_array(&j, "split", p->split, XF_MAX_SPLIT, p->n_split);
    real_field(&j, "alpha", (double)p->alpha, 0);
    real_field(&j, "beta", (double)p->beta, 0);
    real_field(&j, "epsilon", (double)p->epsilon, 0);
    real_field(&j, "value", p->value, 1);
    fputc('}', f);
}

static void write_value_type(FILE *f, const xf_value *v)
{
    fprintf(f, "\"dtype\": \"%s\", \"shape\": ", xf_dtype_name(v->dtype));
    audit_json_shape(f, &v->shape);
}

static void write_node(FILE *f, const xf_graph *g, const int *order, char prefix, int node)
{
    const xf_node *nd = &g->nodes[node];
    char label[256], name[64];
    audit_node_label(g, node, label, sizeof label);
    const char *onnx = nd->op == XF_OP_OPAQUE ? NULL : xf_op_get(nd->op)->onnx_name;
    fprintf(f, "      {\"op\": \"%s\", \"label\": ", xf_op_get(nd->op)->name);
    audit_json_str(f, label);
    fputs(", \"onnx_op\": ", f);
    audit_json_str(f, onnx);
    fputs(",\n       \"params\": ", f);
    write_params(f, &nd->params);
    fputs(",\n       \"inputs\": [", f);
    for (int i = 0; i < nd->n_inputs; i++) {
        fputs(i ? ", " : "", f);
        if (nd->inputs[i] < 0) {
            fputs("null", f);
            continue;
        }
        audit_value_name(g, order, prefix, nd->inputs[i], name, sizeof name);
        audit_json_str(f, name);
    }
    fputs("],\n       \"outputs\": [", f);
    for (int i = 0; i < nd->n_outputs; i++) {
        audit_value_name(g, order, prefix, nd->outputs[i], name, sizeof name);
        fprintf(f, "%s{\"name\": ", i ? ", " : "");
        audit_json_str(f, name);
        fputs(", ", f);
        write_value_type(f, &g->values[nd->outputs[i]]);
        fputc('}', f);
    }
    fputs("]}", f);
}

static void write_side(FILE *f, const char *title, const xf_graph *g, char prefix)
{
    xf_error err;
    char *text = audit_format(g, &err);
    fprintf(f, "  \"%s\": {\n    \"text\": ", title);
    audit_json_str(f, text ? text : "");
    xf_free(text);
    int *order = xf_malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
    if (!order || xf_graph_topo_order(g, order, &err) != XF_OK) {
        /* a loaded rule is validated: only memory can be short here */
        xf_free(order);
        fputs(",\n    \"nodes\": [],\n    \"outputs\": []\n  }", f);
        return;
    }
    fputs(",\n    \"nodes\": [\n", f);
    for (int i = 0; i < g->n_nodes; i++) {
        write_node(f, g, order, prefix, order[i]);
        fputs(i + 1 < g->n_nodes ? ",\n" : "\n", f);
    }
    fputs("    ],\n    \"outputs\": [", f);
    for (int i = 0; i < g->n_outputs; i++) {
        char name[64];
        audit_value_name(g, order, prefix, g->outputs[i], name, sizeof name);
        fputs(i ? ", " : "", f);
        audit_json_str(f, name);
    }
    fputs("]\n  }", f);
    xf_free(order);
}

static void write_inputs(FILE *f, const xf_graph *g)
{
    fputs("  \"inputs\": [", f);
    for (int i = 0; i < g->n_inputs; i++) {
        const xf_value *v = &g->values[g->inputs[i]];
        fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", f);
        audit_json_str(f, v->name);
        fputs(", ", f);
        write_value_type(f, v);
        fputc('}', f);
    }
    fputs(g->n_inputs ? "\n  ],\n" : "],\n", f);
}

static void write_axioms(FILE *f, const char *names)
{
    fputs("[", f);
    char *list = names ? xf_strdup(names) : NULL;
    int n = 0;
    char *save = NULL;
    for (char *a = list ? strtok_r(list, ", ", &save) : NULL; a; a = strtok_r(NULL, ", ", &save)) {
        int i = xf_verify_axiom_find(a);
        const xf_axiom_info *ax = i >= 0 ? xf_verify_axiom(i) : NULL;
        fputs(n++ ? ",\n      {\"name\": " : "\n      {\"name\": ", f);
        audit_json_str(f, a);
        fputs(", \"description\": ", f);
        audit_json_str(f, ax ? ax->description : NULL);
        fputc('}', f);
    }
    xf_free(list);
    fputs(n ? "\n    ]" : "]", f);
}

static void write_counterexample(FILE *f, const xf_rulesdb_rule_info *info, const xf_rule *r)
{
    xf_tensor *in = NULL;
    int n = 0;
    xf_error err;
    if (xf_verify_cex_decode(info->counterexample, info->counterexample_len, &in, &n, &err) !=
        XF_OK) {
        fprintf(f, "{\"bytes\": %zu, \"error\": ", info->counterexample_len);
        audit_json_str(f, err.msg);
        fputc('}', f);
        return;
    }
    fputs("{\"inputs\": [", f);
    for (int i = 0; i < n; i++) {
        const char *name = i < r->src.n_inputs ? r->src.values[r->src.inputs[i]].name : NULL;
        fputs(i ? ",\n      {\"name\": " : "\n      {\"name\": ", f);
        audit_json_str(f, name);
        fprintf(f, ", \"dtype\": \"%s\", \"shape\": ", xf_dtype_name(in[i].dtype));
        audit_json_shape(f, &in[i].shape);
        fputs(", \"values\": [", f);
        int64_t numel = xf_shape_numel(&in[i].shape);
        for (int64_t e = 0; e < numel; e++) {
            fputs(e ? ", " : "", f);
            double v = in[i].dtype == XF_F32   ? (double)((const float *)in[i].data)[e]
                       : in[i].dtype == XF_I64 ? (double)((const int64_t *)in[i].data)[e]
                       : in[i].dtype == XF_I32 ? (double)((const int32_t *)in[i].data)[e]
                                               : (double)((const uint8_t *)in[i].data)[e];
            audit_json_num(f, v);
        }
        fputs("]}", f);
        xf_tensor_free(&in[i]);
    }
    xf_free(in);
    fputs(n ? "\n    ]}" : "]}", f);
}

static void write_verdict(FILE *f, const xf_rulesdb_rule_info *info, const xf_rule *r)
{
    fputs("  \"verdict\": ", f);
    if (!info->has_verdict) {
        fputs("null\n", f);
        return;
    }
    fprintf(f, "{\n    \"status\": \"%s\",\n    \"time_ms\": ",
            xf_rulesdb_status_name(info->status));
    audit_json_num(f, info->time_ms);
    fputs(",\n    \"axioms\": ", f);
    write_axioms(f, info->axioms);
    fputs(",\n    \"detail\": ", f);
    audit_json_str(f, info->detail);
    fputs(",\n    \"counterexample\": ", f);
    if (info->counterexample)
        write_counterexample(f, info, r);
    else
        fputs("null", f);
    fputs("\n  }\n", f);
}

static void opt_id(FILE *f, const char *name, int64_t v)
{
    fprintf(f, "  \"%s\": ", name);
    if (v)
        fprintf(f, "%" PRId64 ",\n", v);
    else
        fputs("null,\n", f);
}

void xf_audit_write_json(FILE *f, const xf_rulesdb_rule_info *info, const xf_rule *r)
{
    fprintf(f, "{\n  \"format\": \"rlflow.rule\",\n  \"format_version\": %d,\n", XF_AUDIT_JSON_VERSION);
    fprintf(f, "  \"id\": %" PRId64 ",\n  \"status\": \"%s\",\n", info->id,
            xf_rulesdb_status_name(info->status));
    fprintf(f, "  \"size\": %d,\n  \"src_ops\": %d,\n  \"dst_ops\": %d,\n", info->size,
            info->src_ops, info->dst_ops);
    fprintf(f, "  \"fingerprint\": \"0x%016" PRIx64 "\",\n", info->fingerprint);
    opt_id(f, "run_id", info->run_id);
    fputs("  \"why\": ", f);
    audit_json_str(f, info->why);
    fputs(",\n", f);
    opt_id(f, "subsumed_by", info->subsumed_by);
    write_inputs(f, &r->src);
    write_side(f, "source", &r->src, 's');
    fputs(",\n", f);
    write_side(f, "target", &r->dst, 't');
    fputs(",\n", f);
    write_verdict(f, info, r);
    fputs("}\n", f);
}
