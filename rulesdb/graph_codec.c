/*
 * graph_codec.c — the compact, versioned serialization of a rule side.
 *
 *   "XG" version(1 byte)
 *   n_inputs  { dtype(1 byte) rank dims... }            graph inputs, in order
 *   n_nodes   { len op-name  params  n_in refs...  n_out }
 *   n_outputs refs...
 *
 * Counts and refs are unsigned varints, dims signed (zig-zag) varints,
 * params as in params_codec.c. Values are numbered as they appear: graph
 * inputs first, then each node's outputs; an input ref is value+1, 0 for an
 * omitted optional input; output refs are plain value numbers. Nodes are
 * written in xf_graph_canonical_order (ready nodes by structural hash), so
 * graphs that differ only in node order or names serialize alike. Output
 * shapes are not stored. Decoding hands the graph to a sink (ir.h) in the
 * blob's own numbering; deserializing is decoding into the xf_graph
 * builders, which re-infer the shapes, and validating the result.
 */
#include "db_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC0 'X'
#define MAGIC1 'G'
#define MAX_OP_NAME 63
#define MAX_NODE_OUTPUTS 4096

/* ---------------------------------------------------------------- serialize */

static xf_status check_serializable(const xf_graph *g, xf_error *err)
{
    for (int i = 0; i < g->n_values; i++)
        if (g->values[i].kind == XF_VALUE_CONST)
            return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                           "value %d ('%s') is a constant initializer; rule graphs take weights "
                           "as inputs and constants from generator ops",
                           i, g->values[i].name ? g->values[i].name : "");
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].op == XF_OP_OPAQUE) {
            char d[160];
            return XF_FAIL(err, XF_ERR_UNSUPPORTED, "%s is opaque and cannot be part of a rule",
                           xf_node_describe(g, i, d, sizeof d));
        }
    return xf_graph_validate(g, err);
}

xf_status xf_rulesdb_graph_serialize(const xf_graph *g, uint8_t **buf, size_t *len, xf_error *err)
{
    *buf = NULL;
    *len = 0;
    xf_status st = check_serializable(g, err);
    if (st != XF_OK) return st;
    int *order = xf_malloc(sizeof(int) * ((size_t)g->n_nodes + 1));
    int *num = xf_malloc(sizeof(int) * ((size_t)g->n_values + 1)); /* value id -> number */
    bytebuf b = {0};
    if (!order || !num) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory serializing a graph");
        goto out;
    }
    st = xf_graph_canonical_order(g, order, err);
    if (st != XF_OK) goto out;
    db_put_byte(&b, MAGIC0);
    db_put_byte(&b, MAGIC1);
    db_put_byte(&b, XF_RULESDB_GRAPH_FORMAT);
    db_put_uvarint(&b, (uint64_t)g->n_inputs);
    int next = 0;
    for (int i = 0; i < g->n_inputs; i++) {
        const xf_value *v = &g->values[g->inputs[i]];
        db_put_byte(&b, (uint8_t)v->dtype);
        db_put_uvarint(&b, (uint64_t)v->shape.rank);
        for (int d = 0; d < v->shape.rank; d++) db_put_svarint(&b, v->shape.dims[d]);
        num[g->inputs[i]] = next++;
    }
    db_put_uvarint(&b, (uint64_t)g->n_nodes);
    for (int k = 0; k < g->n_nodes; k++) {
        const xf_node *n = &g->nodes[order[k]];
        const char *name = xf_op_get(n->op)->name;
        db_put_uvarint(&b, strlen(name));
        db_put_bytes(&b, name, strlen(name));
        db_params_encode(&b, &n->params);
        db_put_uvarint(&b, (uint64_t)n->n_inputs);
        for (int j = 0; j < n->n_inputs; j++)
            db_put_uvarint(&b, n->inputs[j] < 0 ? 0 : (uint64_t)num[n->inputs[j]] + 1);
        db_put_uvarint(&b, (uint64_t)n->n_outputs);
        for (int j = 0; j < n->n_outputs; j++) num[n->outputs[j]] = next++;
    }
    db_put_uvarint(&b, (uint64_t)g->n_outputs);
    for (int i = 0; i < g->n_outputs; i++) db_put_uvarint(&b, (uint64_t)num[g->outputs[i]]);
    if (b.oom) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory serializing a graph");
        goto out;
    }
    *buf = b.data;
    *len = b.len;
    b.data = NULL;
out:
    xf_free(b.data);
    xf_free(order);
    xf_free(num);
    return st;
}

/* ------------------------------------------------------------------ decode */

