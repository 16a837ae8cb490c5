/*
 * test_onnx_import.c — the ONNX importer on models built in memory with the
 * protobuf-c API: every mapped op_type lands on the right operator with the
 * right parameters (opset 11 and 13+ forms of Split, Squeeze, Unsqueeze,
 * Softmax, ReduceMean), auto_pad and Softmax-11 are checked numerically
 * against values computed here, shape subgraphs fold away, unknown ops stay
 * opaque with their attributes, and malformed models (dangling inputs,
 * duplicate outputs, cycles, opsets 10 and 18, a node without op_type,
 * truncated or garbage bytes)
 * give errors that name the file and the node. Also external-data
 * initializers and symbolic input dims sized through the options (and
 * kept on export, with or without an external data file), and
 * shapes whose element count overflows (inputs, --dim sizes, inferred
 * outputs) refused by the importer and by the tools, which write nothing;
 * models over the memory limit refused by the tools before allocating.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_fixture.h"
#include "onnx.pb-c.h"
#include "target/target.h"
#include "testutil.h"

/* ONNX TensorProto.DataType codes */
enum { T_FLOAT = 1, T_INT32 = 6, T_INT64 = 7, T_BOOL = 9, T_DOUBLE = 11 };

#define MB_MAX 64
#define MB_ALLOCS 4096

/* ------------------------------------------------------------ model builder */

/* A ModelProto under construction; every piece is calloc'd and listed in
 * allocs, freed together by mb_free. */
typedef struct mb {
    Onnx__ModelProto model;
    Onnx__GraphProto graph;
    Onnx__OperatorSetIdProto opset[2];
    Onnx__OperatorSetIdProto *opsets[2];
    Onnx__NodeProto *nodes[MB_MAX];
    Onnx__ValueInfoProto *inputs[MB_MAX], *outputs[MB_MAX], *vinfo[MB_MAX];
    Onnx__TensorProto *inits[MB_MAX];
    void *allocs[MB_ALLOCS];
    int n_allocs;
} mb;

static void *mb_alloc(mb *m, size_t n)
{
    ck_assert_int_lt(m->n_allocs, MB_ALLOCS);
    void *p = calloc(1, n ? n : 1);
    ck_assert_ptr_nonnull(p);
    m->allocs[m->n_allocs++] = p;
    return p;
}

static char *mb_str(mb *m, const char *s)
{
    char *d = mb_alloc(m, strlen(s) + 1);
    memcpy(d, s, strlen(s) + 1);
    return d;
}

static mb *mb_new(int64_t opset)
{
    mb *m = calloc(1, sizeof *m);
    ck_assert_ptr_nonnull(m);
    onnx__model_proto__init(&m->model);
    onnx__graph_proto__init(&m->graph);
    onnx__operator_set_id_proto__init(&m->opset[0]);
    m->opset[0].domain = mb_str(m, "");
    m->opset[0].has_version = 1;
    m->opset[0].version = opset;
    m->opsets[0] = &m->opset[0];
    m->model.has_ir_version = 1;
    m->model.ir_version = 8;
    m->model.n_opset_import = 1;
    m->model.opset_import = m->opsets;
    m->model.graph = &m->graph;
    m->graph.name = mb_str(m, "test");
    m->graph.node = m->nodes;
    m->graph.input = m->inputs;
    m->graph.output = m->outputs;
    m->graph.value_info = m->vinfo;
    m->graph.initializer = m->inits;
    return m;
}

static void mb_free(mb *m)
{
    for (int i = 0; i < m->n_allocs; i++) free(m->allocs[i]);
    free(m);
}

/* Declares a second opset_import (a custom domain). */
static void mb_domain(mb *m, const char *domain, int64_t version)
{
    onnx__operator_set_id_proto__init(&m->opset[1]);
    m->opset[1].domain = mb_str(m, domain);
    m->opset[1].has_version = 1;
    m->opset[1].version = version;
    m->opsets[1] = &m->opset[1];
    m->model.n_opset_import = 2;
}

/* A tensor-typed ValueInfoProto; params[i] (when params and params[i]) makes
 * dim i symbolic. rank < 0: no type at all. */
static Onnx__ValueInfoProto *mb_vi(mb *m, const char *name, int elem, int rank,
                                   const int64_t *dims, const char *const *params)
{
    Onnx__ValueInfoProto *vi = mb_alloc(m, sizeof *vi);
    onnx__value_info_proto__init(vi);
    vi->name = mb_str(m, name);
    if (rank < 0) return vi;
    Onnx__TypeProto *tp = mb_alloc(m, sizeof *tp);
    onnx__type_proto__init(tp);
    Onnx__TypeProto__Tensor *tt = mb_alloc(m, sizeof *tt);
    onnx__type_proto__tensor__init(tt);
    tt->has_elem_type = 1;
    tt->elem_type = elem;
    Onnx__TensorShapeProto *sp = mb_alloc(m, sizeof *sp);
    onnx__tensor_shape_proto__init(sp);
    sp->n_dim = (size_t)rank;
    sp->dim = mb_alloc(m, sizeof(*sp->dim) * (size_t)(rank + 1));
    for (int i = 0; i < rank; i++) {
        Onnx__TensorShapeProto__Dimension *d = mb_alloc(m, sizeof *d);
        onnx__tensor_shape_proto__dimension__init(d);
        if (params && params[i]) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = mb_str(m, params[i]);
        } else {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = dims[i];
        }
        sp->dim[i] = d;
    }
    tt->shape = sp;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    tp->tensor_type = tt;
    vi->type = tp;
    return vi;
}

static void mb_input(mb *m, const char *name, int elem, int rank, const int64_t *dims)
{
    m->inputs[m->graph.n_input++] = mb_vi(m, name, elem, rank, dims, NULL);
}

/* A graph output; rank < 0 declares only its name. */
static void mb_output(mb *m, const char *name, int elem, int rank, const int64_t *dims)
{
    m->outputs[m->graph.n_output++] = mb_vi(m, name, elem, rank, dims, NULL);
}

static void mb_value_info(mb *m, const char *name, int elem, int rank, const int64_t *dims)
{
    m->vinfo[m->graph.n_value_info++] = mb_vi(m, name, elem, rank, dims, NULL);
}

static size_t elem_size(int elem)
{
    return elem == T_INT64 || elem == T_DOUBLE ? 8 : elem == T_BOOL ? 1 : 4;
}

/* A TensorProto with raw_data (little-endian host assumed, as x86/arm). */
static Onnx__TensorProto *mb_tensor(mb *m, const char *name, int elem, int rank,
                                    const int64_t *dims, const void *data)
{
    Onnx__TensorProto *t = mb_alloc(m, sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = mb_str(m, name);
    t->has_data_type = 1;
    t->data_type = elem;
    t->n_dims = (size_t)rank;
    t->dims = mb_alloc(m, sizeof(int64_t) * (size_t)(rank + 1));
    size_t n = 1;
    for (int i = 0; i < rank; i++) {
        t->dims[i] = dims[i];
        n *= (size_t)dims[i];
    }
    t->has_raw_data = 1;
    t->raw_data.len = n * elem_size(elem);
    t->raw_data.data = mb_alloc(m, t->raw_data.len);
    if (t->raw_data.len) memcpy(t->raw_data.data, data, t->raw_data.len);
    return t;
}

static void mb_init(mb *m, const char *name, int elem, int rank, const int64_t *dims,
                    const void *data)
{
    m->inits[m->graph.n_initializer++] = mb_tensor(m, name, elem, rank, dims, data);
}

static void mb_init_i64(mb *m, const char *name, int n, const int64_t *vals)
{
    int64_t d = n;
    mb_init(m, name, T_INT64, 1, &d, vals);
}

/* Splits a space-separated list; "-" stands for an omitted ("") name. */
static char **mb_list(mb *m, const char *list, size_t *n)
{
    char **v = mb_alloc(m, sizeof(char *) * 33);
    *n = 0;
    char buf[256];
    const char *p = list;
    while (*p) {
        while (*p == ' ') p++;
        if (!*p) break;
        size_t k = strcspn(p, " ");
        ck_assert_uint_lt(k, sizeof buf);
        memcpy(buf, p, k);
        buf[k] = '\0';
        ck_assert_uint_lt(*n, 32);
        v[(*n)++] = mb_str(m, strcmp(buf, "-") == 0 ? "" : buf);
        p += k;
    }
    return v;
}

static Onnx__NodeProto *mb_node(mb *m, const char *op_type, const char *name, const char *ins,
                                const char *outs)
{
    Onnx__NodeProto *n = mb_alloc(m, sizeof *n);
    onnx__node_proto__init(n);
    n->op_type = mb_str(m, op_type);
    n->name = mb_str(m, name);
    n->input = mb_list(m, ins, &n->n_input);
    n->output = mb_list(m, outs, &n->n_output);
    ck_assert_uint_lt(m->graph.n_node, MB_MAX);
    m->nodes[m->graph.n_node++] = n;
    return n;
}

static Onnx__AttributeProto *mb_attr(mb *m, Onnx__NodeProto *n, const char *name,
                                     Onnx__AttributeProto__AttributeType type)
{
    Onnx__AttributeProto *a = mb_alloc(m, sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = mb_str(m, name);
    a->has_type = 1;
    a->type = type;
    Onnx__AttributeProto **v = mb_alloc(m, sizeof(*v) * (n->n_attribute + 1));
    if (n->n_attribute) memcpy(v, n->attribute, sizeof(*v) * n->n_attribute);
    v[n->n_attribute++] = a;
    n->attribute = v;
    return a;
}

static void attr_i(mb *m, Onnx__NodeProto *n, const char *name, int64_t v)
{
    Onnx__AttributeProto *a = mb_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_i = 1;
    a->i = v;
}

static void attr_f(mb *m, Onnx__NodeProto *n, const char *name, float v)
{
    Onnx__AttributeProto *a = mb_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    a->has_f = 1;
    a->f = v;
}

static void attr_s(mb *m, Onnx__NodeProto *n, const char *name, const char *v)
{
    Onnx__AttributeProto *a = mb_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    a->has_s = 1;
    a->s.len = strlen(v);
    a->s.data = (uint8_t *)mb_str(m, v);
}

static void attr_ints(mb *m, Onnx__NodeProto *n, const char *name, int count, const int64_t *v)
{
    Onnx__AttributeProto *a = mb_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->n_ints = (size_t)count;
    a->ints = mb_alloc(m, sizeof(int64_t) * (size_t)(count + 1));
    if (count) memcpy(a->ints, v, sizeof(int64_t) * (size_t)count);
}

static void attr_floats(mb *m, Onnx__NodeProto *n, const char *name, int count, const float *v)
{
    Onnx__AttributeProto *a =
        mb_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
    a->n_floats = (size_t)count;
    a->floats = mb_alloc(m, sizeof(float) * (size_t)(count + 1));
    memcpy(a->floats, v, sizeof(float) * (size_t)count);
}

static void attr_t(mb *m, Onnx__NodeProto *n, const char *name, Onnx__TensorProto *t)
{
    Onnx__AttributeProto *a = mb_attr(m, n, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR);
    a->t = t;
}

/* The then (b = 0) or else branch of If node n: a graph with one float
 * output `out` of rank-2 shape `dims` and no nodes yet. */
static Onnx__GraphProto *mb_if_branch(mb *m, Onnx__NodeProto *n, int b, const char *out,
                                      const int64_t *dims)
{
    Onnx__GraphProto *gp = mb_alloc(m, sizeof *gp);
    onnx__graph_proto__init(gp);
    gp->name = mb_str(m, b ? "else" : "then");
    gp->n_output = 1;
    gp->output = mb_alloc(m, sizeof *gp->output);
    gp->output[0] = mb_vi(m, out, T_FLOAT, 2, dims, NULL);
    mb_attr(m, n, b ? "else_branch" : "then_branch", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH)
        ->g = gp;
    return gp;
}

static uint8_t *mb_pack(mb *m, size_t *len)
{
    *len = onnx__model_proto__get_packed_size(&m->model);
    uint8_t *buf = malloc(*len ? *len : 1);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(onnx__model_proto__pack(&m->model, buf), *len);
    return buf;
}

static xf_status mb_load(mb *m, const xf_onnx_options *o, xf_graph *g, xf_error *err)
{
    size_t len;
    uint8_t *buf = mb_pack(m, &len);
    xf_status st = xf_onnx_load_buffer(buf, len, "test.onnx", NULL, o, g, err);
    free(buf);
    return st;
}

/* Options sizing one symbolic dim; name and value must outlive them. */
static xf_onnx_options one_dim(const char *const *name, const int64_t *value)
{
    xf_onnx_options o = xf_onnx_default_options();
    o.n_dim_overrides = 1;
    o.dim_names = name;
    o.dim_values = value;
    return o;
}

static void mb_load_ok(mb *m, xf_graph *g)
{
    xf_error err;
    xf_status st = mb_load(m, NULL, g, &err);
    ck_assert_msg(st == XF_OK, "import failed: %s", err.msg);
}

/* Writes the model to <tmpdir>/<name>; returns the path (static buffer). */
static const char *mb_save(mb *m, const char *name)
{
    size_t len;
    uint8_t *buf = mb_pack(m, &len);
    const char *path = xf_test_tmp(name);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
    fclose(f);
    free(buf);
    return path;
}

/* ---------------------------------------------------------- graph helpers */

static int count_op(const xf_graph *g, xf_op op)
{
    int n = 0;
    for (int i = 0; i < g->n_nodes; i++) n += g->nodes[i].op == op;
    return n;
}

/* The one node of op `op` (asserted unique). */
static const xf_node *the(const xf_graph *g, xf_op op)
{
    const xf_node *found = NULL;
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].op == op) {
            ck_assert_msg(!found, "more than one %s node", xf_op_get(op)->name);
            found = &g->nodes[i];
        }
    ck_assert_msg(found != NULL, "no %s node", xf_op_get(op)->name);
    return found;
}

/* Imports a model and checks it is exactly one node of op `op`. */
static const xf_node *single(mb *m, xf_graph *g, xf_op op)
{
    mb_load_ok(m, g);
    ck_assert_msg(g->n_nodes == 1, "%d nodes, expected one %s", g->n_nodes, xf_op_get(op)->name);
    ck_assert_msg(g->nodes[0].op == op, "got %s, expected %s", xf_op_get(g->nodes[0].op)->name,
                  xf_op_get(op)->name);
    return &g->nodes[0];
}

static xf_tensor make_f32(int rank, const int64_t *dims, const float *data)
{
    xf_tensor t;
    xf_error err;
    xf_shape s = xf_shape_make(rank, dims);
    ck_assert_int_eq(xf_tensor_alloc(&t, XF_F32, &s, &err), XF_OK);
    memcpy(t.data, data, xf_tensor_bytes(&t));
    return t;
}

/* Runs g on inputs and returns its outputs (caller frees each). */
static void run(const xf_graph *g, const xf_tensor *in, xf_tensor *out)
{
    xf_error err;
    ck_assert_msg(xf_interp_run(g, in, g->n_inputs, out, &err) == XF_OK, "run: %s", err.msg);
}

static void expect_f32(const xf_tensor *t, const float *want, int64_t n, float tol)
{
    ck_assert_int_eq(t->dtype, XF_F32);
    ck_assert_int_eq(xf_shape_numel(&t->shape), n);
    const float *got = t->data;
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(fabsf(got[i] - want[i]) <= tol, "element %lld: got %g, want %g",
                      (long long)i, (double)got[i], (double)want[i]);
}

static void expect_shape(const xf_shape *s, int rank, const int64_t *dims)
{
    xf_shape w = xf_shape_make(rank, dims);
    char a[96], b[96];
    ck_assert_msg(xf_shape_equal(s, &w), "shape %s, want %s", xf_shape_str(s, a, sizeof a),
                  xf_shape_str(&w, b, sizeof b));
}

static void expect_error(mb *m, xf_status code, const char *const *needles)
{
    xf_graph g;
    xf_error err;
    xf_status st = mb_load(m, NULL, &g, &err);
    ck_assert_msg(st == code, "status %s (want %s): %s", xf_status_name(st), xf_status_name(code),
                  st == XF_OK ? "" : err.msg);
    for (int i = 0; needles && needles[i]; i++)
        ck_assert_msg(strstr(err.msg, needles[i]) != NULL, "message lacks '%s': %s", needles[i],
                      err.msg);
    ck_assert_int_eq(g.n_nodes, 0); /* left initialised */
}

static const int64_t D23[] = {2, 3};

/* ------------------------------------------------------- element-wise ops */

START_TEST(unary_and_binary_ops)
{
    static const struct {
        const char *onnx;
        xf_op op;
    } unary[] = {{"Relu", XF_OP_RELU}, {"Sigmoid", XF_OP_SIGMOID}, {"Tanh", XF_OP_TANH},
                 {"Erf", XF_OP_ERF},   {"Sqrt", XF_OP_SQRT},       {"Exp", XF_OP_EXP},
                 {"Log", XF_OP_LOG},   {"Neg", XF_OP_NEG},         {"Abs", XF_OP_ABS},
                 {"Reciprocal", XF_OP_RECIPROCAL}, {"Identity", XF_OP_IDENTITY}};
    for (size_t i = 0; i < sizeof unary / sizeof unary[0]; i++) {
        mb *m = mb_new(13);
        mb_input(m, "x", T_FLOAT, 2, D23);
        mb_node(m, unary[i].onnx, "n", "x", "y");
        mb_output(m, "y", T_FLOAT, 2, D23);
        xf_graph g;
        single(m, &g, unary[i].op);
        expect_shape(&g.values[g.outputs[0]].shape, 2, D23);
        xf_graph_free(&g);
        mb_free(m);
    }
    static const struct {
        const char *onnx;
        xf_op op;
    } binary[] = {{"Add", XF_OP_ADD}, {"Sub", XF_OP_SUB},  {"Mul", XF_OP_MUL},
                  {"Div", XF_OP_DIV}, {"Pow", XF_OP_POW},  {"Equal", XF_OP_EQUAL}};
    for (size_t i = 0; i < sizeof binary / sizeof binary[0]; i++) {
        mb *m = mb_new(13);
        mb_input(m, "x", T_FLOAT, 2, D23);
        int64_t d3 = 3;
        mb_input(m, "y", T_FLOAT, 1, &d3);
        mb_node(m, binary[i].onnx, "n", "x y", "z");
        mb_output(m, "z", binary[i].op == XF_OP_EQUAL ? T_BOOL : T_FLOAT, 2, D23);
        xf_graph g;
        single(m, &g, binary[i].op);
        ck_assert_int_eq(g.values[g.outputs[0]].dtype,
                         binary[i].op == XF_OP_EQUAL ? XF_BOOL : XF_F32);
        xf_graph_free(&g);
        mb_free(m);
    }
    /* Sub computes x - y with broadcasting */
    mb *m = mb_new(11);
    mb_input(m, "x", T_FLOAT, 2, D23);
    float w[3] = {0.5f, -1.0f, 2.0f};
    int64_t d3 = 3;
    mb_init(m, "w", T_FLOAT, 1, &d3, w);
    mb_node(m, "Sub", "sub", "x w", "z");
    mb_output(m, "z", T_FLOAT, 2, D23);
    xf_graph g;
    single(m, &g, XF_OP_SUB);
    float xv[6] = {1, 2, 3, 4, 5, 6}, want[6];
    for (int i = 0; i < 6; i++) want[i] = xv[i] - w[i % 3];
    xf_tensor in = make_f32(2, D23, xv), out;
    run(&g, &in, &out);
    expect_f32(&out, want, 6, 0);
    xf_tensor_free(&in);
    xf_tensor_free(&out);
    xf_graph_free(&g);
    mb_free(m);
}
END_TEST

START_TEST(where_cast_dropout)
{
    mb *m = mb_new(13);
    mb_input(m, "c", T_BOOL, 2, D23);
    mb_input(m, "a", T_FLOAT, 2, D23);
    mb_input(m, "b", T_FLOAT, 2, D23);
    mb_node(m, "Where", "w", "c a b", "y");
    mb_output(m, "y", T_FLOAT, 2, D23);
    xf_graph g;
    single(m, &g, XF_OP_WHERE);
    xf_graph_free(&g);
    mb_free(m);

    m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 2, D23);
    attr_i(m, mb_node(m, "Cast", "c", "x", "y"), "to", T_INT64);
    mb_output(m, "y", T_INT64, 2, D23);
    const xf_node *n = single(m, &g, XF_OP_CAST);
    ck_assert_int_eq(n->params.to, XF_I64);
    ck_assert_int_eq(g.values[g.outputs[0]].dtype, XF_I64);
    xf_graph_free(&g);
    mb_free(m);

    /* inference dropout: ratio ignored, the mask output is all true */
    m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 2, D23);
    float ratio = 0.3f;
    mb_init(m, "r", T_FLOAT, 0, NULL, &ratio);
    mb_node(m, "Dropout", "d", "x r", "y mask");
    mb_output(m, "y", T_FLOAT, 2, D23);
    mb_output(m, "mask", T_BOOL, 2, D23);
    n = single(m, &g, XF_OP_DROPOUT);
    ck_assert_int_eq(n->n_inputs, 1);
    ck_assert_int_eq(n->n_outputs, 2);
    float xv[6] = {1, -2, 3, -4, 5, -6};
    xf_tensor in = make_f32(2, D23, xv), out[2];
    run(&g, &in, out);
    expect_f32(&out[0], xv, 6, 0);
    for (int i = 0; i < 6; i++) ck_assert_int_eq(((uint8_t *)out[1].data)[i], 1);
    xf_tensor_free(&in);
    xf_tensor_free(&out[0]);
    xf_tensor_free(&out[1]);
    xf_graph_free(&g);
    mb_free(m);

    /* training mode (a constant true) stays opaque */
    m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 2, D23);
    uint8_t yes = 1;
    mb_init(m, "t", T_BOOL, 0, NULL, &yes);
    mb_node(m, "Dropout", "d", "x - t", "y");
    mb_output(m, "y", T_FLOAT, 2, D23);
    n = single(m, &g, XF_OP_OPAQUE);
    ck_assert_str_eq(n->opaque->op_type, "Dropout");
    xf_graph_free(&g);
    mb_free(m);

    /* an int64 Neg has no rlflow kernel: opaque, typed from the output */
    m = mb_new(13);
    mb_input(m, "x", T_INT64, 2, D23);
    mb_node(m, "Neg", "neg", "x", "y");
    mb_output(m, "y", T_INT64, 2, D23);
    n = single(m, &g, XF_OP_OPAQUE);
    ck_assert_str_eq(n->opaque->op_type, "Neg");
    xf_graph_free(&g);
    mb_free(m);
}
END_TEST

