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
 * shapes are not stored: decoding rebuilds the graph with the xf_graph
 * builders, which re-infer them, and validates the result.
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

/* -------------------------------------------------------------- deserialize */

/* Value numbers of the blob -> value ids of the graph being built. */
typedef struct value_map {
    int *ids;
    int n, cap;
} value_map;

static int vm_push(value_map *m, int id)
{
    if (m->n == m->cap) {
        int cap = m->cap ? m->cap * 2 : 16;
        int *ids = xf_realloc(m->ids, sizeof(int) * (size_t)cap);
        if (!ids) return 0;
        m->ids = ids;
        m->cap = cap;
    }
    m->ids[m->n++] = id;
    return 1;
}

/* names: NULL-terminated (see rulesdb.h); *names NULL once exhausted. */
static xf_status read_inputs(bytereader *r, const char *const *names, xf_graph *g, value_map *m,
                             xf_error *err)
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
        xf_shape s = xf_shape_make((int)rank, dims);
        char fallback[32];
        const char *name = *names ? *names++ : NULL;
        if (!name) {
            snprintf(fallback, sizeof fallback, "in%llu", (unsigned long long)i);
            name = fallback;
        }
        int v = xf_graph_add_input(g, name, (xf_dtype)dt, &s, err);
        if (v < 0) return err->code;
        if (!vm_push(m, v)) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory loading a graph");
    }
    return XF_OK;
}

static xf_status read_node(bytereader *r, uint64_t k, xf_graph *g, value_map *m, xf_error *err)
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
    if (n_in > (uint64_t)m->n + 1024 || n_in > r->len)
        return XF_FAIL(err, XF_ERR_PARSE, "node %llu (%s): %llu inputs is impossible",
                       (unsigned long long)k, name, (unsigned long long)n_in);
    int *ins = xf_malloc(sizeof(int) * (size_t)(n_in + 1));
    if (!ins) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory loading a graph");
    for (uint64_t j = 0; j < n_in; j++) {
        uint64_t ref = db_get_uvarint(r);
        if (ref > (uint64_t)m->n) {
            xf_free(ins);
            return XF_FAIL(err, XF_ERR_PARSE,
                           "node %llu (%s): input %llu refers to value %llu, only %d defined "
                           "before it",
                           (unsigned long long)k, name, (unsigned long long)j,
                           (unsigned long long)ref - 1, m->n);
        }
        ins[j] = ref == 0 ? -1 : m->ids[ref - 1];
    }
    uint64_t n_out = db_get_uvarint(r);
    if (r->bad || n_out == 0 || n_out > MAX_NODE_OUTPUTS) {
        xf_free(ins);
        return XF_FAIL(err, XF_ERR_PARSE, "node %llu (%s): bad output count", (unsigned long long)k,
                       name);
    }
    int idx = xf_graph_add_node(g, op, &p, ins, (int)n_in, (int)n_out, NULL, err);
    xf_free(ins);
    if (idx < 0) {
        xf_error_prefix(err, "node %llu (%s)", (unsigned long long)k, name);
        return err->code;
    }
    for (int j = 0; j < g->nodes[idx].n_outputs; j++)
        if (!vm_push(m, g->nodes[idx].outputs[j]))
            return XF_FAIL(err, XF_ERR_NOMEM, "out of memory loading a graph");
    return XF_OK;
}

static xf_status read_graph(bytereader *r, const char *const *names, xf_graph *g, value_map *m,
                            xf_error *err)
{
    uint8_t m0 = db_get_byte(r), m1 = db_get_byte(r), version = db_get_byte(r);
    if (r->bad || m0 != MAGIC0 || m1 != MAGIC1)
        return XF_FAIL(err, XF_ERR_PARSE, "not a serialized rlflow graph (bad magic)");
    if (version != XF_RULESDB_GRAPH_FORMAT)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                       "graph format version %d; this build reads version %d", version,
                       XF_RULESDB_GRAPH_FORMAT);
    xf_status st = read_inputs(r, names, g, m, err);
    if (st != XF_OK) return st;
    uint64_t n_nodes = db_get_uvarint(r);
    if (n_nodes > r->len) return XF_FAIL(err, XF_ERR_PARSE, "node count %llu is impossible", (unsigned long long)n_nodes);
    for (uint64_t k = 0; k < n_nodes && !r->bad; k++) {
        st = read_node(r, k, g, m, err);
        if (st != XF_OK) return st;
    }
    uint64_t n_out = db_get_uvarint(r);
    if (n_out > r->len) return XF_FAIL(err, XF_ERR_PARSE, "output count %llu is impossible", (unsigned long long)n_out);
    for (uint64_t i = 0; i < n_out && !r->bad; i++) {
        uint64_t ref = db_get_uvarint(r);
        if (ref >= (uint64_t)m->n)
            return XF_FAIL(err, XF_ERR_PARSE, "output %llu refers to value %llu, only %d defined",
                           (unsigned long long)i, (unsigned long long)ref, m->n);
        st = xf_graph_mark_output(g, m->ids[ref], err);
        if (st != XF_OK) return st;
    }
    if (r->bad) return XF_FAIL(err, XF_ERR_PARSE, "serialized graph is truncated");
    if (r->pos != r->len)
        return XF_FAIL(err, XF_ERR_PARSE, "%zu stray bytes after the serialized graph",
                       r->len - r->pos);
    return xf_graph_validate(g, err);
}

xf_status xf_rulesdb_graph_deserialize(const uint8_t *buf, size_t len,
                                       const char *const *input_names, xf_graph *out,
                                       xf_error *err)
{
    xf_error local;
    if (!err) err = &local; /* the builders' codes are read back from it */
    xf_graph_init(out);
    bytereader r = {buf, len, 0, 0};
    value_map m = {0};
    xf_status st = read_graph(&r, input_names, out, &m, err);
    xf_free(m.ids);
    if (st != XF_OK) xf_graph_free(out);
    return st;
}