/* names: NULL-terminated (see rulesdb.h); *names NULL once exhausted. */
static xf_status read_inputs(bytereader *r, const char *const *names, const xf_graph_sink *s,
                             int *n_values, xf_error *err)
{
    static const char *const none[1] = {NULL};
    if (!names) names = none;
    uint64_t n = db_get_uvarint(r);
    if (n > r->len) return XF_FAIL(err, XF_ERR_PARSE, "input count %llu is impossible", (unsigned long long)n);
    for (uint64_t i = 0; i < n && !r->bad; i++) {
        int dt = db_get_byte(r);
        uint64_t rank = db_get_uvarint(r);
        if (dt <= XF_DTYPE_INVALID || dt >= XF_DTYPE_COUNT)
            return XF_FAIL(err, XF_ERR_PARSE, "input %llu has unknown dtype %d", (unsigned long long)i, dt);
        if (rank > XF_MAX_DIMS)
            return XF_FAIL(err, XF_ERR_PARSE, "input %llu has rank %llu (at most %d)",
                           (unsigned long long)i, (unsigned long long)rank, XF_MAX_DIMS);
        int64_t dims[XF_MAX_DIMS] = {0};
        for (uint64_t d = 0; d < rank; d++) {
            dims[d] = db_get_svarint(r);
            if (dims[d] < 0)
                return XF_FAIL(err, XF_ERR_PARSE, "input %llu has a negative dimension",
                               (unsigned long long)i);
        }
        xf_shape shape = xf_shape_make((int)rank, dims);
        const char *name = *names ? *names++ : NULL;
        xf_status st = s->input(s->user, name, (xf_dtype)dt, &shape, err);
        if (st != XF_OK) return st;
        (*n_values)++;
    }
    return XF_OK;
}

static xf_status read_node(bytereader *r, uint64_t k, const xf_graph_sink *s, int *n_values,
                           xf_error *err)
{
    char name[MAX_OP_NAME + 1];
    uint64_t len = db_get_uvarint(r);
    if (len == 0 || len > MAX_OP_NAME)
        return XF_FAIL(err, XF_ERR_PARSE, "node %llu: bad operator name length %llu",
                       (unsigned long long)k, (unsigned long long)len);
    db_get_bytes(r, name, (size_t)len);
    name[len] = '\0';
    xf_op op = xf_op_from_name(name);
    if (op == XF_OP_COUNT || op == XF_OP_OPAQUE)
        return XF_FAIL(err, XF_ERR_PARSE, "node %llu: unknown operator '%s'", (unsigned long long)k,
                       name);
    xf_params p;
    xf_status st = db_params_decode(r, &p, err);
    if (st != XF_OK) {
        xf_error_prefix(err, "node %llu (%s)", (unsigned long long)k, name);
        return st;
    }
    uint64_t n_in = db_get_uvarint(r);
    if (n_in > (uint64_t)*n_values + 1024 || n_in > r->len)
        return XF_FAIL(err, XF_ERR_PARSE, "node %llu (%s): %llu inputs is impossible",
                       (unsigned long long)k, name, (unsigned long long)n_in);
    int few[16]; /* most nodes: no allocation */
    int *ins = n_in <= 16 ? few : xf_malloc(sizeof(int) * (size_t)n_in);
    if (!ins) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory decoding a graph");
    for (uint64_t j = 0; j < n_in; j++) {
        uint64_t ref = db_get_uvarint(r);
        if (ref > (uint64_t)*n_values) {
            if (ins != few) xf_free(ins);
            return XF_FAIL(err, XF_ERR_PARSE,
                           "node %llu (%s): input %llu refers to value %llu, only %d defined "
                           "before it",
                           (unsigned long long)k, name, (unsigned long long)j,
                           (unsigned long long)ref - 1, *n_values);
        }
        ins[j] = (int)ref - 1; /* 0: omitted, -1 */
    }
    uint64_t n_out = db_get_uvarint(r);
    if (r->bad || n_out == 0 || n_out > MAX_NODE_OUTPUTS) {
        if (ins != few) xf_free(ins);
        return XF_FAIL(err, XF_ERR_PARSE, "node %llu (%s): bad output count", (unsigned long long)k,
                       name);
    }
    st = s->node(s->user, op, &p, ins, (int)n_in, (int)n_out, err);
    if (ins != few) xf_free(ins);
    if (st != XF_OK) {
        xf_error_prefix(err, "node %llu (%s)", (unsigned long long)k, name);
        return st;
    }
    *n_values += (int)n_out;
    return XF_OK;
}