START_TEST(matmul_and_gemm)
{
    mb *m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 2, D23);
    int64_t d34[2] = {3, 4};
    float w[12];
    for (int i = 0; i < 12; i++) w[i] = (float)i;
    mb_init(m, "w", T_FLOAT, 2, d34, w);
    mb_node(m, "MatMul", "mm", "x w", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    xf_graph g;
    single(m, &g, XF_OP_MATMUL);
    int64_t d24[2] = {2, 4};
    expect_shape(&g.values[g.outputs[0]].shape, 2, d24);
    xf_graph_free(&g);
    mb_free(m);

    /* y = 0.5 * a * b^T + 2 * c */
    m = mb_new(11);
    mb_input(m, "a", T_FLOAT, 2, D23);
    int64_t d43[2] = {4, 3}, d4 = 4;
    float b[12], c[4] = {1, 2, 3, 4};
    for (int i = 0; i < 12; i++) b[i] = (float)(i % 5) - 2.0f;
    mb_init(m, "b", T_FLOAT, 2, d43, b);
    mb_init(m, "c", T_FLOAT, 1, &d4, c);
    Onnx__NodeProto *nd = mb_node(m, "Gemm", "gemm", "a b c", "y");
    attr_f(m, nd, "alpha", 0.5f);
    attr_f(m, nd, "beta", 2.0f);
    attr_i(m, nd, "transB", 1);
    mb_output(m, "y", T_FLOAT, 2, d24);
    const xf_node *n = single(m, &g, XF_OP_GEMM);
    ck_assert_float_eq(n->params.alpha, 0.5f);
    ck_assert_float_eq(n->params.beta, 2.0f);
    ck_assert_int_eq(n->params.trans_a, 0);
    ck_assert_int_eq(n->params.trans_b, 1);
    float av[6] = {1, -1, 2, 0.5f, 3, -2}, want[8];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++) {
            float s = 0;
            for (int k = 0; k < 3; k++) s += av[i * 3 + k] * b[j * 3 + k];
            want[i * 4 + j] = 0.5f * s + 2.0f * c[j];
        }
    xf_tensor in = make_f32(2, D23, av), out;
    run(&g, &in, &out);
    expect_f32(&out, want, 8, 1e-5f);
    xf_tensor_free(&in);
    xf_tensor_free(&out);
    xf_graph_free(&g);
    mb_free(m);
}
END_TEST

/* ------------------------------------------------------------ conv, pool */

/* A Conv of x [1,2,6,6] with a [4,2,3,3] weight, stride 2, attribute
 * kernel_shape kdim x kdim. */
static mb *conv_model(const char *auto_pad, const int64_t *pads, int64_t kdim)
{
    mb *m = mb_new(13);
    int64_t dx[4] = {1, 2, 6, 6}, dw[4] = {4, 2, 3, 3};
    mb_input(m, "x", T_FLOAT, 4, dx);
    float w[72];
    for (int i = 0; i < 72; i++) w[i] = (float)((i * 7) % 11) / 11.0f - 0.5f;
    mb_init(m, "w", T_FLOAT, 4, dw, w);
    Onnx__NodeProto *n = mb_node(m, "Conv", "conv", "x w", "y");
    int64_t two[2] = {2, 2}, k[2] = {kdim, kdim};
    attr_ints(m, n, "strides", 2, two);
    attr_ints(m, n, "kernel_shape", 2, k);
    if (auto_pad) attr_s(m, n, "auto_pad", auto_pad);
    if (pads) attr_ints(m, n, "pads", 4, pads);
    mb_output(m, "y", T_FLOAT, -1, NULL);
    return m;
}

START_TEST(conv_auto_pad)
{
    /* out = ceil(6/2) = 3; total pad = (3-1)*2 + 3 - 6 = 1 */
    static const struct {
        const char *mode;
        int32_t pads[4];
    } cases[] = {{"SAME_UPPER", {0, 0, 1, 1}}, {"SAME_LOWER", {1, 1, 0, 0}},
                 {"VALID", {0, 0, 0, 0}},      {"NOTSET", {0, 0, 0, 0}}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        mb *m = conv_model(cases[i].mode, NULL, 3);
        xf_graph g;
        const xf_node *n = single(m, &g, XF_OP_CONV);
        ck_assert_mem_eq(n->params.pads, cases[i].pads, sizeof cases[i].pads);
        ck_assert_int_eq(n->params.kernel[0], 3);
        ck_assert_int_eq(n->params.stride[1], 2);
        ck_assert_int_eq(n->params.dilation[0], 1);
        ck_assert_int_eq(n->params.group, 1);
        xf_graph_free(&g);
        mb_free(m);
    }
    /* explicit pads: ONNX [x1_begin, x2_begin, x1_end, x2_end] = top,left,bottom,right */
    int64_t pads[4] = {1, 2, 0, 1};
    int32_t want[4] = {1, 2, 0, 1};
    mb *m = conv_model(NULL, pads, 3);
    xf_graph g;
    const xf_node *n = single(m, &g, XF_OP_CONV);
    ck_assert_mem_eq(n->params.pads, want, sizeof want);
    int64_t dy[4] = {1, 4, 3, 4};
    expect_shape(&g.values[g.outputs[0]].shape, 4, dy);
    xf_graph_free(&g);
    mb_free(m);

    /* SAME_UPPER equals an explicit conv with those pads, numerically */
    mb *a = conv_model("SAME_UPPER", NULL, 3);
    int64_t same[4] = {0, 0, 1, 1};
    mb *b = conv_model(NULL, same, 3);
    xf_graph ga, gb;
    mb_load_ok(a, &ga);
    mb_load_ok(b, &gb);
    xf_tensor in[1];
    xf_error err;
    ck_assert_int_eq(xf_graph_random_inputs(&ga, 3, in, &err), XF_OK);
    xf_tensor oa, ob;
    run(&ga, in, &oa);
    run(&gb, in, &ob);
    int64_t d33[4] = {1, 4, 3, 3};
    expect_shape(&oa.shape, 4, d33);
    ck_assert(xf_tensor_close(&oa, &ob, 0, 0));
    xf_tensor_free(&in[0]);
    xf_tensor_free(&oa);
    xf_tensor_free(&ob);
    xf_graph_free(&ga);
    xf_graph_free(&gb);
    mb_free(a);
    mb_free(b);
}
END_TEST

START_TEST(conv_attributes_and_fusion)
{
    /* groups and dilation */
    mb *m = mb_new(11);
    int64_t dx[4] = {1, 4, 7, 7}, dw[4] = {6, 2, 3, 3};
    mb_input(m, "x", T_FLOAT, 4, dx);
    float w[108];
    for (int i = 0; i < 108; i++) w[i] = (float)(i % 9) * 0.1f - 0.4f;
    mb_init(m, "w", T_FLOAT, 4, dw, w);
    Onnx__NodeProto *nd = mb_node(m, "Conv", "conv", "x w", "c");
    attr_i(m, nd, "group", 2);
    int64_t dil[2] = {2, 1};
    attr_ints(m, nd, "dilations", 2, dil);
    mb_node(m, "Relu", "relu", "c", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    xf_graph g;
    const xf_node *n = single(m, &g, XF_OP_CONV); /* the Relu is fused */
    ck_assert_int_eq(n->params.group, 2);
    ck_assert_int_eq(n->params.dilation[0], 2);
    ck_assert_int_eq(n->params.dilation[1], 1);
    ck_assert_int_eq(n->params.activation, XF_ACT_RELU);
    ck_assert_str_eq(g.values[g.outputs[0]].name, "y");
    int64_t dy[4] = {1, 6, 3, 5};
    expect_shape(&g.values[g.outputs[0]].shape, 4, dy);
    /* the fused result is relu(conv) computed separately */
    xf_tensor in[1], fused;
    xf_error err;
    ck_assert_int_eq(xf_graph_random_inputs(&g, 5, in, &err), XF_OK);
    run(&g, in, &fused);
    g.nodes[0].params.activation = XF_ACT_NONE;
    xf_tensor plain;
    run(&g, in, &plain);
    float *pf = plain.data;
    int64_t cnt = xf_shape_numel(&plain.shape), negatives = 0;
    for (int64_t i = 0; i < cnt; i++) {
        negatives += pf[i] < 0;
        pf[i] = pf[i] > 0 ? pf[i] : 0;
    }
    ck_assert_int_gt(negatives, 0);
    expect_f32(&fused, plain.data, cnt, 0);
    xf_tensor_free(&in[0]);
    xf_tensor_free(&fused);
    xf_tensor_free(&plain);
    xf_graph_free(&g);
    mb_free(m);

    /* no fusion when the conv output is used elsewhere too */
    m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 4, dx);
    mb_init(m, "w", T_FLOAT, 4, dw, w);
    attr_i(m, mb_node(m, "Conv", "conv", "x w", "c"), "group", 2);
    mb_node(m, "Sigmoid", "sig", "c", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    mb_output(m, "c", T_FLOAT, -1, NULL);
    mb_load_ok(m, &g);
    ck_assert_int_eq(g.n_nodes, 2);
    ck_assert_int_eq(the(&g, XF_OP_CONV)->params.activation, XF_ACT_NONE);
    the(&g, XF_OP_SIGMOID);
    xf_graph_free(&g);
    mb_free(m);

    /* kernel_shape that contradicts the weight: error naming the node */
    m = conv_model(NULL, NULL, 5);
    const char *want[] = {"test.onnx", "'conv'", "kernel_shape", NULL};
    expect_error(m, XF_ERR_SHAPE, want);
    mb_free(m);

    /* a 1-D convolution runs as a 2-D one of height 1: Unsqueeze, conv
     * [1 x 3], Squeeze (the weight's Unsqueeze folds into a constant);
     * pads begin 1, end 0, stride 2: length (8 + 1 - 3) / 2 + 1 = 4 */
    m = mb_new(13);
    int64_t d1x[3] = {1, 2, 8}, d1w[3] = {3, 2, 3}, d1y[3] = {1, 3, 4};
    mb_input(m, "x", T_FLOAT, 3, d1x);
    mb_init(m, "w", T_FLOAT, 3, d1w, w);
    nd = mb_node(m, "Conv", "conv1d", "x w", "y");
    int64_t p1[2] = {1, 0}, s1[1] = {2};
    attr_ints(m, nd, "pads", 2, p1);
    attr_ints(m, nd, "strides", 1, s1);
    mb_output(m, "y", T_FLOAT, 3, d1y);
    mb_load_ok(m, &g);
    ck_assert_int_eq(g.n_nodes, 3);
    n = the(&g, XF_OP_CONV);
    ck_assert_int_eq(n->params.kernel[0], 1);
    ck_assert_int_eq(n->params.kernel[1], 3);
    ck_assert_int_eq(n->params.stride[1], 2);
    ck_assert_int_eq(n->params.pads[1], 1);
    ck_assert_int_eq(n->params.pads[3], 0);
    the(&g, XF_OP_UNSQUEEZE);
    the(&g, XF_OP_SQUEEZE);
    expect_shape(&g.values[g.outputs[0]].shape, 3, d1y);
    float xv[16], want1[12];
    for (int i = 0; i < 16; i++) xv[i] = (float)((i * 7) % 11) * 0.25f - 1.0f;
    for (int o = 0; o < 3; o++)
        for (int t = 0; t < 4; t++) {
            float acc = 0.0f;
            for (int c = 0; c < 2; c++)
                for (int k = 0; k < 3; k++) {
                    int at = t * 2 - 1 + k;
                    if (at >= 0 && at < 8) acc += w[(o * 2 + c) * 3 + k] * xv[c * 8 + at];
                }
            want1[o * 4 + t] = acc;
        }
    xf_tensor in1 = make_f32(3, d1x, xv), out1;
    ck_assert_msg(xf_interp_run(&g, &in1, 1, &out1, &err) == XF_OK, "%s", err.msg);
    for (int i = 0; i < 12; i++)
        ck_assert_msg(fabsf(((float *)out1.data)[i] - want1[i]) < 1e-5f, "y[%d] = %g, want %g", i,
                      (double)((float *)out1.data)[i], (double)want1[i]);
    xf_tensor_free(&in1);
    xf_tensor_free(&out1);
    xf_graph_free(&g);
    mb_free(m);
}
END_TEST

/* ONNX's own 1-D convolution cases (pytorch-converted/test_Conv1d*: pads,
 * strides, dilation, groups) are declared at opset 6, below what rlflow
 * imports; Conv has not changed since opset 1, so they run here declared
 * at opset 11 and must reproduce the expected outputs. */
START_TEST(conv1d_backend_cases)
{
    const char *root = xf_test_dir("XF_ONNX_TESTDATA");
    if (!root) XF_SKIP("ONNX backend test data not installed (libonnx-testdata)");
    static const char *const cases[] = {"test_Conv1d",          "test_Conv1d_dilated",
                                        "test_Conv1d_groups",   "test_Conv1d_pad1",
                                        "test_Conv1d_pad1size1", "test_Conv1d_pad2",
                                        "test_Conv1d_pad2size1", "test_Conv1d_stride"};
    int ran = 0;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/pytorch-converted/%s/model.onnx", root, cases[c]);
        if (access(path, R_OK) != 0) continue;
        size_t len;
        char *bytes = xf_test_read_file(path, &len);
        Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, (const uint8_t *)bytes);
        ck_assert_ptr_nonnull(mp);
        for (size_t i = 0; i < mp->n_opset_import; i++)
            if (!mp->opset_import[i]->domain || !mp->opset_import[i]->domain[0])
                mp->opset_import[i]->version = 11;
        size_t n = onnx__model_proto__get_packed_size(mp);
        uint8_t *buf = malloc(n);
        onnx__model_proto__pack(mp, buf);
        onnx__model_proto__free_unpacked(mp, NULL);
        free(bytes);
        xf_graph g;
        xf_error err;
        ck_assert_msg(xf_onnx_load_buffer(buf, n, cases[c], NULL, NULL, &g, &err) == XF_OK,
                      "%s", err.msg);
        free(buf);
        ck_assert_int_eq(count_op(&g, XF_OP_OPAQUE), 0);
        ck_assert_int_eq(count_op(&g, XF_OP_CONV), 1);
        xf_tensor in, want, got;
        snprintf(path, sizeof path, "%s/pytorch-converted/%s/test_data_set_0/input_0.pb", root,
                 cases[c]);
        ck_assert_msg(xf_onnx_load_tensor(path, &in, NULL, &err) == XF_OK, "%s", err.msg);
        snprintf(path, sizeof path, "%s/pytorch-converted/%s/test_data_set_0/output_0.pb", root,
                 cases[c]);
        ck_assert_msg(xf_onnx_load_tensor(path, &want, NULL, &err) == XF_OK, "%s", err.msg);
        ck_assert_msg(xf_interp_run(&g, &in, 1, &got, &err) == XF_OK, "%s: %s", cases[c], err.msg);
        ck_assert_msg(xf_tensor_close(&got, &want, 1e-4, 1e-5), "%s: outputs differ", cases[c]);
        xf_tensor_free(&in);
        xf_tensor_free(&want);
        xf_tensor_free(&got);
        xf_graph_free(&g);
        ran++;
    }
    if (!ran) XF_SKIP("no pytorch-converted/test_Conv1d* case in %s", root);
}
END_TEST

START_TEST(pooling_ops)
{
    int64_t dx[4] = {1, 2, 7, 7};
    mb *m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 4, dx);
    Onnx__NodeProto *nd = mb_node(m, "MaxPool", "mp", "x", "y");
    int64_t k[2] = {3, 3}, s[2] = {2, 2}, p[4] = {1, 1, 1, 1};
    attr_ints(m, nd, "kernel_shape", 2, k);
    attr_ints(m, nd, "strides", 2, s);
    attr_ints(m, nd, "pads", 4, p);
    attr_i(m, nd, "ceil_mode", 1);
    mb_output(m, "y", T_FLOAT, -1, NULL);
    xf_graph g;
    const xf_node *n = single(m, &g, XF_OP_MAXPOOL);
    int32_t pads[4] = {1, 1, 1, 1};
    ck_assert_mem_eq(n->params.pads, pads, sizeof pads);
    ck_assert_int_eq(n->params.kernel[1], 3);
    ck_assert_int_eq(n->params.stride[0], 2);
    ck_assert_int_eq(n->params.ceil_mode, 1);
    ck_assert_int_eq(n->params.dilation[0], 1);
    xf_graph_free(&g);
    mb_free(m);

    m = mb_new(11);
    mb_input(m, "x", T_FLOAT, 4, dx);
    nd = mb_node(m, "AveragePool", "ap", "x", "y");
    int64_t k2[2] = {2, 2};
    attr_ints(m, nd, "kernel_shape", 2, k2);
    attr_ints(m, nd, "strides", 2, k2);
    attr_s(m, nd, "auto_pad", "SAME_UPPER");
    attr_i(m, nd, "count_include_pad", 1);
    mb_output(m, "y", T_FLOAT, -1, NULL);
    n = single(m, &g, XF_OP_AVGPOOL);
    int32_t same[4] = {0, 0, 1, 1}; /* out 4: (4-1)*2 + 2 - 7 = 1 */
    ck_assert_mem_eq(n->params.pads, same, sizeof same);
    ck_assert_int_eq(n->params.count_include_pad, 1);
    ck_assert_int_eq(n->params.dilation[0], 0);
    xf_graph_free(&g);
    mb_free(m);

    m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 4, dx);
    mb_node(m, "GlobalAveragePool", "gap", "x", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    single(m, &g, XF_OP_GLOBAL_AVGPOOL);
    xf_graph_free(&g);
    mb_free(m);

    /* MaxPool whose Indices output is used stays opaque */
    m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 4, dx);
    attr_ints(m, mb_node(m, "MaxPool", "mpi", "x", "y idx"), "kernel_shape", 2, k);
    int64_t dy[4] = {1, 2, 5, 5};
    mb_output(m, "y", T_FLOAT, 4, dy);
    mb_output(m, "idx", T_INT64, 4, dy);
    n = single(m, &g, XF_OP_OPAQUE);
    ck_assert_int_eq(n->n_outputs, 2);
    ck_assert_int_eq(g.values[n->outputs[1]].dtype, XF_I64);
    xf_graph_free(&g);
    mb_free(m);
}
END_TEST