xf_status xf_rulesdb_graph_decode(const uint8_t *buf, size_t len, const char *const *input_names,
                                  const xf_graph_sink *s, xf_error *err)
{
    bytereader r = {buf, len, 0, 0};
    uint8_t m0 = db_get_byte(&r), m1 = db_get_byte(&r), version = db_get_byte(&r);
    if (r.bad || m0 != MAGIC0 || m1 != MAGIC1)
        return XF_FAIL(err, XF_ERR_PARSE, "not a serialized rlflow graph (bad magic)");
    if (version != XF_RULESDB_GRAPH_FORMAT)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                       "graph format version %d; this build reads version %d", version,
                       XF_RULESDB_GRAPH_FORMAT);
    int n_values = 0;
    xf_status st = read_inputs(&r, input_names, s, &n_values, err);
    if (st != XF_OK) return st;
    uint64_t n_nodes = db_get_uvarint(&r);
    if (n_nodes > r.len) return XF_FAIL(err, XF_ERR_PARSE, "node count %llu is impossible", (unsigned long long)n_nodes);
    for (uint64_t k = 0; k < n_nodes && !r.bad; k++) {
        st = read_node(&r, k, s, &n_values, err);
        if (st != XF_OK) return st;
    }
    uint64_t n_out = db_get_uvarint(&r);
    if (n_out > r.len) return XF_FAIL(err, XF_ERR_PARSE, "output count %llu is impossible", (unsigned long long)n_out);
    for (uint64_t i = 0; i < n_out && !r.bad; i++) {
        uint64_t ref = db_get_uvarint(&r);
        if (ref >= (uint64_t)n_values)
            return XF_FAIL(err, XF_ERR_PARSE, "output %llu refers to value %llu, only %d defined",
                           (unsigned long long)i, (unsigned long long)ref, n_values);
        st = s->output(s->user, (int)ref, err);
        if (st != XF_OK) return st;
    }
    if (r.bad) return XF_FAIL(err, XF_ERR_PARSE, "serialized graph is truncated");
    if (r.pos != r.len)
        return XF_FAIL(err, XF_ERR_PARSE, "%zu stray bytes after the serialized graph",
                       r.len - r.pos);
    return XF_OK;
}

/* -------------------------------------------------------------- deserialize */

/* The xf_graph builders as a sink: value numbers -> value ids of the graph
 * being built. */
typedef struct builder {
    xf_graph *g;
    int *ids;
    int n, cap;
} builder;

static int push_id(builder *b, int id)
{
    if (b->n == b->cap) {
        int cap = b->cap ? b->cap * 2 : 16;
        int *ids = xf_realloc(b->ids, sizeof(int) * (size_t)cap);
        if (!ids) return 0;
        b->ids = ids;
        b->cap = cap;
    }
    b->ids[b->n++] = id;
    return 1;
}

static xf_status build_input(void *user, const char *name, xf_dtype dtype, const xf_shape *shape,
                             xf_error *err)
{
    builder *b = user;
    char fallback[32];
    if (!name) {
        snprintf(fallback, sizeof fallback, "in%d", b->g->n_inputs);
        name = fallback;
    }
    int v = xf_graph_add_input(b->g, name, dtype, shape, err);
    if (v < 0) return err->code;
    if (!push_id(b, v)) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory loading a graph");
    return XF_OK;
}

static xf_status build_node(void *user, xf_op op, const xf_params *params, const int *inputs,
                            int n_inputs, int n_outputs, xf_error *err)
{
    builder *b = user;
    int *ids = xf_malloc(sizeof(int) * ((size_t)n_inputs + 1));
    if (!ids) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory loading a graph");
    for (int j = 0; j < n_inputs; j++) ids[j] = inputs[j] < 0 ? -1 : b->ids[inputs[j]];
    int idx = xf_graph_add_node(b->g, op, params, ids, n_inputs, n_outputs, NULL, err);
    xf_free(ids);
    if (idx < 0) return err->code;
    for (int j = 0; j < b->g->nodes[idx].n_outputs; j++)
        if (!push_id(b, b->g->nodes[idx].outputs[j]))
            return XF_FAIL(err, XF_ERR_NOMEM, "out of memory loading a graph");
    return XF_OK;
}

static xf_status build_output(void *user, int value, xf_error *err)
{
    builder *b = user;
    return xf_graph_mark_output(b->g, b->ids[value], err);
}

xf_status xf_rulesdb_graph_deserialize(const uint8_t *buf, size_t len,
                                       const char *const *input_names, xf_graph *out,
                                       xf_error *err)
{
    xf_error local;
    if (!err) err = &local; /* the builders' codes are read back from it */
    xf_graph_init(out);
    builder b = {out, NULL, 0, 0};
    xf_graph_sink sink = {&b, build_input, build_node, build_output};
    xf_status st = xf_rulesdb_graph_decode(buf, len, input_names, &sink, err);
    if (st == XF_OK) st = xf_graph_validate(out, err);
    xf_free(b.ids);
    if (st != XF_OK) xf_graph_free(out);
    return st;
}