START_TEST(normalisation_ops)
{
    int64_t dx[4] = {2, 3, 4, 4}, d3 = 3;
    float ones[3] = {1, 1, 1}, zeros[3] = {0, 0, 0};
    mb *m = mb_new(15);
    mb_input(m, "x", T_FLOAT, 4, dx);
    mb_init(m, "s", T_FLOAT, 1, &d3, ones);
    mb_init(m, "b", T_FLOAT, 1, &d3, zeros);
    mb_init(m, "mean", T_FLOAT, 1, &d3, zeros);
    mb_init(m, "var", T_FLOAT, 1, &d3, ones);
    attr_f(m, mb_node(m, "BatchNormalization", "bn", "x s b mean var", "y"), "epsilon", 1e-3f);
    mb_output(m, "y", T_FLOAT, -1, NULL);
    xf_graph g;
    const xf_node *n = single(m, &g, XF_OP_BATCHNORM);
    ck_assert_float_eq(n->params.epsilon, 1e-3f);
    ck_assert_int_eq(n->n_inputs, 5);
    xf_graph_free(&g);
    mb_free(m);

    int64_t d4 = 4;
    float g4[4] = {1, 2, 3, 4};
    m = mb_new(17);
    mb_input(m, "x", T_FLOAT, 4, dx);
    mb_init(m, "gamma", T_FLOAT, 1, &d4, g4);
    mb_node(m, "LayerNormalization", "ln", "x gamma", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    n = single(m, &g, XF_OP_LAYERNORM);
    ck_assert_int_eq(n->params.axis, -1);
    ck_assert_float_eq(n->params.epsilon, 1e-5f);
    ck_assert_int_eq(n->n_inputs, 2);
    xf_graph_free(&g);
    mb_free(m);

    /* LayerNormalization whose Mean output is used stays opaque */
    m = mb_new(17);
    mb_input(m, "x", T_FLOAT, 4, dx);
    mb_init(m, "gamma", T_FLOAT, 1, &d4, g4);
    attr_i(m, mb_node(m, "LayerNormalization", "ln", "x gamma", "y mean"), "axis", -1);
    int64_t dm[4] = {2, 3, 4, 1};
    mb_output(m, "y", T_FLOAT, 4, dx);
    mb_output(m, "mean", T_FLOAT, 4, dm);
    n = single(m, &g, XF_OP_OPAQUE);
    ck_assert_str_eq(n->opaque->op_type, "LayerNormalization");
    ck_assert_int_eq(n->opaque->n_attrs, 1);
    xf_graph_free(&g);
    mb_free(m);
}
END_TEST

/* --------------------------------------------- opset 11 vs 13 variants */

/* Softmax of x [2,3,4] at axis 1, opset 11: over the 12 values of each
 * batch; opset 13: over the 3 values of each (batch, column). */
START_TEST(softmax_opset_semantics)
{
    int64_t dx[3] = {2, 3, 4};
    float xv[24];
    for (int i = 0; i < 24; i++) xv[i] = (float)((i * 5) % 7) * 0.3f - 1.0f;
    for (int opset = 11; opset <= 13; opset += 2) {
        mb *m = mb_new(opset);
        mb_input(m, "x", T_FLOAT, 3, dx);
        attr_i(m, mb_node(m, "Softmax", "sm", "x", "y"), "axis", 1);
        mb_output(m, "y", T_FLOAT, -1, NULL);
        xf_graph g;
        mb_load_ok(m, &g);
        float want[24];
        if (opset == 11) {
            ck_assert_int_eq(g.n_nodes, 3);
            ck_assert_int_eq(count_op(&g, XF_OP_RESHAPE), 2);
            ck_assert_int_eq(the(&g, XF_OP_SOFTMAX)->params.axis, 1);
            for (int b = 0; b < 2; b++) {
                double sum = 0;
                for (int i = 0; i < 12; i++) sum += exp(xv[b * 12 + i]);
                for (int i = 0; i < 12; i++) want[b * 12 + i] = (float)(exp(xv[b * 12 + i]) / sum);
            }
        } else {
            ck_assert_int_eq(g.n_nodes, 1);
            ck_assert_int_eq(the(&g, XF_OP_SOFTMAX)->params.axis, 1);
            for (int b = 0; b < 2; b++)
                for (int c = 0; c < 4; c++) {
                    double sum = 0;
                    for (int k = 0; k < 3; k++) sum += exp(xv[b * 12 + k * 4 + c]);
                    for (int k = 0; k < 3; k++)
                        want[b * 12 + k * 4 + c] = (float)(exp(xv[b * 12 + k * 4 + c]) / sum);
                }
        }
        expect_shape(&g.values[g.outputs[0]].shape, 3, dx);
        xf_tensor in = make_f32(3, dx, xv), out;
        run(&g, &in, &out);
        expect_f32(&out, want, 24, 1e-6f);
        xf_tensor_free(&in);
        xf_tensor_free(&out);
        xf_graph_free(&g);
        mb_free(m);
    }
    /* opset 11 over the last axis (default 1 with trailing 1s too) is direct */
    mb *m = mb_new(11);
    int64_t d31[3] = {2, 3, 1};
    mb_input(m, "x", T_FLOAT, 3, dx);
    mb_input(m, "z", T_FLOAT, 3, d31);
    attr_i(m, mb_node(m, "Softmax", "a", "x", "y"), "axis", -1);
    mb_node(m, "Softmax", "b", "z", "w");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    mb_output(m, "w", T_FLOAT, -1, NULL);
    xf_graph g;
    mb_load_ok(m, &g);
    ck_assert_int_eq(g.n_nodes, 2);
    ck_assert_int_eq(count_op(&g, XF_OP_SOFTMAX), 2);
    ck_assert_int_eq(g.nodes[0].params.axis, -1);
    ck_assert_int_eq(g.nodes[1].params.axis, 1);
    xf_graph_free(&g);
    mb_free(m);
}
END_TEST

START_TEST(split_squeeze_unsqueeze_reduce_opsets)
{
    int64_t d26[2] = {2, 6}, d13[2] = {1, 3}, split_a[2] = {2, 4}, split_b[2] = {4, 2};
    xf_graph g;
    /* Split: attribute at 11, input at 13, equal when absent */
    mb *m = mb_new(11);
    mb_input(m, "x", T_FLOAT, 2, d26);
    Onnx__NodeProto *nd = mb_node(m, "Split", "sp", "x", "a b");
    attr_i(m, nd, "axis", 1);
    attr_ints(m, nd, "split", 2, split_a);
    const xf_node *n = single(m, &g, XF_OP_SPLIT);
    ck_assert_int_eq(n->params.n_split, 2);
    ck_assert_int_eq(n->params.split[0], 2);
    ck_assert_int_eq(n->params.split[1], 4);
    ck_assert_int_eq(n->params.axis, 1);
    xf_graph_free(&g);
    mb_free(m);

    m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 2, d26);
    mb_init_i64(m, "sizes", 2, split_b);
    attr_i(m, mb_node(m, "Split", "sp", "x sizes", "a b"), "axis", -1);
    n = single(m, &g, XF_OP_SPLIT);
    ck_assert_int_eq(n->params.split[0], 4);
    ck_assert_int_eq(n->params.split[1], 2);
    ck_assert_int_eq(g.n_values, 3); /* the sizes are a parameter, not a graph constant */
    xf_graph_free(&g);
    mb_free(m);

    m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 2, d26);
    attr_i(m, mb_node(m, "Split", "sp", "x", "a b c"), "axis", 1);
    n = single(m, &g, XF_OP_SPLIT);
    ck_assert_int_eq(n->params.n_split, 3);
    for (int i = 0; i < 3; i++) ck_assert_int_eq(n->params.split[i], 2);
    xf_graph_free(&g);
    mb_free(m);

    m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 2, d26);
    attr_i(m, mb_node(m, "Split", "sp", "x", "a b c d"), "axis", 1);
    const char *uneven[] = {"'sp'", "evenly", NULL};
    expect_error(m, XF_ERR_SHAPE, uneven);
    mb_free(m);

    /* Squeeze / Unsqueeze: axes attribute at 11, input at 13 */
    int64_t ax0 = 0, ax_un[2] = {0, 2};
    for (int opset = 11; opset <= 13; opset += 2) {
        m = mb_new(opset);
        mb_input(m, "x", T_FLOAT, 2, d13);
        if (opset == 11) {
            attr_ints(m, mb_node(m, "Squeeze", "sq", "x", "s"), "axes", 1, &ax0);
            attr_ints(m, mb_node(m, "Unsqueeze", "us", "s", "u"), "axes", 2, ax_un);
        } else {
            mb_init_i64(m, "sq_axes", 1, &ax0);
            mb_init_i64(m, "us_axes", 2, ax_un);
            mb_node(m, "Squeeze", "sq", "x sq_axes", "s");
            mb_node(m, "Unsqueeze", "us", "s us_axes", "u");
        }
        mb_output(m, "u", T_FLOAT, -1, NULL);
        mb_load_ok(m, &g);
        ck_assert_int_eq(g.n_nodes, 2);
        const xf_node *sq = the(&g, XF_OP_SQUEEZE), *us = the(&g, XF_OP_UNSQUEEZE);
        ck_assert_int_eq(sq->params.n_axes, 1);
        ck_assert_int_eq(sq->params.axes[0], 0);
        ck_assert_int_eq(us->params.n_axes, 2);
        ck_assert_int_eq(us->params.axes[1], 2);
        int64_t du[3] = {1, 3, 1};
        expect_shape(&g.values[g.outputs[0]].shape, 3, du);
        ck_assert_int_eq(g.n_values, 3);
        xf_graph_free(&g);
        mb_free(m);
    }
    /* Squeeze without axes squeezes every 1 */
    m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 2, d13);
    mb_node(m, "Squeeze", "sq", "x", "s");
    mb_output(m, "s", T_FLOAT, -1, NULL);
    n = single(m, &g, XF_OP_SQUEEZE);
    ck_assert_int_eq(n->params.n_axes, 0);
    int64_t d3 = 3;
    expect_shape(&g.values[g.outputs[0]].shape, 1, &d3);
    xf_graph_free(&g);
    mb_free(m);

    /* a Split whose sizes are only known at run time stays opaque */
    m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 2, d26);
    int64_t two = 2;
    mb_input(m, "sizes", T_INT64, 1, &two);
    attr_i(m, mb_node(m, "Split", "sp", "x sizes", "a b"), "axis", 1);
    mb_output(m, "a", T_FLOAT, 2, D23);
    mb_output(m, "b", T_FLOAT, 2, D23);
    n = single(m, &g, XF_OP_OPAQUE);
    ck_assert_str_eq(n->opaque->op_type, "Split");
    xf_graph_free(&g);
    mb_free(m);

    /* ReduceMean takes axes as an attribute at both 11 and 13 */
    for (int opset = 11; opset <= 13; opset += 2) {
        int64_t axm = -1;
        m = mb_new(opset);
        mb_input(m, "x", T_FLOAT, 2, d26);
        attr_ints(m, mb_node(m, "ReduceMean", "rm", "x", "y"), "axes", 1, &axm);
        mb_output(m, "y", T_FLOAT, -1, NULL);
        n = single(m, &g, XF_OP_REDUCE_MEAN);
        ck_assert_int_eq(n->params.n_axes, 1);
        ck_assert_int_eq(n->params.axes[0], -1);
        ck_assert_int_eq(n->params.keepdims, 1);
        int64_t dk[2] = {2, 1};
        expect_shape(&g.values[g.outputs[0]].shape, 2, dk);
        xf_graph_free(&g);
        mb_free(m);
    }
}
END_TEST

/* --------------------------------------------------------- data movement */

START_TEST(movement_ops)
{
    int64_t dx[3] = {2, 3, 4};
    xf_graph g;
    /* Concat, Gather, Flatten, Transpose with and without perm */
    mb *m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 3, dx);
    mb_input(m, "y", T_FLOAT, 3, dx);
    int64_t idx[2] = {2, 0};
    mb_init_i64(m, "idx", 2, idx);
    attr_i(m, mb_node(m, "Concat", "cat", "x y", "c"), "axis", -1);
    attr_i(m, mb_node(m, "Gather", "ga", "x idx", "g"), "axis", 1);
    mb_node(m, "Flatten", "fl", "x", "f");
    mb_node(m, "Transpose", "t0", "x", "t");
    int64_t perm[3] = {1, 0, 2};
    attr_ints(m, mb_node(m, "Transpose", "t1", "x", "u"), "perm", 3, perm);
    const char *outs[] = {"c", "g", "f", "t", "u"};
    for (int i = 0; i < 5; i++) mb_output(m, outs[i], T_FLOAT, -1, NULL);
    mb_load_ok(m, &g);
    ck_assert_int_eq(g.n_nodes, 5);
    ck_assert_int_eq(the(&g, XF_OP_CONCAT)->params.axis, -1);
    ck_assert_int_eq(the(&g, XF_OP_GATHER)->params.axis, 1);
    ck_assert_int_eq(the(&g, XF_OP_FLATTEN)->params.axis, 1);
    ck_assert_int_eq(g.nodes[3].params.n_axes, 0);
    ck_assert_int_eq(g.nodes[4].params.n_axes, 3);
    int64_t dc[3] = {2, 3, 8}, dg[3] = {2, 2, 4}, df[2] = {2, 12}, dt[3] = {4, 3, 2},
            du[3] = {3, 2, 4};
    expect_shape(&g.values[g.outputs[0]].shape, 3, dc);
    expect_shape(&g.values[g.outputs[1]].shape, 3, dg);
    expect_shape(&g.values[g.outputs[2]].shape, 2, df);
    expect_shape(&g.values[g.outputs[3]].shape, 3, dt);
    expect_shape(&g.values[g.outputs[4]].shape, 3, du);
    xf_graph_free(&g);
    mb_free(m);

    /* Reshape resolves 0 and -1; Expand keeps its target */
    m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 3, dx);
    int64_t target[2] = {0, -1}, ex[3] = {2, 1, 1}, d1 = 1;
    mb_init_i64(m, "target", 2, target);
    mb_init_i64(m, "ex", 3, ex);
    mb_node(m, "Reshape", "rs", "x target", "r");
    mb_input(m, "v", T_FLOAT, 1, &d1);
    mb_node(m, "Expand", "exp", "v ex", "e");
    mb_output(m, "r", T_FLOAT, -1, NULL);
    mb_output(m, "e", T_FLOAT, -1, NULL);
    mb_load_ok(m, &g);
    const xf_node *rs = the(&g, XF_OP_RESHAPE), *ep = the(&g, XF_OP_EXPAND);
    ck_assert_int_eq(rs->params.n_shape, 2);
    ck_assert_int_eq(rs->params.shape[0], 2);
    ck_assert_int_eq(rs->params.shape[1], 12);
    ck_assert_int_eq(ep->params.n_shape, 3);
    ck_assert_int_eq(ep->params.shape[0], 2);
    int64_t de[3] = {2, 1, 1};
    expect_shape(&g.values[g.outputs[1]].shape, 3, de);
    xf_graph_free(&g);
    mb_free(m);

    /* allowzero (opset 14): a 0 is a real zero-sized dim; an input dim
     * declared 0 is symbolic ('x_dim0'), here sized 0 */
    m = mb_new(14);
    int64_t dz[2] = {0, 4}, tz[3] = {4, 0, 3};
    mb_input(m, "x", T_FLOAT, 2, dz);
    mb_init_i64(m, "target", 3, tz);
    attr_i(m, mb_node(m, "Reshape", "rs", "x target", "r"), "allowzero", 1);
    mb_output(m, "r", T_FLOAT, -1, NULL);
    const char *zn[1] = {"x_dim0"};
    int64_t zv[1] = {0};
    xf_onnx_options zo = one_dim(zn, zv);
    xf_error zerr;
    ck_assert_msg(mb_load(m, &zo, &g, &zerr) == XF_OK, "import failed: %s", zerr.msg);
    ck_assert_int_eq(g.n_nodes, 1);
    ck_assert_int_eq(g.nodes[0].op, XF_OP_RESHAPE);
    ck_assert_int_eq(g.nodes[0].params.shape[1], 0);
    xf_graph_free(&g);
    mb_free(m);
}
END_TEST

START_TEST(slice_bounds)
{
    int64_t dx[2] = {3, 5};
    float xv[15];
    for (int i = 0; i < 15; i++) xv[i] = (float)i;
    /* x[1:, ::-2]: starts [1, -1], ends [INT64_MAX, INT64_MIN], steps [1, -2] */
    mb *m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 2, dx);
    int64_t starts[2] = {1, -1}, ends[2] = {INT64_MAX, INT64_MIN}, axes[2] = {0, 1},
            steps[2] = {1, -2};
    mb_init_i64(m, "starts", 2, starts);
    mb_init_i64(m, "ends", 2, ends);
    mb_init_i64(m, "axes", 2, axes);
    mb_init_i64(m, "steps", 2, steps);
    mb_node(m, "Slice", "sl", "x starts ends axes steps", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    xf_graph g;
    const xf_node *n = single(m, &g, XF_OP_SLICE);
    ck_assert_int_eq(n->params.n_axes, 2);
    ck_assert_int_eq(n->params.ends[0], 3);  /* INT64_MAX clamped to the dim */
    ck_assert_int_eq(n->params.ends[1], -6); /* INT64_MIN clamped to -dim-1 */
    ck_assert_int_eq(n->params.steps[1], -2);
    float want[6] = {9, 7, 5, 14, 12, 10};
    xf_tensor in = make_f32(2, dx, xv), out;
    run(&g, &in, &out);
    int64_t dy[2] = {2, 3};
    expect_shape(&out.shape, 2, dy);
    expect_f32(&out, want, 6, 0);
    xf_tensor_free(&in);
    xf_tensor_free(&out);
    xf_graph_free(&g);
    mb_free(m);

    /* axes and steps default to 0.. and 1 */
    m = mb_new(11);
    mb_input(m, "x", T_FLOAT, 2, dx);
    int64_t s1[1] = {1}, e1[1] = {2};
    mb_init_i64(m, "starts", 1, s1);
    mb_init_i64(m, "ends", 1, e1);
    mb_node(m, "Slice", "sl", "x starts ends", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    n = single(m, &g, XF_OP_SLICE);
    ck_assert_int_eq(n->params.axes[0], 0);
    ck_assert_int_eq(n->params.steps[0], 1);
    int64_t d15[2] = {1, 5};
    expect_shape(&g.values[g.outputs[0]].shape, 2, d15);
    xf_graph_free(&g);
    mb_free(m);
}
END_TEST

START_TEST(pad_modes)
{
    int64_t dx[2] = {2, 3};
    int64_t pads[4] = {0, 1, 0, 2};
    xf_graph g;
    /* constant, with a constant_value input */
    mb *m = mb_new(11);
    mb_input(m, "x", T_FLOAT, 2, dx);
    mb_init_i64(m, "pads", 4, pads);
    float v = 1.5f;
    mb_init(m, "v", T_FLOAT, 0, NULL, &v);
    mb_node(m, "Pad", "pad", "x pads v", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    const xf_node *n = single(m, &g, XF_OP_PAD);
    ck_assert_int_eq(n->params.pad_mode, XF_PAD_CONSTANT);
    ck_assert_int_eq(n->params.starts[1], 1);
    ck_assert_int_eq(n->params.ends[1], 2);
    ck_assert(n->params.value == 1.5);
    float xv[6] = {1, 2, 3, 4, 5, 6};
    float want[12] = {1.5f, 1, 2, 3, 1.5f, 1.5f, 1.5f, 4, 5, 6, 1.5f, 1.5f};
    xf_tensor in = make_f32(2, dx, xv), out;
    run(&g, &in, &out);
    expect_f32(&out, want, 12, 0);
    xf_tensor_free(&out);
    xf_graph_free(&g);
    mb_free(m);

    /* reflect */
    m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 2, dx);
    mb_init_i64(m, "pads", 4, pads);
    attr_s(m, mb_node(m, "Pad", "pad", "x pads", "y"), "mode", "reflect");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    n = single(m, &g, XF_OP_PAD);
    ck_assert_int_eq(n->params.pad_mode, XF_PAD_REFLECT);
    float want_r[12] = {2, 1, 2, 3, 2, 1, 5, 4, 5, 6, 5, 4};
    run(&g, &in, &out);
    expect_f32(&out, want_r, 12, 0);
    xf_tensor_free(&out);
    xf_tensor_free(&in);
    xf_graph_free(&g);
    mb_free(m);

    /* pads fed at run time: opaque */
    m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 2, dx);
    int64_t four = 4, dy[2] = {2, 6};
    mb_input(m, "pads", T_INT64, 1, &four);
    attr_s(m, mb_node(m, "Pad", "pad", "x pads", "y"), "mode", "edge");
    mb_output(m, "y", T_FLOAT, 2, dy);
    n = single(m, &g, XF_OP_OPAQUE);
    ck_assert_str_eq(n->opaque->op_type, "Pad");
    ck_assert_int_eq(n->opaque->n_attrs, 1);
    xf_graph_free(&g);
    mb_free(m);
}
END_TEST

/* --------------------------------------------------- shapes and constants */

/* Shape -> Gather -> Unsqueeze -> Concat -> Reshape: a constant reshape. */
static mb *shape_subgraph(void)
{
    mb *m = mb_new(13);
    int64_t dx[3] = {2, 3, 4}, zero = 0, minus1 = -1;
    mb_input(m, "x", T_FLOAT, 3, dx);
    mb_init(m, "i0", T_INT64, 0, NULL, &zero);
    mb_init_i64(m, "ax0", 1, &zero);
    mb_init_i64(m, "rest", 1, &minus1);
    mb_node(m, "Shape", "shape", "x", "s");
    attr_i(m, mb_node(m, "Gather", "gather", "s i0", "b"), "axis", 0);
    mb_node(m, "Unsqueeze", "unsq", "b ax0", "b1");
    attr_i(m, mb_node(m, "Concat", "concat", "b1 rest", "target"), "axis", 0);
    mb_node(m, "Reshape", "reshape", "x target", "y");
    int64_t dy[2] = {2, 12};
    mb_output(m, "y", T_FLOAT, 2, dy);
    return m;
}

START_TEST(shape_subgraph_folds)
{
    mb *m = shape_subgraph();
    xf_graph g;
    const xf_node *n = single(m, &g, XF_OP_RESHAPE);
    ck_assert_int_eq(n->params.n_shape, 2);
    ck_assert_int_eq(n->params.shape[0], 2);
    ck_assert_int_eq(n->params.shape[1], 12);
    for (int i = 0; i < g.n_values; i++) ck_assert_int_ne(g.values[i].kind, XF_VALUE_CONST);
    xf_graph_free(&g);

    /* without folding the Shape stays and Reshape's target is dynamic */
    xf_onnx_options o = xf_onnx_default_options();
    o.fold_constants = 0;
    xf_error err;
    ck_assert_msg(mb_load(m, &o, &g, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(count_op(&g, XF_OP_SHAPE), 1);
    ck_assert_int_eq(count_op(&g, XF_OP_RESHAPE), 0);
    ck_assert_str_eq(g.nodes[g.n_nodes - 1].opaque->op_type, "Reshape");
    xf_graph_free(&g);
    mb_free(m);

    /* a shape value used as data is computed by the graph, unchanged */
    m = mb_new(15);
    int64_t dx[4] = {2, 3, 4, 5}, d2 = 2;
    mb_input(m, "x", T_FLOAT, 4, dx);
    Onnx__NodeProto *nd = mb_node(m, "Shape", "shape", "x", "s");
    attr_i(m, nd, "start", 1);
    attr_i(m, nd, "end", -1);
    attr_i(m, mb_node(m, "Cast", "cast", "s", "y"), "to", T_FLOAT);
    mb_output(m, "y", T_FLOAT, 1, &d2);
    mb_load_ok(m, &g);
    ck_assert_int_eq(count_op(&g, XF_OP_SHAPE), 1);
    ck_assert_int_eq(count_op(&g, XF_OP_SLICE), 1);
    ck_assert_int_eq(count_op(&g, XF_OP_CAST), 1);
    xf_tensor in[1], out;
    ck_assert_int_eq(xf_graph_random_inputs(&g, 1, in, &err), XF_OK);
    run(&g, in, &out);
    float want[2] = {3, 4};
    expect_f32(&out, want, 2, 0);
    xf_tensor_free(&in[0]);
    xf_tensor_free(&out);
    xf_graph_free(&g);
    mb_free(m);
}
END_TEST

START_TEST(constants_and_constant_of_shape)
{
    xf_graph g;
    mb *m = mb_new(13);
    int64_t d3 = 3, shape[2] = {2, 3}, seven = 7;
    mb_input(m, "x", T_FLOAT, 1, &d3);
    float fl[3] = {1, 2, 4};
    attr_floats(m, mb_node(m, "Constant", "k", "", "c"), "value_floats", 3, fl);
    mb_node(m, "Add", "add", "x c", "y");
    mb_init_i64(m, "shape", 2, shape);
    Onnx__NodeProto *nd = mb_node(m, "ConstantOfShape", "cos", "shape", "filled");
    attr_t(m, nd, "value", mb_tensor(m, "v", T_INT64, 1, &(int64_t){1}, &seven));
    attr_i(m, mb_node(m, "Constant", "k2", "", "scalar"), "value_int", 5);
    mb_output(m, "y", T_FLOAT, -1, NULL);
    mb_output(m, "filled", T_INT64, -1, NULL);
    mb_output(m, "scalar", T_INT64, -1, NULL);
    mb_load_ok(m, &g);
    ck_assert_int_eq(g.n_nodes, 1);
    the(&g, XF_OP_ADD);
    const xf_value *f = &g.values[g.outputs[1]];
    ck_assert_int_eq(f->kind, XF_VALUE_CONST);
    ck_assert_int_eq(f->dtype, XF_I64);
    expect_shape(&f->shape, 2, shape);
    for (int i = 0; i < 6; i++) ck_assert_int_eq(((int64_t *)f->data)[i], 7);
    const xf_value *s = &g.values[g.outputs[2]];
    ck_assert_int_eq(s->shape.rank, 0);
    ck_assert_int_eq(((int64_t *)s->data)[0], 5);
    float xv[3] = {1, 1, 1}, want[3] = {2, 3, 5};
    xf_tensor in = make_f32(1, &d3, xv), out[3];
    run(&g, &in, out);
    expect_f32(&out[0], want, 3, 0);
    for (int i = 0; i < 3; i++) xf_tensor_free(&out[i]);
    xf_tensor_free(&in);
    xf_graph_free(&g);
    mb_free(m);

    /* string constants are beyond rlflow */
    m = mb_new(13);
    attr_s(m, mb_node(m, "Constant", "kstr", "", "c"), "value_string", "hello");
    mb_output(m, "c", T_FLOAT, -1, NULL);
    const char *want_msg[] = {"test.onnx", "'kstr'", "value_string", NULL};
    expect_error(m, XF_ERR_UNSUPPORTED, want_msg);
    mb_free(m);
}
END_TEST

START_TEST(initializers_kept_unless_parameters)
{
    mb *m = mb_new(13);
    int64_t dx[2] = {2, 6}, target[2] = {3, 4}, d2 = 2;
    float unused[2] = {1.5f, -2.5f};
    mb_input(m, "x", T_FLOAT, 2, dx);
    mb_init_i64(m, "target", 2, target);
    mb_init(m, "unused", T_FLOAT, 1, &d2, unused);
    mb_node(m, "Reshape", "rs", "x target", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    xf_graph g;
    single(m, &g, XF_OP_RESHAPE);
    int n_const = 0;
    for (int i = 0; i < g.n_values; i++)
        if (g.values[i].kind == XF_VALUE_CONST) {
            n_const++;
            ck_assert_str_eq(g.values[i].name, "unused");
            ck_assert_mem_eq(g.values[i].data, unused, sizeof unused);
        }
    ck_assert_int_eq(n_const, 1);
    xf_graph_free(&g);
    mb_free(m);
}
END_TEST

/* ---------------------------------------------------------------- opaque */

START_TEST(opaque_nodes_keep_attributes)
{
    mb *m = mb_new(13);
    mb_domain(m, "com.example", 2);
    mb_input(m, "x", T_FLOAT, 2, D23);
    Onnx__NodeProto *nd = mb_node(m, "Frob", "frob", "x", "f");
    nd->domain = mb_str(m, "com.example");
    attr_f(m, nd, "alpha", 0.25f);
    attr_s(m, nd, "mode", "fast");
    int64_t sizes[3] = {1, 2, 3};
    attr_ints(m, nd, "sizes", 3, sizes);
    mb_value_info(m, "f", T_FLOAT, 2, D23);
    attr_i(m, mb_node(m, "ArgMax", "am", "f", "y"), "axis", 1);
    mb_output(m, "y", T_INT64, 2, (int64_t[]){2, 1});
    mb_node(m, "Relu", "relu", "f", "r");
    mb_output(m, "r", T_FLOAT, -1, NULL);
    xf_graph g;
    mb_load_ok(m, &g);
    ck_assert_int_eq(g.n_nodes, 3);
    ck_assert_int_eq(count_op(&g, XF_OP_OPAQUE), 2);
    const xf_node *frob = &g.nodes[0], *am = &g.nodes[1];
    ck_assert_int_eq(frob->op, XF_OP_OPAQUE);
    ck_assert_str_eq(frob->opaque->op_type, "Frob");
    ck_assert_str_eq(frob->opaque->domain, "com.example");
    ck_assert_int_eq(frob->opaque->domain_version, 2);
    ck_assert_int_eq(frob->opaque->n_attrs, 3);
    Onnx__AttributeProto *a =
        onnx__attribute_proto__unpack(NULL, frob->opaque->attr_len[0], frob->opaque->attr_bytes[0]);
    ck_assert_ptr_nonnull(a);
    ck_assert_str_eq(a->name, "alpha");
    ck_assert_float_eq(a->f, 0.25f);
    onnx__attribute_proto__free_unpacked(a, NULL);
    a = onnx__attribute_proto__unpack(NULL, frob->opaque->attr_len[2], frob->opaque->attr_bytes[2]);
    ck_assert_ptr_nonnull(a);
    ck_assert_str_eq(a->name, "sizes");
    ck_assert_uint_eq(a->n_ints, 3);
    ck_assert_int_eq(a->ints[2], 3);
    onnx__attribute_proto__free_unpacked(a, NULL);
    expect_shape(&g.values[frob->outputs[0]].shape, 2, D23);
    ck_assert_str_eq(am->opaque->op_type, "ArgMax");
    ck_assert_str_eq(am->opaque->domain, "");
    ck_assert_int_eq(am->opaque->domain_version, 13);
    ck_assert_int_eq(g.values[am->outputs[0]].dtype, XF_I64);
    the(&g, XF_OP_RELU);
    ck_assert_int_eq(xf_graph_validate(&g, NULL), XF_OK);
    xf_graph_free(&g);
    mb_free(m);

    /* an opaque node whose output shape no rule gives (NonZero: data
     * dependent) cannot be imported: the message names the file, node, op
     * and what to do */
    m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 2, D23);
    mb_node(m, "NonZero", "nz", "x", "c");
    mb_node(m, "Relu", "relu", "c", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    const char *want[] = {"test.onnx", "node 0 'nz' (NonZero)", "value_info",
                          "onnx.shape_inference", NULL};
    expect_error(m, XF_ERR_UNSUPPORTED, want);
    mb_free(m);

    /* a custom-domain op: the message points to a tool that knows them */
    m = mb_new(13);
    mb_domain(m, "com.example", 1);
    mb_input(m, "x", T_FLOAT, 2, D23);
    mb_node(m, "Frob", "frob", "x", "c")->domain = mb_str(m, "com.example");
    mb_node(m, "Relu", "relu", "c", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    const char *want_custom[] = {"node 0 'frob' (Frob)", "domain 'com.example'",
                                 "symbolic_shape_infer", NULL};
    expect_error(m, XF_ERR_UNSUPPORTED, want_custom);
    mb_free(m);
}
END_TEST

/* Opaque standard ops without value_info get their output shapes from
 * built-in rules: same shape (Celu), LSTM's three outputs, If whose
 * branches agree. Rules never match through them: they stay opaque. */
START_TEST(opaque_standard_ops_get_shapes)
{
    mb *m = mb_new(14);
    int64_t x_dims[3] = {5, 2, 3}, w_dims[3] = {1, 16, 3}, r_dims[3] = {1, 16, 4};
    float w[48] = {0}, r[64] = {0};
    mb_input(m, "x", T_FLOAT, 3, x_dims);
    mb_init(m, "w", T_FLOAT, 3, w_dims, w);
    mb_init(m, "r", T_FLOAT, 3, r_dims, r);
    mb_node(m, "Celu", "celu", "x", "c");
    Onnx__NodeProto *l = mb_node(m, "LSTM", "lstm", "c w r", "y yh yc");
    attr_i(m, l, "hidden_size", 4);
    mb_node(m, "Relu", "r1", "y", "o1");
    mb_node(m, "Relu", "r2", "yh", "o2");
    mb_node(m, "Relu", "r3", "yc", "o3");
    mb_output(m, "o1", T_FLOAT, -1, NULL);
    mb_output(m, "o2", T_FLOAT, -1, NULL);
    mb_output(m, "o3", T_FLOAT, -1, NULL);
    xf_graph g;
    mb_load_ok(m, &g);
    ck_assert_int_eq(xf_test_count_op(&g, XF_OP_OPAQUE), 2);
    int64_t y[4] = {5, 1, 2, 4}, yh[3] = {1, 2, 4};
    expect_shape(&g.values[g.outputs[0]].shape, 4, y);
    expect_shape(&g.values[g.outputs[1]].shape, 3, yh);
    expect_shape(&g.values[g.outputs[2]].shape, 3, yh);
    for (int i = 0; i < g.n_nodes; i++)
        if (g.nodes[i].op == XF_OP_OPAQUE && !strcmp(g.nodes[i].opaque->op_type, "Celu"))
            expect_shape(&g.values[g.nodes[i].outputs[0]].shape, 3, x_dims);
    xf_graph_free(&g);
    mb_free(m);

    /* If: the branches' declared output shapes, when they agree */
    for (int agree = 1; agree >= 0; agree--) {
        m = mb_new(13);
        mb_input(m, "x", T_FLOAT, 2, D23);
        mb_input(m, "cond", T_BOOL, 0, NULL);
        Onnx__NodeProto *n = mb_node(m, "If", "if", "cond", "z");
        int64_t other[2] = {3, 2};
        for (int b = 0; b < 2; b++)
            mb_if_branch(m, n, b, b ? "e" : "t", b && !agree ? other : D23);
        mb_node(m, "Relu", "relu", "z", "y");
        mb_output(m, "y", T_FLOAT, -1, NULL);
        if (agree) {
            mb_load_ok(m, &g);
            expect_shape(&g.values[g.outputs[0]].shape, 2, D23);
            xf_graph_free(&g);
        } else {
            const char *want[] = {"node 0 'if' (If)", "value_info", NULL};
            expect_error(m, XF_ERR_UNSUPPORTED, want);
        }
        mb_free(m);
    }
}
END_TEST

/* A branch graph of one node op(in) -> out, taking the node built with
 * mb_node back out of the main graph. */
static Onnx__GraphProto *mb_branch(mb *m, const char *name, const char *op, const char *ins,
                                   const char *out)
{
    Onnx__NodeProto *n = mb_node(m, op, name, ins, out);
    m->graph.n_node--;
    Onnx__GraphProto *gp = mb_alloc(m, sizeof *gp);
    onnx__graph_proto__init(gp);
    gp->name = mb_str(m, name);
    gp->n_node = 1;
    gp->node = mb_alloc(m, sizeof *gp->node);
    gp->node[0] = n;
    gp->n_output = 1;
    gp->output = mb_alloc(m, sizeof *gp->output);
    gp->output[0] = mb_vi(m, out, T_FLOAT, 2, D23, NULL);
    return gp;
}

/* y_k = sigmoid(If(c, then: neg(xr_k), else: mul(xr_k, w))) with xr_k =
 * relu(x) and w an outer initializer, k = 1, 2, for c true and false. */
static void run_if_model(const xf_graph *g)
{
    static const float xv[6] = {-1.0f, 0.5f, 2.0f, -0.25f, 0.0f, 1.5f};
    for (int b = 0; b < 2; b++) {
        xf_tensor in[2], out[2];
        xf_error err;
        xf_shape sc = xf_shape_make(0, D23);
        in[0] = make_f32(2, D23, xv);
        ck_assert_int_eq(xf_tensor_alloc(&in[1], XF_BOOL, &sc, &err), XF_OK);
        *(uint8_t *)in[1].data = (uint8_t)(b == 0);
        ck_assert_msg(xf_interp_run(g, in, 2, out, &err) == XF_OK, "%s", err.msg);
        for (int k = 0; k < 2; k++)
            for (int i = 0; i < 6; i++) {
                float r = xv[i] > 0 ? xv[i] : 0.0f, z = b ? 2.0f * r : -r;
                float want = 1.0f / (1.0f + expf(-z)), got = ((float *)out[k].data)[i];
                ck_assert_msg(fabsf(got - want) < 1e-6f, "%s branch: y%d[%d] = %g, want %g",
                              b ? "else" : "then", k + 1, i, (double)got, (double)want);
            }
        xf_tensor_free(&in[0]);
        xf_tensor_free(&in[1]);
        xf_tensor_free(&out[0]);
        xf_tensor_free(&out[1]);
    }
}

/* The If node `name` of g. */
static xf_node *if_node(xf_graph *g, const char *name)
{
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].name && strcmp(g->nodes[i].name, name) == 0) return &g->nodes[i];
    ck_abort_msg("no node '%s'", name);
    return NULL;
}

/* Counts the exported If nodes with one input and the Identity nodes
 * writing `from` as `to`. */
static void exported_ifs(const uint8_t *buf, size_t len, const char *from, const char *to,
                         int *ifs, int *identities)
{
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, buf);
    ck_assert_ptr_nonnull(mp);
    *ifs = *identities = 0;
    for (size_t i = 0; i < mp->graph->n_node; i++) {
        const Onnx__NodeProto *p = mp->graph->node[i];
        *ifs += strcmp(p->op_type, "If") == 0 && p->n_input == 1;
        *identities += strcmp(p->op_type, "Identity") == 0 && p->n_output == 1 &&
                       strcmp(p->output[0], to) == 0 && strcmp(p->input[0], from) == 0;
    }
    onnx__model_proto__free_unpacked(mp, NULL);
}

/* If: both branches run in the interpreter, reading an outer activation
 * (a captured input of the If) and an outer initializer (a constant in
 * the branch); export writes each If with its one input and its branches;
 * a captured value renamed by a rewrite is written under the branches'
 * name, and one value captured under two names (two equal values merged)
 * reaches the second through an Identity. */
START_TEST(if_branches_run_and_export)
{
    mb *m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 2, D23);
    mb_input(m, "c", T_BOOL, 0, NULL);
    float two = 2.0f;
    int64_t d1[1] = {1};
    mb_init(m, "w", T_FLOAT, 1, d1, &two);
    for (int k = 1; k <= 2; k++) {
        char xr[8], z[8], y[8], t[8], e[8], in[16], nm[8];
        snprintf(xr, sizeof xr, "xr%d", k);
        snprintf(z, sizeof z, "z%d", k);
        snprintf(y, sizeof y, "y%d", k);
        snprintf(t, sizeof t, "t%d", k);
        snprintf(e, sizeof e, "e%d", k);
        snprintf(in, sizeof in, "%s w", xr);
        snprintf(nm, sizeof nm, "if%d", k);
        mb_node(m, "Relu", xr, "x", xr);
        Onnx__NodeProto *n = mb_node(m, "If", nm, "c", z);
        Onnx__AttributeProto *a =
            mb_attr(m, n, "then_branch", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
        a->g = mb_branch(m, t, "Neg", xr, t);
        a = mb_attr(m, n, "else_branch", ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH);
        a->g = mb_branch(m, e, "Mul", in, e);
        mb_node(m, "Sigmoid", y, z, y);
        mb_output(m, y, T_FLOAT, -1, NULL);
    }
    xf_graph g, back;
    mb_load_ok(m, &g);
    xf_node *n1 = if_node(&g, "if1"), *n2 = if_node(&g, "if2");
    ck_assert_int_eq(n1->opaque->kernel, XF_OPAQUE_IF);
    ck_assert_int_eq(n1->opaque->n_captured, 2);
    ck_assert_int_eq(n1->n_inputs, 3);
    ck_assert_int_eq(n1->opaque->branches[0].n_inputs, 1); /* xr1; w is a constant there */
    ck_assert_int_eq(n1->opaque->branches[1].n_inputs, 1);
    run_if_model(&g);
    /* a rewrite renamed xr1, and merged xr2 into it */
    int cap = strcmp(n1->opaque->captured[0], "xr1") == 0 ? 1 : 2;
    int xr1 = n1->inputs[cap], xr2 = n2->inputs[strcmp(n2->opaque->captured[0], "xr2") == 0 ? 1 : 2];
    ck_assert_str_eq(g.values[xr1].name, "xr1");
    xf_graph_release(&g, g.values[xr1].name);
    g.values[xr1].name = xf_strdup("relu_out");
    xf_graph_release(&g, g.values[xr2].name);
    g.values[xr2].name = xf_strdup("unused");
    n2->inputs[strcmp(n2->opaque->captured[0], "xr2") == 0 ? 1 : 2] = xr1;
    uint8_t *buf;
    size_t len;
    xf_error err;
    ck_assert_msg(xf_onnx_save_buffer(&g, &buf, &len, &err) == XF_OK, "%s", err.msg);
    int ifs, identities;
    exported_ifs(buf, len, "xr1", "xr2", &ifs, &identities);
    ck_assert_int_eq(ifs, 2);
    ck_assert_int_eq(identities, 1); /* relu_out took the name xr1; xr2 = Identity(xr1) */
    ck_assert_msg(xf_onnx_load_buffer(buf, len, "back.onnx", NULL, NULL, &back, &err) == XF_OK,
                  "%s", err.msg);
    xf_free(buf);
    run_if_model(&back);
    xf_graph_free(&back);
    xf_graph_free(&g);
    mb_free(m);
}
END_TEST

/* Opset-18 forms: ReduceMean/ReduceMax axes as inputs, Pad's axes input,
 * Split into uneven parts by its number of outputs (3 + 2 of 5). */
START_TEST(opset18_forms_are_converted)
{
    mb *m = mb_new(18);
    int64_t d[2] = {2, 5};
    mb_input(m, "x", T_FLOAT, 2, d);
    int64_t ax1[1] = {1}, ax0[1] = {0}, pads[2] = {1, 2};
    mb_init_i64(m, "ax1", 1, ax1);
    mb_init_i64(m, "ax0", 1, ax0);
    mb_init_i64(m, "pads", 2, pads);
    mb_node(m, "ReduceMean", "mean", "x ax1", "mean");
    attr_i(m, mb_node(m, "ReduceMax", "max", "x ax0", "max"), "keepdims", 0);
    mb_node(m, "Pad", "pad", "x pads - ax1", "padded");
    attr_i(m, mb_node(m, "Split", "split", "x", "s0 s1"), "axis", 1);
    mb_output(m, "mean", T_FLOAT, -1, NULL);
    mb_output(m, "max", T_FLOAT, -1, NULL);
    mb_output(m, "padded", T_FLOAT, -1, NULL);
    mb_output(m, "s0", T_FLOAT, -1, NULL);
    mb_output(m, "s1", T_FLOAT, -1, NULL);
    xf_graph g;
    mb_load_ok(m, &g);
    ck_assert_int_eq(xf_test_count_op(&g, XF_OP_OPAQUE), 0);
    float xv[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
    xf_tensor in = make_f32(2, d, xv), out[5];
    run(&g, &in, out);
    int64_t md[2] = {2, 1}, xd[1] = {5}, pd[2] = {2, 8}, s0[2] = {2, 3}, s1[2] = {2, 2};
    expect_shape(&out[0].shape, 2, md);
    float mean[2] = {3, 8};
    expect_f32(&out[0], mean, 2, 1e-6f);
    expect_shape(&out[1].shape, 1, xd);
    float mx[5] = {6, 7, 8, 9, 10};
    expect_f32(&out[1], mx, 5, 0.0f);
    expect_shape(&out[2].shape, 2, pd);
    float padded[16] = {0, 1, 2, 3, 4, 5, 0, 0, 0, 6, 7, 8, 9, 10, 0, 0};
    expect_f32(&out[2], padded, 16, 0.0f);
    expect_shape(&out[3].shape, 2, s0);
    expect_shape(&out[4].shape, 2, s1);
    float second[4] = {4, 5, 9, 10};
    expect_f32(&out[4], second, 4, 0.0f);
    for (int i = 0; i < 5; i++) xf_tensor_free(&out[i]);
    xf_tensor_free(&in);
    xf_graph_free(&g);
    mb_free(m);
}
END_TEST

/* An opset-9 model in the old forms (Clip, Slice and Pad with attributes,
 * Upsample with a scales input) imports to table operators and computes
 * what ONNX defines. */
START_TEST(old_opset_forms_are_converted)
{
    mb *m = mb_new(9);
    int64_t d[4] = {1, 1, 2, 2}, four = 4;
    float scales[4] = {1, 1, 2, 2};
    mb_input(m, "x", T_FLOAT, 4, d);
    mb_init(m, "scales", T_FLOAT, 1, &four, scales);
    Onnx__NodeProto *c = mb_node(m, "Clip", "clip", "x", "c");
    attr_f(m, c, "min", 0.0f);
    attr_f(m, c, "max", 6.0f);
    mb_node(m, "Upsample", "up", "c scales", "u");
    Onnx__NodeProto *sl = mb_node(m, "Slice", "slice", "u", "s");
    int64_t axes[1] = {3}, starts[1] = {1}, ends[1] = {3};
    attr_ints(m, sl, "axes", 1, axes);
    attr_ints(m, sl, "starts", 1, starts);
    attr_ints(m, sl, "ends", 1, ends);
    Onnx__NodeProto *pd = mb_node(m, "Pad", "pad", "s", "y");
    int64_t pads[8] = {0, 0, 0, 1, 0, 0, 0, 0};
    attr_ints(m, pd, "pads", 8, pads);
    attr_f(m, pd, "value", 9.0f);
    mb_output(m, "y", T_FLOAT, -1, NULL);
    xf_graph g;
    mb_load_ok(m, &g);
    ck_assert_int_eq(xf_test_count_op(&g, XF_OP_OPAQUE), 0);
    ck_assert_int_eq(xf_test_count_op(&g, XF_OP_CLIP), 1);
    ck_assert_int_eq(xf_test_count_op(&g, XF_OP_RESIZE), 1);
    float xv[4] = {-1, 2, 7, 3};
    xf_tensor in = make_f32(4, d, xv), out;
    run(&g, &in, &out);
    int64_t yd[4] = {1, 1, 4, 3};
    expect_shape(&out.shape, 4, yd);
    float want[12] = {9, 0, 2, 9, 0, 2, 9, 6, 3, 9, 6, 3};
    expect_f32(&out, want, 12, 0.0f);
    xf_tensor_free(&in);
    xf_tensor_free(&out);
    xf_graph_free(&g);
    mb_free(m);
}
END_TEST

/* ---------------------------------------------------------------- errors */

static void expect_file_error(mb *m, const char *file, xf_status code, const char *needle)
{
    const char *p = mb_save(m, file);
    char path[4096];
    snprintf(path, sizeof path, "%s", p);
    xf_graph g;
    xf_error err;
    xf_status st = xf_onnx_load(path, NULL, &g, &err);
    ck_assert_msg(st == code, "%s: status %s, want %s (%s)", file, xf_status_name(st),
                  xf_status_name(code), st == XF_OK ? "" : err.msg);
    ck_assert_msg(strstr(err.msg, path) != NULL, "message does not name the file: %s", err.msg);
    ck_assert_msg(strstr(err.msg, needle) != NULL, "message lacks '%s': %s", needle, err.msg);
    remove(path);
}

START_TEST(malformed_graphs)
{
    mb *m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 2, D23);
    mb_node(m, "Add", "adder", "x nowhere", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    expect_file_error(m, "dangling.onnx", XF_ERR_GRAPH,
                      "dangling input 'nowhere' of node 0 'adder'");
    mb_free(m);

    m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 2, D23);
    mb_node(m, "Relu", "first", "x", "y");
    mb_node(m, "Tanh", "second", "x", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    expect_file_error(m, "duplicate.onnx", XF_ERR_GRAPH,
                      "node 1 'second' (Tanh): output 'y' is produced twice (also by node 0 "
                      "'first' (Relu))");
    mb_free(m);

    m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 2, D23);
    mb_node(m, "Add", "a", "x c", "b");
    mb_node(m, "Relu", "loop", "b", "c");
    mb_output(m, "c", T_FLOAT, -1, NULL);
    expect_file_error(m, "cycle.onnx", XF_ERR_GRAPH, "cycle");
    mb_free(m);

    for (int opset = 6; opset <= 22; opset += 16) { /* just outside 7..21 */
        m = mb_new(opset);
        mb_input(m, "x", T_FLOAT, 2, D23);
        mb_node(m, "Relu", "r", "x", "y");
        mb_output(m, "y", T_FLOAT, -1, NULL);
        char needle[64];
        snprintf(needle, sizeof needle, "opset %d", opset);
        expect_file_error(m, opset == 6 ? "opset6.onnx" : "opset22.onnx", XF_ERR_UNSUPPORTED,
                          needle);
        mb_free(m);
    }

    /* shapes that do not broadcast: a shape error naming the node */
    m = mb_new(13);
    int64_t d4 = 4;
    mb_input(m, "x", T_FLOAT, 2, D23);
    mb_input(m, "z", T_FLOAT, 1, &d4);
    mb_node(m, "Mul", "mul7", "x z", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    expect_file_error(m, "badshape.onnx", XF_ERR_SHAPE, "node 0 'mul7' (Mul)");
    mb_free(m);

    /* a model with no graph, one with no opset_import at all */
    m = mb_new(13);
    m->model.graph = NULL;
    expect_file_error(m, "nograph.onnx", XF_ERR_PARSE, "no graph");
    m->model.graph = &m->graph;
    m->model.n_opset_import = 0;
    expect_file_error(m, "noopset.onnx", XF_ERR_PARSE, "opset_import");
    mb_free(m);
}
END_TEST

/* A node without op_type is refused at import, naming the node: as an
 * opaque node it would import (and `xfonnx info` pass) but never export. */
START_TEST(empty_op_type_is_refused)
{
    mb *m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 2, D23);
    mb_node(m, "Relu", "r", "x", "t");
    mb_node(m, "", "noop", "t", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    expect_file_error(m, "emptyop.onnx", XF_ERR_PARSE, "node 1 'noop' (): empty op_type");
    mb_free(m);
}
END_TEST

START_TEST(truncated_and_garbage_bytes)
{
    mb *m = shape_subgraph();
    size_t len;
    uint8_t *buf = mb_pack(m, &len);
    int failed = 0;
    for (size_t n = 0; n < len; n++) {
        xf_graph g;
        xf_error err;
        xf_status st = xf_onnx_load_buffer(buf, n, "cut.onnx", NULL, NULL, &g, &err);
        if (st == XF_OK) {
            ck_assert_int_eq(xf_graph_validate(&g, &err), XF_OK);
            xf_graph_free(&g);
        } else {
            failed++;
            ck_assert_msg(strstr(err.msg, "cut.onnx") != NULL, "%s", err.msg);
        }
    }
    ck_assert_int_gt(failed, (int)len / 2);
    xf_rng r;
    xf_rng_seed(&r, 99);
    for (int k = 0; k < 300; k++) {
        size_t n = 1 + (size_t)(xf_rng_next(&r) % 600);
        uint8_t *junk = malloc(n);
        ck_assert_ptr_nonnull(junk);
        for (size_t i = 0; i < n; i++) junk[i] = (uint8_t)xf_rng_next(&r);
        if (k % 2) memcpy(junk, buf, n < len / 2 ? n : len / 2); /* a valid start, junk after */
        xf_graph g;
        xf_error err;
        if (xf_onnx_load_buffer(junk, n, "junk.onnx", NULL, NULL, &g, &err) == XF_OK) {
            ck_assert_int_eq(xf_graph_validate(&g, &err), XF_OK);
            xf_graph_free(&g);
        }
        free(junk);
    }
    /* a garbage file */
    const char *p = xf_test_tmp("garbage.onnx");
    char path[4096];
    snprintf(path, sizeof path, "%s", p);
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    fputs("this is not a protobuf \xff\xff\xff\xff", f);
    fclose(f);
    xf_graph g;
    xf_error err;
    ck_assert_int_eq(xf_onnx_load(path, NULL, &g, &err), XF_ERR_PARSE);
    ck_assert_msg(strstr(err.msg, path) && strstr(err.msg, "not a valid ONNX model"), "%s",
                  err.msg);
    remove(path);
    free(buf);
    mb_free(m);
}
END_TEST

/* --------------------------------------------- external data, dim names */

static mb *external_model(const char *location)
{
    mb *m = mb_new(13);
    mb_input(m, "x", T_FLOAT, 2, D23);
    Onnx__TensorProto *t = mb_alloc(m, sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = mb_str(m, "w");
    t->has_data_type = 1;
    t->data_type = T_FLOAT;
    t->n_dims = 2;
    t->dims = mb_alloc(m, 2 * sizeof(int64_t));
    t->dims[0] = 2;
    t->dims[1] = 3;
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    static const char *keys[3] = {"location", "offset", "length"};
    const char *vals[3] = {location, "8", "24"};
    t->n_external_data = 3;
    t->external_data = mb_alloc(m, 3 * sizeof(*t->external_data));
    for (int i = 0; i < 3; i++) {
        Onnx__StringStringEntryProto *e = mb_alloc(m, sizeof *e);
        onnx__string_string_entry_proto__init(e);
        e->key = mb_str(m, keys[i]);
        e->value = mb_str(m, vals[i]);
        t->external_data[i] = e;
    }
    m->inits[m->graph.n_initializer++] = t;
    mb_node(m, "Add", "add", "x w", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    return m;
}

START_TEST(external_data_initializer)
{
    float w[6] = {0.5f, 1.5f, -2, 3, 4.25f, -1};
    char bin[4096];
    snprintf(bin, sizeof bin, "%s", xf_test_tmp("import_ext_w.bin"));
    FILE *f = fopen(bin, "wb");
    ck_assert_ptr_nonnull(f);
    fwrite("HEADER!!", 1, 8, f); /* the data starts at offset 8 */
    fwrite(w, sizeof(float), 6, f);
    fclose(f);
    mb *m = external_model("import_ext_w.bin");
    char path[4096];
    snprintf(path, sizeof path, "%s", mb_save(m, "import_ext.onnx"));
    xf_graph g;
    xf_error err;
    ck_assert_msg(xf_onnx_load(path, NULL, &g, &err) == XF_OK, "%s", err.msg);
    float xv[6] = {1, 1, 1, 1, 1, 1}, want[6];
    for (int i = 0; i < 6; i++) want[i] = 1 + w[i];
    xf_tensor in = make_f32(2, D23, xv), out;
    run(&g, &in, &out);
    expect_f32(&out, want, 6, 0);
    xf_tensor_free(&in);
    xf_tensor_free(&out);
    xf_graph_free(&g);
    /* from memory there is no directory to look in */
    const char *mem[] = {"initializer 'w'", "external", NULL};
    expect_error(m, XF_ERR_UNSUPPORTED, mem);
    remove(path);
    mb_free(m);

    /* a location outside the model's directory is refused */
    m = external_model("../import_ext_w.bin");
    snprintf(path, sizeof path, "%s", mb_save(m, "import_ext_escape.onnx"));
    ck_assert_int_eq(xf_onnx_load(path, NULL, &g, &err), XF_ERR_UNSUPPORTED);
    ck_assert_msg(strstr(err.msg, "refused"), "%s", err.msg);
    remove(path);
    mb_free(m);

    /* a missing file is an I/O error naming it */
    m = external_model("import_no_such.bin");
    snprintf(path, sizeof path, "%s", mb_save(m, "import_ext_missing.onnx"));
    ck_assert_int_eq(xf_onnx_load(path, NULL, &g, &err), XF_ERR_IO);
    ck_assert_msg(strstr(err.msg, "import_no_such.bin"), "%s", err.msg);
    remove(path);
    mb_free(m);
    remove(bin);
}
END_TEST

START_TEST(symbolic_dims_from_options)
{
    mb *m = mb_new(13);
    const char *params[3] = {"batch", NULL, "seq"};
    int64_t dims[3] = {0, 3, 0};
    m->inputs[m->graph.n_input++] = mb_vi(m, "x", T_FLOAT, 3, dims, params);
    mb_node(m, "Relu", "r", "x", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    const char *names[1] = {"batch"};
    int64_t values[1] = {5};
    xf_onnx_options o = one_dim(names, values);
    xf_graph g;
    xf_error err;
    xf_log_level lvl = xf_log_get_level();
    xf_log_set_level(XF_LOG_OFF); /* 'seq' is not given: warned about, set to 1 */
    ck_assert_msg(mb_load(m, &o, &g, &err) == XF_OK, "%s", err.msg);
    int64_t want[3] = {5, 3, 1};
    expect_shape(&g.values[g.inputs[0]].shape, 3, want);
    expect_shape(&g.values[g.outputs[0]].shape, 3, want);
    xf_graph_free(&g);
    ck_assert_int_eq(mb_load(m, NULL, &g, &err), XF_OK);
    xf_log_set_level(lvl);
    int64_t ones[3] = {1, 3, 1};
    expect_shape(&g.values[g.inputs[0]].shape, 3, ones);
    xf_graph_free(&g);
    mb_free(m);
}
END_TEST

/* Issue 17: an input whose element count overflows (2^62+1 rows) used to
 * reach the kernels and write out of bounds (Transpose, MatMul, Concat,
 * Conv, ReduceMean, Softmax, broadcast Add). Import now fails, naming the
 * file and the input; an op whose inferred output overflows names the node;
 * a symbolic dim sized past the limit fails the same way; and the tools
 * exit 2 without writing their output file. */
static mb *huge_input_model(const char *op)
{
    static const int64_t big2[2] = {((int64_t)1 << 62) + 1, 4};
    static const int64_t big4[4] = {((int64_t)1 << 62) + 1, 1, 2, 2};
    static const int64_t w44[2] = {4, 4}, w1111[4] = {1, 1, 1, 1}, four = 4;
    static const float wdata[16] = {0};
    mb *m = mb_new(13);
    int conv = strcmp(op, "Conv") == 0;
    mb_input(m, "x", T_FLOAT, conv ? 4 : 2, conv ? big4 : big2);
    if (strcmp(op, "MatMul") == 0) {
        mb_init(m, "w", T_FLOAT, 2, w44, wdata);
        mb_node(m, op, "n", "x w", "y");
    } else if (conv) {
        mb_init(m, "w", T_FLOAT, 4, w1111, wdata);
        mb_node(m, op, "n", "x w", "y");
    } else if (strcmp(op, "Add") == 0) {
        mb_input(m, "z", T_FLOAT, 1, &four);
        mb_node(m, op, "n", "x z", "y");
    } else if (strcmp(op, "Concat") == 0) {
        attr_i(m, mb_node(m, op, "n", "x x", "y"), "axis", 0);
    } else if (strcmp(op, "Transpose") == 0) {
        static const int64_t perm[2] = {1, 0};
        attr_ints(m, mb_node(m, op, "n", "x", "y"), "perm", 2, perm);
    } else if (strcmp(op, "ReduceMean") == 0) {
        static const int64_t axes[1] = {1};
        attr_ints(m, mb_node(m, op, "n", "x", "y"), "axes", 1, axes);
    } else {
        mb_node(m, op, "n", "x", "y");
    }
    mb_output(m, "y", T_FLOAT, -1, NULL);
    return m;
}

START_TEST(overflowing_shapes_are_rejected)
{
    const char *ops[] = {"Transpose", "MatMul", "Concat", "Conv", "ReduceMean", "Softmax", "Add"};
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++) {
        mb *m = huge_input_model(ops[i]);
        char file[64];
        snprintf(file, sizeof file, "huge_%s.onnx", ops[i]);
        expect_file_error(m, file, XF_ERR_SHAPE,
                          "input 'x': shape [4611686018427387905,");
        expect_file_error(m, file, XF_ERR_SHAPE, "has more than 2^62 elements");
        mb_free(m);
    }

    /* inputs within the limit, a broadcast output of 2^63 elements */
    mb *m = mb_new(13);
    const int64_t a[2] = {(int64_t)1 << 31, 1}, b[2] = {1, (int64_t)1 << 32};
    mb_input(m, "x", T_FLOAT, 2, a);
    mb_input(m, "z", T_FLOAT, 2, b);
    mb_node(m, "Add", "add_big", "x z", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    expect_file_error(m, "huge_out.onnx", XF_ERR_SHAPE,
                      "node 0 'add_big' (Add): ewadd: output 0: shape [2147483648,4294967296] "
                      "has more than 2^62 elements");
    mb_free(m);

    /* a symbolic dim sized past the limit */
    m = mb_new(13);
    const char *params[2] = {"N", NULL};
    const int64_t dims[2] = {0, 4};
    m->inputs[m->graph.n_input++] = mb_vi(m, "x", T_FLOAT, 2, dims, params);
    mb_node(m, "Relu", "r", "x", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    xf_onnx_options o = xf_onnx_default_options();
    const char *names[1] = {"N"};
    int64_t values[1] = {((int64_t)1 << 62) + 1};
    o.n_dim_overrides = 1;
    o.dim_names = names;
    o.dim_values = values;
    xf_graph g;
    xf_error err;
    ck_assert_int_eq(mb_load(m, &o, &g, &err), XF_ERR_SHAPE);
    xf_test_expect_contains(err.msg, "input 'x': shape [4611686018427387905,4] has more than");
    mb_free(m);
}
END_TEST

START_TEST(tools_refuse_overflowing_models_and_write_nothing)
{
    mb *m = huge_input_model("Transpose");
    char model[4096], out[4096];
    snprintf(model, sizeof model, "%s", mb_save(m, "huge_tool.onnx"));
    snprintf(out, sizeof out, "%s", xf_test_tmp("huge_tool.out.onnx"));
    remove(out);
    ck_assert_int_eq(xf_test_system("%s run %s 2>/dev/null", xf_test_tool("xfonnx"), model), 2);
    ck_assert_int_eq(xf_test_system("%s roundtrip %s -o %s 2>/dev/null", xf_test_tool("xfonnx"),
                                    model, out),
                     2);
    ck_assert_msg(access(out, F_OK) != 0, "roundtrip left %s behind", out);
    mb_free(m);

    m = mb_new(13);
    const char *params[2] = {"N", NULL};
    const int64_t dims[2] = {0, 4};
    m->inputs[m->graph.n_input++] = mb_vi(m, "x", T_FLOAT, 2, dims, params);
    mb_node(m, "Relu", "r", "x", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    snprintf(model, sizeof model, "%s", mb_save(m, "symbolic_tool.onnx"));
    ck_assert_int_eq(xf_test_system("%s run %s --dim N=4611686018427387905 2>/dev/null",
                                    xf_test_tool("xfonnx"), model),
                     2);
    ck_assert_int_eq(xf_test_system("%s run %s --dim N=99999999999999999999 2>/dev/null",
                                    xf_test_tool("xfonnx"), model),
                     2);
    ck_assert_int_eq(xf_test_system("%s run %s --dim N=3 >/dev/null 2>&1",
                                    xf_test_tool("xfonnx"), model),
                     0);
    mb_free(m);
}
END_TEST

/* Issue 17 item 2: `--dim N=999999999` on a small model allocated until the
 * kernel killed the tool. Now the tools refuse it before allocating, naming
 * the largest tensor and the limit (--mem-limit, else RLFLOW_MEM_LIMIT,
 * else half of the physical memory), and roundtrip writes nothing. */
static char *tool_stderr(int *rc, const char *fmt, const char *tool, const char *model,
                         const char *args)
{
    const char *log = xf_test_tmp("memlimit_tool.err");
    char cmd[8192];
    snprintf(cmd, sizeof cmd, fmt, xf_test_tool(tool), model);
    *rc = xf_test_system("%s %s >/dev/null 2>%s", cmd, args, log);
    return xf_test_read_file(log, NULL);
}

START_TEST(tools_refuse_models_over_the_memory_limit)
{
    mb *m = mb_new(13);
    const char *params[2] = {"N", NULL};
    const int64_t dims[2] = {0, 4};
    m->inputs[m->graph.n_input++] = mb_vi(m, "x", T_FLOAT, 2, dims, params);
    mb_node(m, "Relu", "r", "x", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    char model[4096], out[4096];
    snprintf(model, sizeof model, "%s", mb_save(m, "memlimit.onnx"));
    snprintf(out, sizeof out, "%s", xf_test_tmp("memlimit.out.onnx"));
    remove(out);
    int rc;
    char *e = tool_stderr(&rc, "%s run %s", "xfonnx", model, "--dim N=999999999 --mem-limit 64M");
    ck_assert_int_eq(rc, 2);
    xf_test_expect_contains(e, "xfonnx: the graph's tensors need 29.8 GiB, over the memory limit "
                               "of 64.0 MiB (set it with --mem-limit or RLFLOW_MEM_LIMIT); the "
                               "largest is input 'x', [999999999,4] float32, 14.9 GiB\n");
    free(e);
    /* the default limit (half of the memory) refuses 32 TB whatever the machine */
    e = tool_stderr(&rc, "env -u RLFLOW_MEM_LIMIT %s run %s", "xfonnx", model,
                    "--dim N=999999999999");
    ck_assert_int_eq(rc, 2);
    xf_test_expect_contains(e, "over the memory limit of ");
    free(e);
    e = tool_stderr(&rc, "RLFLOW_MEM_LIMIT=2M %s run %s", "xfonnx", model, "--dim N=200000");
    ck_assert_int_eq(rc, 2);
    xf_test_expect_contains(e, "over the memory limit of 2.0 MiB");
    free(e);
    e = tool_stderr(&rc, "RLFLOW_MEM_LIMIT=2M %s run %s", "xfonnx", model,
                    "--dim N=200000 --mem-limit 8M");
    ck_assert_int_eq(rc, 0);
    free(e);
    char args[4200];
    snprintf(args, sizeof args, "--dim N=999999999 --mem-limit 1G -o %s", out);
    e = tool_stderr(&rc, "%s roundtrip %s", "xfonnx", model, args);
    ck_assert_int_ne(rc, 0);
    xf_test_expect_contains(e, "over the memory limit of 1.0 GiB");
    ck_assert_msg(access(out, F_OK) != 0, "roundtrip left %s behind", out);
    free(e);
    e = tool_stderr(&rc, "%s %s", "xfcost", model, "--dim N=999999999 --mem-limit 64M");
    ck_assert_int_eq(rc, 1);
    xf_test_expect_contains(e, "over the memory limit of 64.0 MiB");
    free(e);
    const char *bad[] = {"0", "512K", "8X", "-1G", "99999999999T"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        snprintf(args, sizeof args, "--mem-limit %s", bad[i]);
        e = tool_stderr(&rc, "%s run %s", "xfonnx", model, args);
        ck_assert_int_eq(rc, 2);
        xf_test_expect_contains(e, "xfonnx: --mem-limit expects a size from 1M to 2^62 bytes");
        free(e);
    }
    e = tool_stderr(&rc, "RLFLOW_MEM_LIMIT=lots %s %s", "xfcost", model, "");
    ck_assert_int_eq(rc, 2);
    xf_test_expect_contains(e, "xfcost: RLFLOW_MEM_LIMIT expects a size");
    free(e);
    mb_free(m);
}
END_TEST

/* ------------------------------------------------- symbolic dims kept */

/* x [N,4,6] -> Reshape to Concat(Shape(x)[0], 24) (a shape subgraph the
 * importer folds at N's size) -> MatMul W [24,5] -> y [N,5]; then
 * Reshape(y, [-1, 5, 1]) -> z. `swap` 1 builds instead x [N,M,4] reshaped
 * to [M,N,4], which no 0/-1 target expresses (the input's dims in another
 * order); `swap` 2 to [2N, 2M], which no target relative to the input
 * expresses. */
static mb *dynamic_model(int swap)
{
    mb *m = mb_new(13);
    const char *params[3] = {"N", swap ? "M" : NULL, NULL};
    int64_t dx[3] = {0, swap ? 0 : 4, swap ? 4 : 6}, zero = 0, one = 1, c24 = swap ? 4 : 24;
    m->inputs[m->graph.n_input++] = mb_vi(m, "x", T_FLOAT, 3, dx, params);
    mb_init(m, "i0", T_INT64, 0, NULL, swap ? &one : &zero);
    mb_init(m, "i1", T_INT64, 0, NULL, &zero);
    mb_init_i64(m, "ax0", 1, &zero);
    mb_init_i64(m, "c24", 1, &c24);
    mb_node(m, "Shape", "shape", "x", "s");
    mb_node(m, "Gather", "g0", "s i0", "n");
    mb_node(m, "Unsqueeze", "u0", "n ax0", "n1");
    if (swap) {
        mb_node(m, "Gather", "g1", "s i1", "k");
        if (swap == 2) {
            int64_t two = 2;
            mb_init(m, "two", T_INT64, 0, NULL, &two);
            mb_node(m, "Mul", "m0", "n1 two", "n2");
            mb_node(m, "Mul", "m1", "k two", "k2");
        }
        mb_node(m, "Unsqueeze", "u1", swap == 2 ? "k2 ax0" : "k ax0", "k1");
        attr_i(m, mb_node(m, "Concat", "cat", swap == 2 ? "n2 k1" : "n1 k1 c24", "tgt"), "axis",
               0);
        mb_node(m, "Reshape", "rs", "x tgt", "y");
        mb_output(m, "y", T_FLOAT, -1, NULL);
        return m;
    }
    attr_i(m, mb_node(m, "Concat", "cat", "n1 c24", "tgt"), "axis", 0);
    mb_node(m, "Reshape", "rs", "x tgt", "r");
    float w[120];
    for (int i = 0; i < 120; i++) w[i] = (float)((i * 7) % 11) / 11.0f - 0.5f;
    int64_t dw[2] = {24, 5}, t2[3] = {-1, 5, 1};
    mb_init(m, "W", T_FLOAT, 2, dw, w);
    mb_init_i64(m, "t2", 3, t2);
    mb_node(m, "MatMul", "mm", "r W", "y");
    mb_node(m, "Reshape", "rs2", "y t2", "z");
    const char *py[2] = {"N", NULL};
    int64_t dy[2] = {0, 5};
    m->outputs[m->graph.n_output++] = mb_vi(m, "y", T_FLOAT, 2, dy, py);
    mb_output(m, "z", T_FLOAT, -1, NULL);
    return m;
}

/* The dim_param of dim `axis` of the written model's input (out = 0) or
 * output (out = 1) `i`, NULL when the dim is fixed. */
static const char *written_dim(const Onnx__ModelProto *mp, int out, int i, int axis)
{
    const Onnx__ValueInfoProto *vi = out ? mp->graph->output[i] : mp->graph->input[i];
    const Onnx__TensorShapeProto__Dimension *d = vi->type->tensor_type->shape->dim[axis];
    return d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ? d->dim_param
                                                                                 : NULL;
}

/* The int64 initializer feeding input 1 of the written node `op_type`
 * number `k` (in node order). */
static const Onnx__TensorProto *written_param(const Onnx__ModelProto *mp, const char *op_type,
                                              int k)
{
    const Onnx__GraphProto *gp = mp->graph;
    for (size_t n = 0; n < gp->n_node; n++) {
        if (strcmp(gp->node[n]->op_type, op_type) != 0 || k-- > 0) continue;
        for (size_t t = 0; t < gp->n_initializer; t++)
            if (strcmp(gp->initializer[t]->name, gp->node[n]->input[1]) == 0)
                return gp->initializer[t];
    }
    ck_abort_msg("no %s node in the written model", op_type);
    return NULL;
}

static int64_t raw_i64(const Onnx__TensorProto *t, int i)
{
    int64_t v;
    memcpy(&v, t->raw_data.data + 8 * i, 8);
    return v;
}

/* The model m as bytes (*buf, caller frees), imported with options o into
 * g and described (symbols and sizes) into *d. */
static void import_described(mb *m, const xf_onnx_options *o, uint8_t **buf, size_t *len,
                             xf_graph *g, xf_onnx_dynamic **d)
{
    xf_error err;
    *buf = mb_pack(m, len);
    ck_assert_msg(xf_onnx_load_buffer(*buf, *len, "dyn.onnx", NULL, o, g, &err) == XF_OK, "%s",
                  err.msg);
    ck_assert_msg(xf_onnx_dynamic_open(*buf, *len, "dyn.onnx", NULL, o, d, &err) == XF_OK, "%s",
                  err.msg);
}

/* Frees what import_described and export_kept made. */
static void release_described(mb *m, uint8_t *buf, xf_graph *g, xf_onnx_dynamic *d, uint8_t *out)
{
    xf_free(out);
    xf_onnx_dynamic_free(d);
    xf_graph_free(g);
    free(buf);
    mb_free(m);
}

/* g exported keeping d's dims into *out (caller frees), and unpacked. */
static Onnx__ModelProto *export_kept(const xf_graph *g, const xf_onnx_dynamic *d, uint8_t **out,
                                     size_t *out_len)
{
    xf_error err;
    ck_assert_msg(xf_onnx_save_buffer_dynamic(g, d, out, out_len, &err) == XF_OK, "%s", err.msg);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, *out_len, *out);
    ck_assert_ptr_nonnull(mp);
    return mp;
}

/* The original model (buf) and the one written keeping d's dims (out),
 * read at each point of d, compute the same on the same random inputs. */
static void same_at_points(const uint8_t *buf, size_t len, const uint8_t *out, size_t out_len,
                           const xf_onnx_dynamic *d, uint64_t seed)
{
    xf_error err;
    for (int p = 0; p < XF_ONNX_POINTS; p++) {
        xf_onnx_options op = xf_onnx_dynamic_options(d, p);
        xf_graph a, b;
        ck_assert_msg(xf_onnx_load_buffer(buf, len, "dyn.onnx", NULL, &op, &a, &err) == XF_OK,
                      "point %d: %s", p, err.msg);
        ck_assert_msg(xf_onnx_load_buffer(out, out_len, "out.onnx", NULL, &op, &b, &err) ==
                          XF_OK,
                      "point %d: %s", p, err.msg);
        xf_test_expect_same_function(&a, &b, seed, 0);
        xf_graph_free(&a);
        xf_graph_free(&b);
    }
}

/* dynamic_model(0) imported at N=3 and described (import_described). */
static mb *import_at_n3(uint8_t **buf, size_t *len, xf_graph *g, xf_onnx_dynamic **d)
{
    mb *m = dynamic_model(0);
    const char *nn[1] = {"N"};
    int64_t nv[1] = {3};
    xf_onnx_options o = one_dim(nn, nv);
    import_described(m, &o, buf, len, g, d);
    return m;
}

/* Imported at N=3, exported keeping N: the Reshape targets follow N (no 3
 * baked in), N is the written input's and output's dim_param, and the
 * written model computes what the original does at N = 3, 6 and 9. */
START_TEST(symbolic_dims_are_kept_on_export)
{
    size_t len;
    uint8_t *buf;
    xf_graph g;
    xf_error err;
    xf_onnx_dynamic *d = NULL;
    mb *m = import_at_n3(&buf, &len, &g, &d);
    ck_assert_int_eq(g.n_nodes, 3); /* the shape subgraph folded into the Reshape */
    ck_assert_int_eq(xf_onnx_dynamic_count(d), 1);
    ck_assert_str_eq(xf_onnx_dynamic_name(d, 0), "N");
    ck_assert_int_eq(xf_onnx_dynamic_size(d, 0, 0), 3);
    ck_assert_int_eq(xf_onnx_dynamic_size(d, 0, 1), 6); /* x2 and x3: far apart */
    ck_assert_int_eq(xf_onnx_dynamic_size(d, 0, 2), 9);
    uint8_t *out = NULL;
    size_t out_len = 0;
    Onnx__ModelProto *mp = export_kept(&g, d, &out, &out_len);
    ck_assert_str_eq(written_dim(mp, 0, 0, 0), "N");
    ck_assert_ptr_null(written_dim(mp, 0, 0, 1));
    ck_assert_str_eq(written_dim(mp, 1, 0, 0), "N"); /* y */
    ck_assert_str_eq(written_dim(mp, 1, 1, 0), "N"); /* z [N,5,1]: N, found by following it */
    const Onnx__TensorProto *t1 = written_param(mp, "Reshape", 0);
    const Onnx__TensorProto *t2 = written_param(mp, "Reshape", 1);
    ck_assert_int_eq(raw_i64(t1, 0), -1); /* infers N (inner_symbolic_dims_are_written_unnamed) */
    ck_assert_int_eq(raw_i64(t1, 1), 24);
    ck_assert_int_eq(raw_i64(t2, 0), -1);
    onnx__model_proto__free_unpacked(mp, NULL);
    for (int p = 0; p < XF_ONNX_POINTS; p++) {
        xf_onnx_options op = xf_onnx_dynamic_options(d, p);
        xf_graph a, b;
        ck_assert_msg(xf_onnx_load_buffer(buf, len, "dyn.onnx", NULL, &op, &a, &err) == XF_OK,
                      "%s", err.msg);
        ck_assert_msg(xf_onnx_load_buffer(out, out_len, "out.onnx", NULL, &op, &b, &err) ==
                          XF_OK,
                      "point %d: %s", p, err.msg);
        ck_assert_int_eq(b.values[b.outputs[1]].shape.dims[0], 3 * (p + 1));
        xf_test_expect_same_function(&a, &b, 7, 1e-6);
        xf_graph_free(&a);
        xf_graph_free(&b);
    }
    release_described(m, buf, &g, d, out);
}
END_TEST

/* The same model written to a file keeping N with its weights in an
 * external data file (xf_onnx_save_options: dynamic and external_data):
 * the writer reads it back at N = 3, 6 and 9 before writing; the file
 * keeps N as dim_param with W external, and read from disk through its
 * data file computes what the original does at the three sizes. */
START_TEST(symbolic_dims_kept_with_external_data)
{
    size_t len;
    uint8_t *buf;
    xf_graph g;
    xf_error err;
    xf_onnx_dynamic *d = NULL;
    mb *m = import_at_n3(&buf, &len, &g, &d);
    const char *path = xf_test_tmp("dyn_ext.onnx");
    xf_onnx_save_options so = xf_onnx_default_save_options();
    so.external_data = "dyn_ext.weights";
    so.external_min_bytes = 256; /* W (480 bytes) goes out, the int64 targets stay */
    so.dynamic = d;
    xf_onnx_writer *w = NULL;
    ck_assert_msg(xf_onnx_writer_open(&g, path, &so, &w, &err) == XF_OK, "%s", err.msg);
    for (int p = 0; p < XF_ONNX_POINTS; p++) {
        xf_onnx_options op = xf_onnx_dynamic_options(d, p);
        xf_graph back;
        ck_assert_msg(xf_onnx_writer_read_back(w, &op, &back, &err) == XF_OK, "point %d: %s", p,
                      err.msg);
        ck_assert_int_eq(back.values[back.outputs[1]].shape.dims[0], 3 * (p + 1));
        xf_graph_free(&back);
    }
    size_t model_bytes;
    uint64_t data_bytes;
    const char *loc;
    xf_onnx_writer_sizes(w, &model_bytes, &data_bytes, &loc);
    ck_assert_str_eq(loc, "dyn_ext.weights");
    ck_assert_uint_eq(data_bytes, 480);
    ck_assert_msg(xf_onnx_writer_commit(w, &err) == XF_OK, "%s", err.msg);
    xf_onnx_writer_free(w);
    size_t flen;
    char *file = xf_test_read_file(path, &flen);
    ck_assert_uint_eq(flen, model_bytes);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, flen, (const uint8_t *)file);
    ck_assert_ptr_nonnull(mp);
    ck_assert_str_eq(written_dim(mp, 0, 0, 0), "N");
    ck_assert_str_eq(written_dim(mp, 1, 1, 0), "N");
    int external = 0;
    for (size_t t = 0; t < mp->graph->n_initializer; t++)
        external += mp->graph->initializer[t]->data_location ==
                    ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    ck_assert_int_eq(external, 1);
    onnx__model_proto__free_unpacked(mp, NULL);
    free(file);
    char data_path[4096];
    snprintf(data_path, sizeof data_path, "%.*s/dyn_ext.weights",
             (int)(strrchr(path, '/') - path), path);
    ck_assert_int_eq(access(data_path, R_OK), 0);
    for (int p = 0; p < XF_ONNX_POINTS; p++) {
        xf_onnx_options op = xf_onnx_dynamic_options(d, p);
        xf_graph a, b;
        ck_assert_msg(xf_onnx_load_buffer(buf, len, "dyn.onnx", NULL, &op, &a, &err) == XF_OK,
                      "%s", err.msg);
        ck_assert_msg(xf_onnx_load(path, &op, &b, &err) == XF_OK, "point %d: %s", p, err.msg);
        ck_assert_int_eq(b.values[b.outputs[1]].shape.dims[0], 3 * (p + 1));
        xf_test_expect_same_function(&a, &b, 7, 1e-6);
        xf_graph_free(&a);
        xf_graph_free(&b);
    }
    /* Without its data file the model does not read. */
    ck_assert_int_eq(unlink(data_path), 0);
    xf_graph b;
    xf_onnx_options o = xf_onnx_dynamic_options(d, 0);
    ck_assert_int_ne(xf_onnx_load(path, &o, &b, &err), XF_OK);
    xf_test_expect_contains(err.msg, "dyn_ext.weights");
    release_described(m, buf, &g, d, NULL);
}
END_TEST

/* x [N,4,8] -> MatMul W -> Reshape [-1,32] -> Relu -> Reshape [-1,4,8] -> u;
 * LayerNormalization(x + u): a transformer's residual add and layer norm,
 * one operand through reshapes whose targets infer the batch, as a model
 * exported with a symbolic batch has them. */
static mb *residual_layernorm_model(void)
{
    mb *m = mb_new(17);
    const char *params[3] = {"N", NULL, NULL};
    int64_t dx[3] = {0, 4, 8}, dw[2] = {8, 8}, dg[1] = {8};
    int64_t flat[2] = {-1, 32}, unflat[3] = {-1, 4, 8};
    float w[64], gamma[8], beta[8];
    for (int i = 0; i < 64; i++) w[i] = (float)((i * 5) % 13) / 13.0f - 0.5f;
    for (int i = 0; i < 8; i++) gamma[i] = 1.0f + 0.1f * (float)i, beta[i] = 0.05f * (float)i;
    m->inputs[m->graph.n_input++] = mb_vi(m, "x", T_FLOAT, 3, dx, params);
    mb_init(m, "W", T_FLOAT, 2, dw, w);
    mb_init(m, "gamma", T_FLOAT, 1, dg, gamma);
    mb_init(m, "beta", T_FLOAT, 1, dg, beta);
    mb_init_i64(m, "flat", 2, flat);
    mb_init_i64(m, "unflat", 3, unflat);
    mb_node(m, "MatMul", "mm", "x W", "h");
    mb_node(m, "Reshape", "flatten", "h flat", "f");
    mb_node(m, "Relu", "relu", "f", "r");
    mb_node(m, "Reshape", "unflatten", "r unflat", "u");
    mb_node(m, "Add", "residual", "x u", "s");
    attr_i(m, mb_node(m, "LayerNormalization", "ln", "s gamma beta", "y"), "axis", -1);
    m->outputs[m->graph.n_output++] = mb_vi(m, "y", T_FLOAT, 3, dx, params);
    return m;
}

/* residual_layernorm_model() imported at N=2 and described
 * (import_described). */
static mb *import_residual_layernorm(uint8_t **buf, size_t *len, xf_graph *g,
                                     xf_onnx_dynamic **d)
{
    mb *m = residual_layernorm_model();
    const char *nn[1] = {"N"};
    int64_t nv[1] = {2};
    xf_onnx_options o = one_dim(nn, nv);
    import_described(m, &o, buf, len, g, d);
    return m;
}

/* The value_info entry of `name` in the written model. */
static const Onnx__ValueInfoProto *written_value_info(const Onnx__ModelProto *mp,
                                                      const char *name)
{
    for (size_t i = 0; i < mp->graph->n_value_info; i++)
        if (!strcmp(mp->graph->value_info[i]->name, name)) return mp->graph->value_info[i];
    ck_abort_msg("no value_info for %s in the written model", name);
    return NULL;
}

/* Written keeping N, the model tells ONNX Runtime no more of N than the
 * original did: every reshape target infers N (-1) rather than copying it
 * (0), and inner values leave N unnamed (their graph output keeps it); the
 * written model computes what the original does at N = 2, 4 and 6. */
START_TEST(inner_symbolic_dims_are_written_unnamed)
{
    size_t len, out_len = 0;
    uint8_t *buf, *out = NULL;
    xf_graph g;
    xf_onnx_dynamic *d = NULL;
    mb *m = import_residual_layernorm(&buf, &len, &g, &d);
    Onnx__ModelProto *mp = export_kept(&g, d, &out, &out_len);
    ck_assert_int_eq(raw_i64(written_param(mp, "Reshape", 0), 0), -1);
    ck_assert_int_eq(raw_i64(written_param(mp, "Reshape", 1), 0), -1);
    const Onnx__ValueInfoProto *u = written_value_info(mp, "u");
    ck_assert_int_eq(u->type->tensor_type->shape->dim[0]->value_case,
                     ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE__NOT_SET);
    ck_assert_int_eq(u->type->tensor_type->shape->dim[2]->dim_value, 8);
    ck_assert_str_eq(written_dim(mp, 1, 0, 0), "N");
    onnx__model_proto__free_unpacked(mp, NULL);
    same_at_points(buf, len, out, out_len, d, 5);
    release_described(m, buf, &g, d, out);
}
END_TEST

/* How many nodes of `op_type` ONNX Runtime's optimisation of the model in
 * `bytes` holds (written to `name` and optimised beside it). */
static int ort_nodes(xf_target *t, const uint8_t *bytes, size_t n, const char *name,
                     const char *op_type)
{
    char in[512], opt[512];
    xf_error err;
    snprintf(in, sizeof in, "%s", xf_test_tmp(name));
    snprintf(opt, sizeof opt, "%s.opt.onnx", in);
    FILE *f = fopen(in, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_msg(xf_target_write_optimized(t, in, opt, &err) == XF_OK, "%s", err.msg);
    uint8_t *ob;
    size_t olen;
    ck_assert_msg(xf_onnx_read_file(opt, &ob, &olen, &err) == XF_OK, "%s", err.msg);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, olen, ob);
    ck_assert_ptr_nonnull(mp);
    int count = 0;
    for (size_t i = 0; i < mp->graph->n_node; i++)
        count += !strcmp(mp->graph->node[i]->op_type, op_type);
    onnx__model_proto__free_unpacked(mp, NULL);
    xf_free(ob);
    return count;
}

/* ONNX Runtime fuses the residual add and layer norm into the slower
 * SkipLayerNormalization (docs/target.md) in neither the original nor the
 * model written keeping N: written with N named on every value and copied
 * through the reshapes, it did. */
START_TEST(written_symbolic_model_fuses_what_the_original_does)
{
    xf_target_options to = xf_target_default_options();
    to.threads = 1;
    xf_target *t = NULL;
    xf_error err;
    xf_status st = xf_target_open(&to, &t, &err);
    if (st == XF_ERR_UNSUPPORTED) XF_SKIP("onnxruntime not installed (tools/setup.sh): %s", err.msg);
    ck_assert_msg(st == XF_OK, "%s", err.msg);
    size_t len, out_len = 0;
    uint8_t *buf, *out = NULL;
    xf_graph g;
    xf_onnx_dynamic *d = NULL;
    mb *m = import_residual_layernorm(&buf, &len, &g, &d);
    ck_assert_int_eq(xf_onnx_save_buffer_dynamic(&g, d, &out, &out_len, &err), XF_OK);
    ck_assert_int_eq(ort_nodes(t, buf, len, "residual_ln_in.onnx", "SkipLayerNormalization"), 0);
    ck_assert_int_eq(ort_nodes(t, out, out_len, "residual_ln_out.onnx", "SkipLayerNormalization"),
                     0);
    ck_assert_int_eq(ort_nodes(t, out, out_len, "residual_ln_out.onnx", "LayerNormalization"), 1);
    release_described(m, buf, &g, d, out);
    xf_target_close(t);
}
END_TEST

/* Silero VAD v5 declares its dynamic axes as 0: such a dim, and one with
 * neither value nor name, is symbolic ('<input>_dim<k>'), sized 1 unless
 * given, and written back symbolic. */
START_TEST(dims_declared_zero_are_symbolic)
{
    mb *m = mb_new(13);
    int64_t dx[3] = {0, 4, 0};
    m->inputs[m->graph.n_input++] = mb_vi(m, "x", T_FLOAT, 3, dx, NULL);
    m->inputs[0]->type->tensor_type->shape->dim[2]->value_case =
        ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE__NOT_SET;
    mb_node(m, "Relu", "r", "x", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    size_t len;
    uint8_t *buf;
    const char *nn[1] = {"x_dim2"};
    int64_t nv[1] = {7};
    xf_onnx_options o = one_dim(nn, nv);
    xf_graph g;
    xf_onnx_dynamic *d = NULL;
    xf_log_level lvl = xf_log_get_level();
    xf_log_set_level(XF_LOG_OFF); /* x_dim0 is not given: warned about, set to 1 */
    import_described(m, &o, &buf, &len, &g, &d);
    xf_log_set_level(lvl);
    int64_t want[3] = {1, 4, 7};
    expect_shape(&g.values[g.inputs[0]].shape, 3, want);
    ck_assert_int_eq(xf_onnx_dynamic_count(d), 2);
    ck_assert_str_eq(xf_onnx_dynamic_name(d, 0), "x_dim0");
    ck_assert_str_eq(xf_onnx_dynamic_name(d, 1), "x_dim2");
    uint8_t *out = NULL;
    size_t out_len = 0;
    Onnx__ModelProto *mp = export_kept(&g, d, &out, &out_len);
    ck_assert_str_eq(written_dim(mp, 0, 0, 0), "x_dim0");
    ck_assert_str_eq(written_dim(mp, 0, 0, 2), "x_dim2");
    ck_assert_str_eq(written_dim(mp, 1, 0, 2), "x_dim2");
    onnx__model_proto__free_unpacked(mp, NULL);
    release_described(m, buf, &g, d, out);
}
END_TEST

/* A Reshape whose target moves two dims that are no input dims (x [N,M,4]
 * -> [2N,2M]) has no form relative to the input: the export fails naming
 * it rather than write a target baked at one size. The same with [M,N,4]
 * is written as a target gathered from the input's run-time shape. */
START_TEST(export_refuses_parameters_that_cannot_follow)
{
    mb *m = dynamic_model(2);
    size_t len;
    uint8_t *buf;
    const char *nn[2] = {"N", "M"};
    int64_t nv[2] = {2, 3};
    xf_onnx_options o = xf_onnx_default_options();
    o.n_dim_overrides = 2;
    o.dim_names = nn;
    o.dim_values = nv;
    xf_graph g;
    xf_error err;
    xf_onnx_dynamic *d = NULL;
    import_described(m, &o, &buf, &len, &g, &d);
    uint8_t *out = NULL;
    size_t out_len = 0;
    ck_assert_int_eq(xf_onnx_save_buffer_dynamic(&g, d, &out, &out_len, &err),
                     XF_ERR_UNSUPPORTED);
    ck_assert_ptr_null(out);
    xf_test_expect_contains(err.msg, "'rs' (reshape) cannot be written with symbolic dims");
    /* without the description it is written as before, with fixed shapes */
    ck_assert_int_eq(xf_onnx_save_buffer_dynamic(&g, NULL, &out, &out_len, &err), XF_OK);
    release_described(m, buf, &g, d, out);

    m = dynamic_model(1);
    import_described(m, &o, &buf, &len, &g, &d);
    Onnx__ModelProto *mp = export_kept(&g, d, &out, &out_len);
    int gathers = 0;
    for (size_t i = 0; i < mp->graph->n_node; i++)
        gathers += !strcmp(mp->graph->node[i]->op_type, "Gather");
    ck_assert_int_eq(gathers, 1);
    onnx__model_proto__free_unpacked(mp, NULL);
    same_at_points(buf, len, out, out_len, d, 3);
    release_described(m, buf, &g, d, out);
}
END_TEST

/* A batch dim declared symbolic over a Reshape target baked at batch 1 (a
 * common export mistake): the model imports at no other size, so the dim
 * is written fixed at 1 and says why, rather than refuse the model. */
START_TEST(symbol_the_model_does_not_admit_is_written_fixed)
{
    mb *m = mb_new(13);
    const char *params[3] = {"N", NULL, NULL};
    int64_t dx[3] = {0, 4, 6}, tgt[2] = {1, 24};
    m->inputs[m->graph.n_input++] = mb_vi(m, "x", T_FLOAT, 3, dx, params);
    mb_init_i64(m, "tgt", 2, tgt);
    mb_node(m, "Reshape", "rs", "x tgt", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    size_t len;
    uint8_t *buf;
    xf_graph g;
    xf_onnx_dynamic *d = NULL;
    xf_log_level lvl = xf_log_get_level();
    xf_log_set_level(XF_LOG_OFF);
    import_described(m, NULL, &buf, &len, &g, &d);
    xf_log_set_level(lvl);
    ck_assert_int_eq(xf_onnx_dynamic_count(d), 1);
    ck_assert_ptr_nonnull(xf_onnx_dynamic_fixed(d, 0));
    xf_test_expect_contains(xf_onnx_dynamic_fixed(d, 0), "imports at no other size");
    ck_assert_int_eq(xf_onnx_dynamic_size(d, 0, 2), 1);
    uint8_t *out = NULL;
    size_t out_len = 0;
    Onnx__ModelProto *mp = export_kept(&g, d, &out, &out_len);
    ck_assert_ptr_null(written_dim(mp, 0, 0, 0));
    ck_assert_int_eq(mp->graph->input[0]->type->tensor_type->shape->dim[0]->dim_value, 1);
    onnx__model_proto__free_unpacked(mp, NULL);
    release_described(m, buf, &g, d, out);
}
END_TEST

/* An initializer that only an If branch reads (from the outer scope, by
 * name) stays in the graph, so the written model still has it (Silero's
 * 68 weights were dropped and ONNX Runtime refused the round trip). */
START_TEST(outer_scope_initializers_are_kept)
{
    mb *m = mb_new(13);
    float wv[6] = {1, 2, 3, 4, 5, 6};
    mb_input(m, "x", T_FLOAT, 2, D23);
    mb_input(m, "cond", T_BOOL, 0, NULL);
    mb_init(m, "w", T_FLOAT, 2, D23, wv);
    Onnx__NodeProto *n = mb_node(m, "If", "if", "cond", "z");
    for (int b = 0; b < 2; b++) {
        Onnx__GraphProto *gp = mb_if_branch(m, n, b, "t", D23);
        Onnx__NodeProto *bn = mb_alloc(m, sizeof *bn);
        onnx__node_proto__init(bn);
        bn->op_type = mb_str(m, b ? "Sub" : "Add");
        bn->n_input = 2;
        bn->input = mb_alloc(m, 2 * sizeof *bn->input);
        bn->input[0] = mb_str(m, "x");
        bn->input[1] = mb_str(m, "w");
        bn->n_output = 1;
        bn->output = mb_alloc(m, sizeof *bn->output);
        bn->output[0] = mb_str(m, "t");
        gp->n_node = 1;
        gp->node = mb_alloc(m, sizeof *gp->node);
        gp->node[0] = bn;
    }
    mb_node(m, "Relu", "relu", "z", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    xf_graph g;
    mb_load_ok(m, &g);
    int found = 0;
    for (int v = 0; v < g.n_values; v++)
        found |= g.values[v].kind == XF_VALUE_CONST && g.values[v].name &&
                 !strcmp(g.values[v].name, "w");
    ck_assert_msg(found, "initializer 'w', read by the If branches, was dropped");
    xf_graph_free(&g);
    mb_free(m);
}
END_TEST

/* rlflow-agent on a model whose Reshape cannot follow both its symbols
 * ([N,M,4] -> [2N,2M]), nothing better found: the input file's bytes are
 * written as they are, both symbols kept. With an external data file asked
 * for (the file cannot be copied) the model is exported: M, whose probe
 * shows it, is written fixed at its size, with a warning and the reason in
 * the report, and N stays symbolic: the model written declares N, fixes M
 * at 3, and computes what the original does at N = 2, 4 and 6. */
START_TEST(agent_writes_a_symbol_fixed_when_it_cannot_follow)
{
    mb *m = dynamic_model(2);
    char model[4096], out[4096], db[4096], log[4096];
    snprintf(model, sizeof model, "%s", mb_save(m, "swap_agent.onnx"));
    snprintf(out, sizeof out, "%s", xf_test_tmp("swap_agent.opt.onnx"));
    snprintf(db, sizeof db, "%s", xf_test_tmp("swap_rules.db"));
    snprintf(log, sizeof log, "%s", xf_test_tmp("swap_agent.log"));
    remove(out);
    xf_test_remove_db(db);
    char gen[4096]; /* xf_test_tool's buffer is reused by the next call */
    snprintf(gen, sizeof gen, "%s", xf_test_tool("xfergen"));
    ck_assert_int_eq(xf_test_system("%s --max-ops 1 --vocab taso -j 1 -o %s --quiet && "
                                    "%s %s -j 2 > /dev/null 2>&1",
                                    gen, db, xf_test_tool("xferverify"), db),
                     0);
    int rc = xf_test_system("%s --rules %s %s -o %s --search greedy --dim N=2 --dim M=3 "
                            "--backend analytic --cache none --no-latency -q > %s 2>&1",
                            xf_test_tool("rlflow-agent"), db, model, out, log);
    char *text = xf_test_read_file(log, NULL);
    ck_assert_msg(rc == 0, "rlflow-agent: exit %d\n%s", rc, text);
    xf_test_expect_contains(text, "symbolic dim:    N kept (the input file as it is)");
    xf_test_expect_contains(text, "symbolic dim:    M kept (the input file as it is)");
    xf_test_expect_same_file(model, out);
    free(text);
    remove(out);
    rc = xf_test_system("%s --rules %s %s -o %s --external-data swap_agent.opt.data --search "
                        "greedy --dim N=2 --dim M=3 --backend analytic --cache none --no-latency "
                        "-q > %s 2>&1",
                        xf_test_tool("rlflow-agent"), db, model, out, log);
    text = xf_test_read_file(log, NULL);
    ck_assert_msg(rc == 0, "rlflow-agent --external-data: exit %d\n%s", rc, text);
    xf_test_expect_contains(text, "symbolic dim:    N kept, checked at 2, 4, 6");
    xf_test_expect_contains(text, "symbolic dim:    M written FIXED at 3: the model written "
                                  "cannot follow it: ");
    xf_test_expect_contains(text, "'rs' (reshape) cannot be written with symbolic dims "
                                  "(symbolic dim 'M' at ");
    xf_test_expect_contains(text, "warning: ");
    ck_assert_msg(!strstr(text, "writing the input"), "the input was written:\n%s", text);
    size_t len;
    char *file = xf_test_read_file(out, &len);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, (const uint8_t *)file);
    ck_assert_ptr_nonnull(mp);
    ck_assert_str_eq(written_dim(mp, 0, 0, 0), "N");
    ck_assert_ptr_null(written_dim(mp, 0, 0, 1));
    ck_assert_int_eq(mp->graph->input[0]->type->tensor_type->shape->dim[1]->dim_value, 3);
    onnx__model_proto__free_unpacked(mp, NULL);
    free(file);
    const char *nn[2] = {"N", "M"};
    for (int64_t n = 2; n <= 6; n += 2) {
        int64_t nv[2] = {n, 3};
        xf_onnx_options o = xf_onnx_default_options();
        o.n_dim_overrides = 2;
        o.dim_names = nn;
        o.dim_values = nv;
        xf_graph a, b;
        xf_error err;
        ck_assert_msg(xf_onnx_load(model, &o, &a, &err) == XF_OK, "%s", err.msg);
        ck_assert_msg(xf_onnx_load(out, &o, &b, &err) == XF_OK, "N=%lld: %s", (long long)n,
                      err.msg);
        xf_test_expect_same_function(&a, &b, 5, 0);
        xf_graph_free(&a);
        xf_graph_free(&b);
    }
    free(text);
    mb_free(m);
}
END_TEST

/* Appends a protobuf varint / length-delimited field to b (at *n). */
static void pb_varint(uint8_t *b, size_t *n, uint64_t v)
{
    do {
        b[(*n)++] = (uint8_t)((v & 0x7f) | (v >> 7 ? 0x80 : 0));
        v >>= 7;
    } while (v);
}

static void pb_field(uint8_t *b, size_t *n, unsigned f, const void *p, size_t len)
{
    pb_varint(b, n, (uint64_t)f << 3 | 2);
    pb_varint(b, n, len);
    memmove(b + *n, p, len);
    *n += len;
}

/* A model whose graph holds an If whose then_branch holds an If ... depth
 * levels deep (three messages a level). */
static uint8_t *nested_ifs(int depth, size_t *len)
{
    size_t cap = (size_t)depth * 64 + 256, n = 0;
    uint8_t *g = malloc(cap), *t = malloc(cap), *m = malloc(cap);
    ck_assert(g && t && m);
    pb_field(g, &n, 2, "g", 1);
    for (int i = 0; i < depth; i++) {
        size_t a = 0, k = 0, out = 0;
        uint8_t *attr = malloc(n + 64), *node = malloc(n + 128);
        ck_assert(attr && node);
        pb_field(attr, &a, 1, "then_branch", 11);
        pb_varint(attr, &a, 20 << 3);
        pb_varint(attr, &a, 5);
        pb_field(attr, &a, 6, g, n);
        pb_field(node, &k, 1, "c", 1);
        pb_field(node, &k, 2, "y", 1);
        pb_field(node, &k, 4, "If", 2);
        pb_field(node, &k, 5, attr, a);
        pb_field(t, &out, 1, node, k);
        pb_field(t, &out, 2, "g", 1);
        free(attr);
        free(node);
        uint8_t *x = g;
        g = t;
        t = x;
        n = out;
    }
    size_t mn = 0;
    pb_varint(m, &mn, 1 << 3);
    pb_varint(m, &mn, 8);
    pb_field(m, &mn, 7, g, n);
    free(g);
    free(t);
    *len = mn;
    return m;
}

/* 3,000 nested If branches (120 KB) crashed the decoder's recursion: they
 * are refused before decoding, naming the depth; 50 decode (and fail on
 * what they lack, a dangling input). */
START_TEST(deep_nesting_is_refused_before_decoding)
{
    size_t len = 0;
    uint8_t *m = nested_ifs(3000, &len);
    xf_graph g;
    xf_error err;
    ck_assert_int_eq(xf_onnx_load_buffer(m, len, "nested.onnx", NULL, NULL, &g, &err),
                     XF_ERR_PARSE);
    xf_test_expect_contains(err.msg, "nested.onnx: its messages nest deeper than 200 levels");
    free(m);
    m = nested_ifs(50, &len);
    ck_assert_int_ne(xf_onnx_load_buffer(m, len, "nested.onnx", NULL, NULL, &g, &err), XF_OK);
    ck_assert_msg(!strstr(err.msg, "nest deeper"), "%s", err.msg);
    free(m);
}
END_TEST

/* ------------------------------ symbolic dims through strided downsampling */

/* Dims 0 and 3 of v's run-time shape (Shape, Gather, Unsqueeze) as the
 * 1-element tensors named in `outs` ("a b"); returns the Concat inputs
 * "<a> c16 <b>" of the first target below. */
static const char *shape_dims(mb *m, const char *v, const char *s, const char *outs)
{
    char a[32], b[32], buf[128];
    ck_assert_int_eq(sscanf(outs, "%31s %31s", a, b), 2);
    mb_node(m, "Shape", s, v, s);
    for (int i = 0; i < 2; i++) {
        char g[64], u[64];
        snprintf(g, sizeof g, "%s_g%d", s, i);
        snprintf(buf, sizeof buf, "%s %s", s, i ? "i3" : "i0");
        mb_node(m, "Gather", g, buf, g);
        snprintf(u, sizeof u, "%s_u%d", s, i);
        snprintf(buf, sizeof buf, "%s ax0", g);
        mb_node(m, "Unsqueeze", u, buf, i ? b : a);
    }
    snprintf(buf, sizeof buf, "%s c16 %s", a, b);
    return mb_str(m, buf);
}

/* x [batch,3,32,width] -> conv stride 2 -> relu -> conv stride 2 (r2, a
 * quarter of the width) -> maxpool 2 (an eighth) -> resized x2 and added to
 * r2 (so the width must be a multiple of 8) -> maxpool 2 -> reshaped to
 * [batch, 16, width/8] by a shape subgraph (Shape, Gather, Concat: the
 * importer folds it at the size imported, width/8 baked in) -> transposed,
 * MatMul, Softmax: y [batch, seq, 5], as a text recogniser reads a line;
 * and r2 reshaped by its own shape subgraph to z [batch, 32 * width/4].
 * Sizes one apart (width 96, 97, 98 ...) leave width/4 and width/8 as they
 * are, so only sizes far apart tell a baked target from one that follows. */
static mb *stride_model(void)
{
    mb *m = mb_new(13);
    const char *params[4] = {"batch", NULL, NULL, "width"};
    int64_t dx[4] = {0, 3, 32, 0}, dw1[4] = {4, 3, 3, 3}, dw2[4] = {4, 4, 3, 3}, dwo[2] = {16, 5};
    int64_t k3[2] = {3, 3}, k2[2] = {2, 2}, s2[2] = {2, 2}, p1[4] = {1, 1, 1, 1};
    int64_t zero = 0, three = 3, c16 = 16, c32 = 32, roi_n = 0, sc_n = 4;
    float w[144], scales[4] = {1, 1, 2, 2};
    m->inputs[m->graph.n_input++] = mb_vi(m, "x", T_FLOAT, 4, dx, params);
    for (int i = 0; i < 144; i++) w[i] = (float)((i * 37) % 17) / 17.0f - 0.45f;
    mb_init(m, "w1", T_FLOAT, 4, dw1, w);
    mb_init(m, "w2", T_FLOAT, 4, dw2, w);
    mb_init(m, "wo", T_FLOAT, 2, dwo, w);
    mb_init(m, "roi", T_FLOAT, 1, &roi_n, NULL);
    mb_init(m, "scales", T_FLOAT, 1, &sc_n, scales);
    mb_init(m, "i0", T_INT64, 0, NULL, &zero);
    mb_init(m, "i3", T_INT64, 0, NULL, &three);
    mb_init_i64(m, "ax0", 1, &zero);
    mb_init_i64(m, "c16", 1, &c16);
    mb_init_i64(m, "c32", 1, &c32);
    const char *convs[2][4] = {{"c1", "x w1", "c1o", "r1"}, {"c2", "r1 w2", "c2o", "r2"}};
    for (int i = 0; i < 2; i++) {
        Onnx__NodeProto *n = mb_node(m, "Conv", convs[i][0], convs[i][1], convs[i][2]);
        attr_ints(m, n, "kernel_shape", 2, k3);
        attr_ints(m, n, "strides", 2, s2);
        attr_ints(m, n, "pads", 4, p1);
        mb_node(m, "Relu", convs[i][3], convs[i][2], convs[i][3]);
    }
    const char *pools[2][3] = {{"p3", "r2", "p3"}, {"p4", "fused", "feat"}};
    for (int i = 0; i < 2; i++) {
        Onnx__NodeProto *n = mb_node(m, "MaxPool", pools[i][0], pools[i][1], pools[i][2]);
        attr_ints(m, n, "kernel_shape", 2, k2);
        attr_ints(m, n, "strides", 2, s2);
        if (i == 0) {
            attr_s(m, mb_node(m, "Resize", "up", "p3 roi scales", "up"), "mode", "nearest");
            mb_node(m, "Add", "fuse", "up r2", "fused");
        }
    }
    /* feat [N,4,4,W/8] -> [N, 16, W/8] */
    attr_i(m, mb_node(m, "Concat", "cat", shape_dims(m, "feat", "s", "n1 w81"), "tgt"), "axis",
           0);
    mb_node(m, "Reshape", "seq", "feat tgt", "seq");
    int64_t perm[3] = {0, 2, 1};
    attr_ints(m, mb_node(m, "Transpose", "tr", "seq", "seqt"), "perm", 3, perm);
    mb_node(m, "MatMul", "mm", "seqt wo", "logits");
    attr_i(m, mb_node(m, "Softmax", "sm", "logits", "y"), "axis", 2);
    /* r2 [N,4,8,W/4] -> [N, 32 * W/4] */
    shape_dims(m, "r2", "s4", "n41 w41");
    mb_node(m, "Mul", "k4", "w41 c32", "k1");
    attr_i(m, mb_node(m, "Concat", "cat4", "n41 k1", "tgt4"), "axis", 0);
    mb_node(m, "Reshape", "flat", "r2 tgt4", "z");
    const char *py[3] = {"batch", "seq", NULL}, *pz[2] = {"batch", "z1"};
    int64_t dy[3] = {0, 0, 5}, dz[2] = {0, 0};
    m->outputs[m->graph.n_output++] = mb_vi(m, "y", T_FLOAT, 3, dy, py);
    m->outputs[m->graph.n_output++] = mb_vi(m, "z", T_FLOAT, 2, dz, pz);
    return m;
}

/* Options putting batch and width at the sizes given (static storage). */
static xf_onnx_options batch_width(int64_t batch, int64_t width)
{
    static const char *names[2] = {"batch", "width"};
    static int64_t values[2];
    values[0] = batch;
    values[1] = width;
    xf_onnx_options o = xf_onnx_default_options();
    o.n_dim_overrides = 2;
    o.dim_names = names;
    o.dim_values = values;
    return o;
}

/* The checked writer on the stride model imported at batch 1, width 96
 * (x2 and x3 move width/4 and width/8, so targets baked at 96 would fail):
 * width and batch are written symbolic, both Reshapes written relative
 * (0 and -1, no width-derived size baked), and ONNX Runtime computes with
 * the written model what it computes with the original at widths 48, 96,
 * 192 and 288 (1/2, 1, 2 and 3 times the size imported at), batch 2. */
START_TEST(strided_dims_follow_the_symbol)
{
    mb *m = stride_model();
    char model[4096], out[4096];
    snprintf(model, sizeof model, "%s", mb_save(m, "stride.onnx"));
    snprintf(out, sizeof out, "%s", xf_test_tmp("stride.rt.onnx"));
    xf_onnx_options o = batch_width(1, 96);
    xf_graph g;
    xf_error err;
    xf_onnx_dynamic *d = NULL;
    ck_assert_msg(xf_onnx_load(model, &o, &g, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_onnx_dynamic_open_file(model, &o, &d, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(xf_onnx_dynamic_size(d, 1, 1), 192);
    ck_assert_int_eq(xf_onnx_dynamic_size(d, 1, 2), 288);
    xf_onnx_check_options wo = xf_onnx_default_check_options();
    wo.model = model;
    wo.output = out;
    wo.same_graph = 1;
    xf_onnx_checked res;
    ck_assert_msg(xf_onnx_write_checked(&wo, d, &g, &g, &res, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(res.wrote, XF_ONNX_WROTE_GRAPH);
    ck_assert_int_eq(res.n_points, 3);
    ck_assert_int_eq(res.n_fixed, 0);
    ck_assert_ptr_null(xf_onnx_dynamic_fixed(d, 1));
    size_t len;
    char *file = xf_test_read_file(out, &len);
    Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, len, (const uint8_t *)file);
    ck_assert_ptr_nonnull(mp);
    ck_assert_str_eq(written_dim(mp, 0, 0, 0), "batch");
    ck_assert_str_eq(written_dim(mp, 0, 0, 3), "width");
    ck_assert_str_eq(written_dim(mp, 1, 0, 1), "seq");
    for (int k = 0; k < 2; k++) {
        const Onnx__TensorProto *t = written_param(mp, "Reshape", k);
        for (size_t i = 0; i < t->raw_data.len / 8; i++)
            ck_assert_msg(raw_i64(t, (int)i) != 12 && raw_i64(t, (int)i) != 768,
                          "Reshape %d: dim %zu baked at width 96 (%lld)", k, i,
                          (long long)raw_i64(t, (int)i));
    }
    onnx__model_proto__free_unpacked(mp, NULL);
    free(file);
    xf_target *t = xf_fx_target();
    if (!t) {
        xf_test_skip_part("ONNX Runtime not installed (tools/setup.sh or RLFLOW_ORT_LIB)");
    } else {
        const int64_t widths[4] = {48, 96, 192, 288};
        for (int i = 0; i < 4; i++) {
            char at[64];
            snprintf(at, sizeof at, "batch 2, width %lld", (long long)widths[i]);
            xf_onnx_options ow = batch_width(2, widths[i]);
            xf_fx_expect_same_in_target(t, model, out, &ow, 1e-5, 1e-6, at);
        }
        xf_target_close(t);
    }
    xf_onnx_dynamic_free(d);
    xf_graph_free(&g);
    mb_free(m);
}
END_TEST

/* An "optimised" stride model that bakes width/8 (the logits multiplied by
 * ones of their shape at width 96, which computes the same there) cannot
 * follow width: the checked writer writes the input file's bytes instead
 * (it holds all of its data) and says why; so it does when the graph given
 * is the input itself (nothing better found), without a why. With an
 * external data file asked for, the input exported instead, width still
 * symbolic. With an input that cannot be exported either (an invalid
 * graph), the input file's bytes whatever is asked. */
START_TEST(checked_writer_falls_back_to_the_input)
{
    mb *m = stride_model();
    char model[4096], out[4096];
    snprintf(model, sizeof model, "%s", mb_save(m, "stride_fb.onnx"));
    snprintf(out, sizeof out, "%s", xf_test_tmp("stride_fb.opt.onnx"));
    xf_onnx_options o = batch_width(1, 96);
    xf_graph g, opt;
    xf_error err;
    xf_onnx_dynamic *d = NULL;
    ck_assert_msg(xf_onnx_load(model, &o, &g, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_onnx_dynamic_open_file(model, &o, &d, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(xf_graph_clone(&g, &opt, &err), XF_OK);
    int sm = -1;
    for (int i = 0; i < opt.n_nodes; i++)
        if (opt.nodes[i].op == XF_OP_SOFTMAX) sm = i;
    ck_assert_int_ge(sm, 0);
    int logits = opt.nodes[sm].inputs[0];
    xf_shape sh = opt.values[logits].shape;
    ck_assert_int_eq(sh.dims[1], 12);
    float ones[12 * 5];
    for (int i = 0; i < 60; i++) ones[i] = 1;
    int c = xf_graph_add_const(&opt, "baked", XF_F32, &sh, ones, &err);
    ck_assert_int_ge(c, 0);
    int ins[2] = {logits, c};
    int outv = xf_graph_op(&opt, XF_OP_MUL, NULL, ins, 2, &err);
    ck_assert_msg(outv >= 0, "%s", err.msg);
    opt.nodes[sm].inputs[0] = outv;
    xf_onnx_check_options wo = xf_onnx_default_check_options();
    wo.model = model;
    wo.output = out;
    wo.fall_back = 1;
    xf_onnx_checked res;
    ck_assert_msg(xf_onnx_write_checked(&wo, d, &g, &opt, &res, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(res.wrote, XF_ONNX_WROTE_INPUT_FILE);
    ck_assert_int_eq(res.n_points, 0);
    xf_test_expect_contains(res.why, "symbolic dim 'width' at ");
    xf_test_expect_same_file(model, out);
    remove(out);
    ck_assert_msg(xf_onnx_write_checked(&wo, d, &g, &g, &res, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(res.wrote, XF_ONNX_WROTE_INPUT_FILE);
    ck_assert_str_eq(res.why, "");
    xf_test_expect_same_file(model, out);
    char data[4096];
    snprintf(data, sizeof data, "%s", xf_test_tmp("stride_fb.opt.data"));
    remove(data);
    wo.external_data = "stride_fb.opt.data";
    ck_assert_msg(xf_onnx_write_checked(&wo, d, &g, &opt, &res, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(res.wrote, XF_ONNX_WROTE_INPUT);
    xf_test_expect_contains(res.why, "symbolic dim 'width' at ");
    ck_assert_ptr_null(xf_onnx_dynamic_fixed(d, 1));
    ck_assert_int_eq(res.n_points, 3);
    /* the input as written follows width */
    xf_onnx_options o2 = batch_width(2, 192);
    xf_graph a, b;
    ck_assert_msg(xf_onnx_load(model, &o2, &a, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_onnx_load(out, &o2, &b, &err) == XF_OK, "%s", err.msg);
    xf_test_expect_same_function(&a, &b, 9, 1e-6);
    xf_graph_free(&a);
    xf_graph_free(&b);
    /* an input that cannot be exported: the file as it is */
    xf_graph bad;
    xf_graph_init(&bad);
    int x = xf_test_input(&bad, "x", 1, (int64_t[]){4});
    xf_test_out(&bad, x);
    bad.values[x].shape.rank = -1; /* invalid */
    wo.external_data = NULL;
    ck_assert_msg(xf_onnx_write_checked(&wo, d, &bad, &opt, &res, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(res.wrote, XF_ONNX_WROTE_INPUT_FILE);
    xf_test_expect_same_file(model, out);
    xf_graph_free(&bad);
    xf_graph_free(&opt);
    xf_onnx_dynamic_free(d);
    xf_graph_free(&g);
    mb_free(m);
}
END_TEST

/* Sizes without --dim: width 1 to 4 leave nothing for the second pool, so
 * the size search takes the smallest power of two that imports (8) and
 * says so; from a test_data_set input the sizes are the data's; data of
 * the wrong rank, or a missing file, are errors naming the file; a model
 * that imports at no size gets the importer's errors at 1 and at 4096. */
START_TEST(sizes_are_chosen_when_not_given)
{
    mb *m = stride_model();
    char model[4096];
    snprintf(model, sizeof model, "%s", mb_save(m, "stride_sizes.onnx"));
    xf_onnx_sizes *s = NULL;
    xf_error err;
    ck_assert_msg(xf_onnx_sizes_choose(model, NULL, NULL, &s, &err) == XF_OK, "%s", err.msg);
    xf_onnx_options o = xf_onnx_sizes_options(s);
    ck_assert_int_eq(o.n_dim_overrides, 2);
    ck_assert_str_eq(o.dim_names[0], "batch");
    ck_assert_int_eq(o.dim_values[0], 1);
    ck_assert_int_eq(o.dim_values[1], 8);
    xf_test_expect_contains(xf_onnx_sizes_said(s), "batch=1, width=8 (not given: the smallest "
                                                   "powers of two at which the model imports)");
    xf_graph g;
    ck_assert_msg(xf_onnx_load(model, &o, &g, &err) == XF_OK, "%s", err.msg);
    xf_graph_free(&g);
    xf_onnx_sizes_free(s);
    /* given: nothing said */
    xf_onnx_options given = batch_width(3, 40);
    ck_assert_int_eq(xf_onnx_sizes_choose(model, &given, NULL, &s, &err), XF_OK);
    ck_assert_int_eq(xf_onnx_sizes_options(s).dim_values[1], 40);
    ck_assert_str_eq(xf_onnx_sizes_said(s), "");
    xf_onnx_sizes_free(s);
    /* from the data, batch given */
    const char *dir = xf_test_tmp("stride_data");
    char data_dir[4096], path[4200];
    snprintf(data_dir, sizeof data_dir, "%s", dir);
    ck_assert_int_eq(xf_test_system("mkdir -p %s", data_dir), 0);
    snprintf(path, sizeof path, "%s/input_0.pb", data_dir);
    xf_tensor t;
    xf_shape sh = {.rank = 4, .dims = {2, 3, 32, 40}};
    ck_assert_int_eq(xf_tensor_alloc(&t, XF_F32, &sh, &err), XF_OK);
    ck_assert_int_eq(xf_onnx_save_tensor(path, &t, "x", &err), XF_OK);
    xf_tensor_free(&t);
    const char *bn[1] = {"batch"};
    int64_t bv[1] = {5};
    xf_onnx_options b5 = one_dim(bn, bv);
    ck_assert_msg(xf_onnx_sizes_choose(model, &b5, data_dir, &s, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_eq(xf_onnx_sizes_options(s).dim_values[0], 5);
    ck_assert_int_eq(xf_onnx_sizes_options(s).dim_values[1], 40);
    xf_test_expect_contains(xf_onnx_sizes_said(s), "width=40 (from ");
    xf_test_expect_contains(xf_onnx_sizes_said(s), "batch=5 (given)");
    xf_onnx_sizes_free(s);
    sh.rank = 2;
    ck_assert_int_eq(xf_tensor_alloc(&t, XF_F32, &sh, &err), XF_OK);
    ck_assert_int_eq(xf_onnx_save_tensor(path, &t, "x", &err), XF_OK);
    xf_tensor_free(&t);
    ck_assert_int_eq(xf_onnx_sizes_choose(model, NULL, data_dir, &s, &err), XF_ERR_SHAPE);
    xf_test_expect_contains(err.msg, "input_0.pb: shape [2,3] has no size for dim 3 of input "
                                     "'x' ('width')");
    ck_assert_ptr_null(s);
    unlink(path);
    ck_assert_int_ne(xf_onnx_sizes_choose(model, NULL, data_dir, &s, &err), XF_OK);
    xf_test_expect_contains(err.msg, "input_0.pb");
    mb_free(m);
    /* a model that fails whatever the size says why once */
    m = mb_new(13);
    const char *params[3] = {"N", NULL, NULL};
    int64_t dx[3] = {0, 4, 6}, tgt[2] = {5, 5};
    m->inputs[m->graph.n_input++] = mb_vi(m, "x", T_FLOAT, 3, dx, params);
    mb_init_i64(m, "tgt", 2, tgt);
    mb_node(m, "Reshape", "rs", "x tgt", "y");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    snprintf(model, sizeof model, "%s", mb_save(m, "never_sized.onnx"));
    ck_assert_int_eq(xf_onnx_sizes_choose(model, NULL, NULL, &s, &err), XF_ERR_SHAPE);
    xf_test_expect_contains(err.msg, "the model imports at no size of its symbolic dims from 1 "
                                     "to 4096 (at 1: ");
    xf_test_expect_contains(err.msg, "'rs' (Reshape): reshape: cannot reshape [1,4,6]");
    xf_test_expect_contains(err.msg, "; at 4096: ");
    mb_free(m);
}
END_TEST

/* A ViT's class token as PyTorch exports class_token.expand(n, -1, -1) with
 * the batch N dynamic: Expand(C [1,1,4], Concat(Shape(x)[0:1], [1, 4]))
 * concatenated before the tokens x [N,2,4] on axis 1, then a MatMul. */
static mb *class_token_model(void)
{
    mb *m = mb_new(13);
    const char *params[3] = {"N", NULL, NULL};
    int64_t dx[3] = {0, 2, 4}, dc[3] = {1, 1, 4}, dw[2] = {4, 5}, zero = 0, one = 1;
    int64_t rest[2] = {1, 4};
    m->inputs[m->graph.n_input++] = mb_vi(m, "x", T_FLOAT, 3, dx, params);
    float c[4] = {0.25f, -1.5f, 2.0f, 0.75f}, w[20];
    for (int i = 0; i < 20; i++) w[i] = (float)((i * 5) % 7) / 7.0f - 0.4f;
    mb_init(m, "C", T_FLOAT, 3, dc, c);
    mb_init(m, "W", T_FLOAT, 2, dw, w);
    mb_init_i64(m, "start", 1, &zero);
    mb_init_i64(m, "end", 1, &one);
    mb_init_i64(m, "rest", 2, rest);
    mb_node(m, "Shape", "shape", "x", "s");
    mb_node(m, "Slice", "batch", "s start end", "n");
    attr_i(m, mb_node(m, "Concat", "target", "n rest", "tgt"), "axis", 0);
    mb_node(m, "Expand", "cls", "C tgt", "c");
    attr_i(m, mb_node(m, "Concat", "tokens", "c x", "t"), "axis", 1);
    mb_node(m, "MatMul", "mm", "t W", "y");
    const char *py[3] = {"N", NULL, NULL};
    int64_t dy[3] = {0, 3, 5};
    m->outputs[m->graph.n_output++] = mb_vi(m, "y", T_FLOAT, 3, dy, py);
    return m;
}

/* Imported at N = 3, and at N = 1 where the Expand copies its input, the
 * class token's Expand stays a node (its target is read from the input's
 * shape, so it is not folded into a [N,1,4] constant); written keeping N,
 * its target takes the batch from the input's run-time shape and the model
 * computes what the original does at N and two other sizes (issue 28:
 * modelzoo ViT with a symbolic batch). */
START_TEST(class_token_expand_follows_the_batch)
{
    mb *m = class_token_model();
    const char *nn[1] = {"N"};
    int64_t nv[1] = {_i == 0 ? 3 : 1};
    xf_onnx_options o = one_dim(nn, nv);
    uint8_t *buf, *out = NULL;
    size_t len, out_len = 0;
    xf_graph g;
    xf_onnx_dynamic *d = NULL;
    import_described(m, &o, &buf, &len, &g, &d);
    int expands = 0;
    for (int i = 0; i < g.n_nodes; i++) expands += g.nodes[i].op == XF_OP_EXPAND;
    ck_assert_int_eq(expands, 1);
    Onnx__ModelProto *mp = export_kept(&g, d, &out, &out_len);
    ck_assert_str_eq(written_dim(mp, 0, 0, 0), "N");
    ck_assert_str_eq(written_dim(mp, 1, 0, 0), "N");
    const Onnx__GraphProto *gp = mp->graph;
    int shape_read = 0;
    for (size_t n = 0; n < gp->n_node; n++)
        if (strcmp(gp->node[n]->op_type, "Shape") == 0 &&
            strcmp(gp->node[n]->input[0], "x") == 0)
            shape_read = 1;
    ck_assert_msg(shape_read, "the Expand's target does not read the input's shape");
    onnx__model_proto__free_unpacked(mp, NULL);
    same_at_points(buf, len, out, out_len, d, 11);
    release_described(m, buf, &g, d, out);
}
END_TEST

/* ------------------------------------------------ shape arithmetic (issue 29) */

/* An embedding as PyTorch exports it with batch B and sequence S dynamic:
 * position ids Range(0, Shape(ids)[1], 1), token types
 * ConstantOfShape(Shape(ids)) = 0, y = W[ids] + W[pos] + T[types]. */
static mb *embedding_model(void)
{
    mb *m = mb_new(13);
    const char *params[2] = {"B", "S"};
    int64_t d[2] = {0, 0}, zero = 0, one = 1, ax0 = 0, dw[2] = {16, 4}, dt[2] = {2, 4};
    m->inputs[m->graph.n_input++] = mb_vi(m, "ids", T_INT64, 2, d, params);
    float w[64], t[8];
    for (int i = 0; i < 64; i++) w[i] = (float)i;
    for (int i = 0; i < 8; i++) t[i] = 1000.0f * (float)(i + 1);
    mb_init(m, "W", T_FLOAT, 2, dw, w);
    mb_init(m, "T", T_FLOAT, 2, dt, t);
    mb_init(m, "zero", T_INT64, 0, NULL, &zero);
    mb_init(m, "one", T_INT64, 0, NULL, &one);
    mb_init_i64(m, "ax0", 1, &ax0);
    mb_node(m, "Shape", "shape", "ids", "s");
    mb_node(m, "Gather", "seq", "s one", "n");
    mb_node(m, "Range", "range", "zero n one", "r");
    mb_node(m, "Unsqueeze", "unsq", "r ax0", "pos");
    Onnx__NodeProto *c = mb_node(m, "ConstantOfShape", "types", "s", "z");
    attr_t(m, c, "value", mb_tensor(m, "v", T_INT64, 1, &one, &zero));
    mb_node(m, "Gather", "we", "W ids", "a");
    mb_node(m, "Gather", "pe", "W pos", "b");
    mb_node(m, "Gather", "te", "T z", "c");
    mb_node(m, "Add", "add1", "a b", "ab");
    mb_node(m, "Add", "add2", "ab c", "y");
    const char *py[3] = {"B", "S", NULL};
    int64_t dy[3] = {0, 0, 4};
    m->outputs[m->graph.n_output++] = mb_vi(m, "y", T_FLOAT, 3, dy, py);
    return m;
}

/* Imported at B = 2, S = 3, the Range and the ConstantOfShape are opaque
 * nodes with their kernels (the model computes them at run time); the
 * interpreter gives W[ids] + W[s] + T[0]; written keeping B and S, the model
 * has no size baked in and computes what the original does at three sizes. */
START_TEST(shape_arithmetic_keeps_symbols)
{
    mb *m = embedding_model();
    const char *names[2] = {"B", "S"};
    int64_t values[2] = {2, 3};
    xf_onnx_options o = xf_onnx_default_options();
    o.n_dim_overrides = 2;
    o.dim_names = names;
    o.dim_values = values;
    uint8_t *buf, *out = NULL;
    size_t len, out_len = 0;
    xf_graph g;
    xf_onnx_dynamic *d = NULL;
    xf_error err;
    import_described(m, &o, &buf, &len, &g, &d);
    int kernels = 0;
    for (int i = 0; i < g.n_nodes; i++)
        if (g.nodes[i].op == XF_OP_OPAQUE) {
            ck_assert_msg(xf_opaque_calc_kernel(g.nodes[i].opaque->kernel), "%s has no kernel",
                          g.nodes[i].opaque->op_type);
            kernels++;
        }
    ck_assert_int_eq(kernels, 2);
    xf_tensor in;
    int64_t ids[6] = {5, 0, 7, 1, 2, 3}, d23[2] = {2, 3};
    xf_shape s23 = xf_shape_make(2, d23);
    ck_assert_int_eq(xf_tensor_alloc(&in, XF_I64, &s23, &err), XF_OK);
    memcpy(in.data, ids, sizeof ids);
    xf_tensor y;
    run(&g, &in, &y);
    float want[24];
    for (int i = 0; i < 6; i++)
        for (int k = 0; k < 4; k++)
            want[i * 4 + k] = (float)(ids[i] * 4 + k) + (float)((i % 3) * 4 + k) +
                              1000.0f * (float)(k + 1);
    expect_f32(&y, want, 24, 0);
    xf_tensor_free(&y);
    xf_tensor_free(&in);
    Onnx__ModelProto *mp = export_kept(&g, d, &out, &out_len);
    ck_assert_str_eq(written_dim(mp, 0, 0, 0), "B");
    ck_assert_str_eq(written_dim(mp, 0, 0, 1), "S");
    ck_assert_str_eq(written_dim(mp, 1, 0, 1), "S");
    onnx__model_proto__free_unpacked(mp, NULL);
    same_at_points(buf, len, out, out_len, d, 7);
    release_described(m, buf, &g, d, out);
}
END_TEST

/* At fixed sizes the arithmetic leaves no trace when it only feeds
 * parameters: Swin's padding to a multiple of the window,
 * (4 - W % 4) % 4 from Shape, becomes a Pad with constant pads; a
 * ScatterND on constants folds to a constant. */
START_TEST(shape_arithmetic_folds_at_fixed_sizes)
{
    mb *m = mb_new(13);
    int64_t dx[3] = {1, 5, 7}, two = 2, win = 4, zeros4[4] = {0, 0, 0, 0}, pre[5] = {0, 0, 0, 0, 0};
    int64_t idx[2] = {1, 3}, upd[2] = {5, 6}, di[2] = {2, 1}, du = 2;
    mb_input(m, "x", T_FLOAT, 3, dx);
    mb_init(m, "two", T_INT64, 0, NULL, &two);
    mb_init(m, "win", T_INT64, 0, NULL, &win);
    mb_init_i64(m, "pre", 5, pre);
    mb_init_i64(m, "ax0", 1, zeros4);
    mb_node(m, "Shape", "shape", "x", "s");
    mb_node(m, "Gather", "w", "s two", "W");
    mb_node(m, "Mod", "mod1", "W win", "r");
    mb_node(m, "Sub", "sub", "win r", "q");
    mb_node(m, "Mod", "mod2", "q win", "p");
    mb_node(m, "Unsqueeze", "unsq", "p ax0", "p1");
    attr_i(m, mb_node(m, "Concat", "pads", "pre p1", "pads"), "axis", 0);
    mb_node(m, "Pad", "pad", "x pads", "y");
    mb_init_i64(m, "zeros", 4, zeros4);
    mb_init(m, "idx", T_INT64, 2, di, idx);
    mb_init(m, "upd", T_INT64, 1, &du, upd);
    mb_node(m, "ScatterND", "scatter", "zeros idx upd", "sc");
    mb_output(m, "y", T_FLOAT, -1, NULL);
    mb_output(m, "sc", T_INT64, -1, NULL);
    xf_graph g;
    mb_load_ok(m, &g);
    ck_assert_int_eq(g.n_nodes, 1);
    const xf_node *pad = the(&g, XF_OP_PAD);
    ck_assert_int_eq(pad->params.ends[2], 1);
    int64_t want_y[3] = {1, 5, 8};
    expect_shape(&g.values[g.outputs[0]].shape, 3, want_y);
    const xf_value *sc = &g.values[g.outputs[1]];
    ck_assert_int_eq(sc->kind, XF_VALUE_CONST);
    int64_t want_sc[4] = {0, 5, 0, 6};
    for (int i = 0; i < 4; i++) ck_assert_int_eq(((const int64_t *)sc->data)[i], want_sc[i]);
    xf_graph_free(&g);
    mb_free(m);
}
END_TEST

/* A size that follows data, not shapes (Range up to a value the model
 * reads from its input) cannot be known at import: the error names the
 * node, the input it depends on, and what to record. */
START_TEST(data_dependent_size_is_refused)
{
    mb *m = mb_new(13);
    int64_t zero = 0, one = 1;
    mb_input(m, "n", T_INT64, 0, NULL);
    mb_init(m, "zero", T_INT64, 0, NULL, &zero);
    mb_init(m, "one", T_INT64, 0, NULL, &one);
    mb_node(m, "Range", "range", "zero n one", "r");
    mb_output(m, "r", T_INT64, -1, NULL);
    const char *want[] = {"test.onnx", "node 0 'range' (Range)", "input 1 'n'", "value_info",
                          NULL};
    expect_error(m, XF_ERR_UNSUPPORTED, want);
    mb_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("onnx_import");
    TCase *ops = tcase_create("ops");
    tcase_add_test(ops, unary_and_binary_ops);
    tcase_add_test(ops, conv1d_backend_cases);
    tcase_add_test(ops, where_cast_dropout);
    tcase_add_test(ops, matmul_and_gemm);
    tcase_add_test(ops, conv_auto_pad);
    tcase_add_test(ops, conv_attributes_and_fusion);
    tcase_add_test(ops, pooling_ops);
    tcase_add_test(ops, normalisation_ops);
    tcase_add_test(ops, softmax_opset_semantics);
    tcase_add_test(ops, split_squeeze_unsqueeze_reduce_opsets);
    tcase_add_test(ops, movement_ops);
    tcase_add_test(ops, slice_bounds);
    tcase_add_test(ops, pad_modes);
    suite_add_tcase(s, ops);
    TCase *model = tcase_create("model");
    tcase_set_timeout(model, 60); /* some run the tools a dozen times (slow under ASan) */
    tcase_add_test(model, shape_subgraph_folds);
    tcase_add_test(model, constants_and_constant_of_shape);
    tcase_add_test(model, initializers_kept_unless_parameters);
    tcase_add_test(model, opaque_nodes_keep_attributes);
    tcase_add_test(model, opaque_standard_ops_get_shapes);
    tcase_add_test(model, if_branches_run_and_export);
    tcase_add_test(model, old_opset_forms_are_converted);
    tcase_add_test(model, opset18_forms_are_converted);
    tcase_add_test(model, malformed_graphs);
    tcase_add_test(model, empty_op_type_is_refused);
    tcase_add_test(model, truncated_and_garbage_bytes);
    tcase_add_test(model, external_data_initializer);
    tcase_add_test(model, symbolic_dims_from_options);
    tcase_add_test(model, overflowing_shapes_are_rejected);
    tcase_add_test(model, tools_refuse_overflowing_models_and_write_nothing);
    tcase_add_test(model, tools_refuse_models_over_the_memory_limit);
    suite_add_tcase(s, model);
    TCase *dyn = tcase_create("dynamic");
    tcase_set_timeout(dyn, 120); /* runs xfergen, xferverify and rlflow-agent */
    tcase_add_test(dyn, symbolic_dims_are_kept_on_export);
    tcase_add_test(dyn, symbolic_dims_kept_with_external_data);
    tcase_add_test(dyn, dims_declared_zero_are_symbolic);
    tcase_add_test(dyn, inner_symbolic_dims_are_written_unnamed);
    tcase_add_test(dyn, written_symbolic_model_fuses_what_the_original_does);
    tcase_add_test(dyn, export_refuses_parameters_that_cannot_follow);
    tcase_add_test(dyn, symbol_the_model_does_not_admit_is_written_fixed);
    tcase_add_test(dyn, agent_writes_a_symbol_fixed_when_it_cannot_follow);
    tcase_add_test(dyn, strided_dims_follow_the_symbol);
    tcase_add_test(dyn, checked_writer_falls_back_to_the_input);
    tcase_add_test(dyn, sizes_are_chosen_when_not_given);
    tcase_add_test(dyn, shape_arithmetic_keeps_symbols);
    tcase_add_loop_test(dyn, class_token_expand_follows_the_batch, 0, 2);
    tcase_add_test(model, shape_arithmetic_folds_at_fixed_sizes);
    tcase_add_test(model, data_dependent_size_is_refused);
    tcase_add_test(model, outer_scope_initializers_are_kept);
    tcase_add_test(model, deep_nesting_is_refused_before_decoding);
    suite_add_tcase(s, dyn);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
