/*
 * import_internal.h — private to the ONNX importer (onnx/import*.c).
 *
 * The importer works on an unpacked Onnx__ModelProto and a symbol table
 * that maps every ONNX value name to what is known about it: a graph value
 * id, constant data (initializers, Constant nodes, folded results — kept
 * out of the graph until something needs them as a tensor, so constants
 * used only as parameters or folded away never become dead initializers),
 * or an initializer not yet decoded.
 *
 * Values whose contents are known at import time although they are computed
 * from a run-time input (Shape of an activation and everything computed
 * only from such shapes and constants) are "deferred": their symbols hold
 * the data, so they can serve as parameters (a Reshape target), and the
 * nodes that compute them are added to the graph only when something needs
 * them as tensors. Shape subgraphs thus leave no trace when they only feed
 * parameters, and stay in the graph unchanged when they feed real data.
 *
 * Files: import.c (entry points, model checks, driver), import_order.c
 * (name resolution, duplicate/dangling checks, topological order),
 * import_emit.c (adding nodes, folding, opaque nodes, error helpers),
 * import_ops.c (op_type -> xf_op + params per opset; more mappings in
 * import_ops_nn.c, import_ops_shape.c, import_ops_act.c, import_ops_resize.c,
 * import_ops_calc.c),
 * import_opaque_shape.c (output shapes of opaque standard ops), import_if.c
 * (If branches as graphs), import_lstm.c (LSTM attributes), import_conv1d.c
 * (1-D Conv), import_attr.c
 * (attributes and constant parameter inputs), import_tensor.c (TensorProto
 * decoding, xf_onnx_load_tensor), external_read.c (external data), import_names.c (string map),
 * import_pb.c (protobuf-c's allocator).
 */
#ifndef XF_ONNX_IMPORT_INTERNAL_H
#define XF_ONNX_IMPORT_INTERNAL_H

#include "external_internal.h"
#include "onnx.h"
#include "onnx.pb-c.h"

/* ---------------------------------------------------------- string -> int map */

/* Hash map from a string to a non-negative int: entries in two arrays, an
 * xf_htab from each key's hash to its entry. Keys are not copied: they must
 * outlive the map. */
typedef struct imp_map {
    xf_htab index;
    const char **keys;
    int *vals;
    size_t cap, n;
} imp_map;

void ox_map_init(imp_map *m);
void ox_map_free(imp_map *m);
/* Value stored for `key`, or -1. */
int ox_map_get(const imp_map *m, const char *key);
/* Inserts or replaces; XF_ERR_NOMEM on allocation failure. */
xf_status ox_map_put(imp_map *m, const char *key, int val, xf_error *err);

/* ---------------------------------------------------------------- state */

/* Everything known about one ONNX value name. */
typedef struct imp_sym {
    const char *name;
    int producer;   /* ONNX node index producing it, -1 for inputs/initializers */
    int is_input;   /* a graph input fed at run time */
    int value;      /* graph value id once it is in the graph, else -1 */
    const Onnx__TensorProto *init; /* initializer not decoded yet */
    int has_const;  /* `t` holds the constant's data */
    int t_owned;    /* `t.data` is ours to xf_free (else the graph owns it) */
    int borrowed;   /* `t.data` is the exporter's (a model read back from memory) */
    int deferred;   /* index in st->deferred computing it, -1: a plain constant or none */
    int uses;       /* how often the ONNX graph consumes it (node inputs, graph outputs) */
    int sub_uses;   /* of which by nodes inside subgraphs (If/Loop bodies): outer-scope
                       values those need in the graph, whatever else uses them */
    xf_tensor t;
} imp_sym;

/* A node whose outputs are known (see the top of this file) and which is
 * added to the graph only once one of them is needed as a tensor. */
typedef struct imp_deferred {
    xf_op op;
    xf_params p;
    int n_in, n_out;
    int *in_syms;           /* arena */
    const char **out_names; /* arena; "" for an unnamed output */
    const char *node_name;  /* may be NULL */
    int node_index;         /* ONNX node it came from, for messages */
    int emitted;
} imp_deferred;

typedef struct imp_state {
    const char *file;     /* model name used in every message */
    const char *base_dir; /* external data directory, NULL: refused */
    const imp_ext_mem *ext_mem; /* external data held in memory, borrowed (or NULL) */
    xf_onnx_options opts;
    const Onnx__ModelProto *model;
    const Onnx__GraphProto *graph;
    int64_t opset; /* default-domain opset */
    xf_graph *g;
    imp_sym *syms;
    int n_syms, cap_syms;
    imp_map names;     /* value name -> sym index */
    imp_map vinfo;     /* value name -> i: graph->value_info[i], or output[i - n_value_info] */
    xf_arena arena;    /* synthetic names, scratch strings */
    int fresh_next;    /* ox_fresh_name's next number: names come in O(1), not O(names) */
    imp_map dim_syms;  /* symbolic dims seen on graph inputs -> 1 once warned about */
    imp_deferred *deferred; /* xf_malloc'd */
    int n_deferred, cap_deferred;
    /* node being imported, for messages */
    int node_index;
    const Onnx__NodeProto *node;
} imp_state;

/* xf_onnx_load_buffer, with external data taken from `ext_mem` (borrowed,
 * see external_internal.h) when it is set. */
xf_status ox_load(const void *buf, size_t len, const char *name, const char *base_dir,
                   const imp_ext_mem *ext_mem, const xf_onnx_options *opts, xf_graph *g,
                   xf_error *err);
/* "" for NULL (protobuf-c leaves absent strings NULL). */
const char *ox_str(const char *s);
/* Static dtype and shape of a ValueInfoProto (graph input or value_info).
 * Symbolic dims take the size given in the options, else 1; `is_input`
 * says whether new symbols may be introduced (inputs) or only those already
 * seen on inputs (value_info). `what` names the value in messages. */
xf_status ox_value_type(imp_state *st, const Onnx__ValueInfoProto *vi, int is_input,
                         const char *what, xf_dtype *dt, xf_shape *sh, xf_error *err);
/* Whether a dim of a graph input is symbolic: a name, none, or declared 0
 * (Silero VAD v5 declares its dynamic axes as 0). */
int ox_dim_symbolic(const Onnx__TensorShapeProto__Dimension *d);
/* Name of symbolic dim `axis` of tensor value `vi`: its dim_param, else
 * "<value>_dim<axis>" (a dim declared 0 or unnamed). */
#define IMP_DIM_NAME_MAX 256
void ox_dim_name(const Onnx__ValueInfoProto *vi, int axis, char *buf, size_t n);
/* Opset version the model declares for `domain` ("" = default); 0 if none. */
int64_t ox_domain_version(const imp_state *st, const char *domain);

/* ------------------------------------------------------------ symbols */

/* Index of a new symbol named `name` (not registered in st->names). */
int ox_sym_new(imp_state *st, const char *name, xf_error *err);
/* Symbol of a name, or -1. */
int ox_sym_find(const imp_state *st, const char *name);
/* Decodes a pending initializer; afterwards sym->has_const holds. */
xf_status ox_sym_decode(imp_state *st, int sym, xf_error *err);
/* True when the symbol's data is known at import time (a constant, or a
 * deferred value). */
int ox_sym_is_const(const imp_state *st, int sym);
/* The graph value of a symbol, adding a constant (or the deferred nodes
 * computing it) to the graph on first use. Returns the value id or -1 with
 * *err set. */
int ox_sym_value(imp_state *st, int sym, xf_error *err);
/* dtype and shape of a symbol (decoding a pending initializer). */
xf_status ox_sym_info(imp_state *st, int sym, xf_dtype *dt, xf_shape *sh, xf_error *err);

/* ------------------------------------------------------------ errors */

/* Fails with "<file>: node <i> '<name>' (<OpType>): <msg>" for the node in
 * st->node. */
xf_status ox_node_fail(imp_state *st, xf_error *err, xf_status code, const char *fmt, ...)
    XF_PRINTF(4, 5);
/* Puts the node context in front of an error raised below the importer. */
xf_status ox_node_prefix(imp_state *st, xf_error *err, xf_status code);

/* ------------------------------------------------------------ emission */

/* Adds `op` for the current node, or folds it when folding is on and every
 * input's data is known (for XF_OP_SHAPE: whatever the input): the outputs
 * become constants, deferred when an input is deferred or not constant.
 * in_syms: symbol per xf input, -1 for omitted;
 * out_names: ONNX name per xf output ("" for an unnamed one); node_name may
 * be NULL. */
xf_status ox_emit(imp_state *st, xf_op op, const xf_params *p, const int *in_syms, int n_in,
                   const char *const *out_names, int n_out, const char *node_name,
                   xf_error *err);
/* ox_emit for a node whose parameters (inputs read into p) were computed
 * from run-time shapes when params_deferred is 1: its folded outputs are
 * deferred too, so that a model written with symbolic dims keeps the node
 * (a class token's Expand to the batch read by Shape). */
xf_status ox_emit_as(imp_state *st, xf_op op, const xf_params *p, const int *in_syms, int n_in,
                     const char *const *out_names, int n_out, const char *node_name,
                     int params_deferred, xf_error *err);
/* Makes `name` a constant holding `t` (ownership of t->data passes). */
xf_status ox_set_const(imp_state *st, const char *name, xf_tensor *t, xf_error *err);
/* Gives graph value v the ONNX name `name` ("" leaves it unnamed) and makes
 * the name's symbol refer to it. */
xf_status ox_bind_output(imp_state *st, int v, const char *name, xf_error *err);
/* import_opaque_shape.c: dtype and shape of output k of the current node
 * by the rules of its standard ONNX op (when the model has no value_info
 * for it): 1 when known, 0 when rlflow has no rule, -1 with *err set. */
int ox_opaque_infer(imp_state *st, int k, xf_dtype *dt, xf_shape *sh, xf_error *err);
/* import_ms_shape.c: the same for com.microsoft operators (ORT's fused
 * ones) and MatMulInteger/QLinearMatMul; 0 when it has no rule. */
int ox_ms_infer(imp_state *st, int k, xf_dtype *dt, xf_shape *sh, xf_error *err);
/* import_nn_shape.c: the same for Conv, the pools, Flatten and the
 * reductions (opaque on float16/float64 data); 0 when it has no rule. */
int ox_nn_infer(imp_state *st, int k, xf_dtype *dt, xf_shape *sh, xf_error *err);
/* A value of an enclosing graph that a subgraph reads: its data when
 * known at import time, else the dtype and shape of the run-time value. */
typedef struct imp_outer {
    const char *name;
    const xf_tensor *value; /* NULL: known only at run time */
    xf_dtype dtype;
    xf_shape shape;
} imp_outer;
/* import.c: imports subgraph `sg` of the model into g with parent's
 * options and symbolic dims; `file` names it in messages. The outer
 * values it reads become constants (copied) or, known only at run time,
 * g's first graph inputs, in order. */
xf_status ox_import_subgraph(imp_state *parent, const Onnx__GraphProto *sg, const char *file,
                              const imp_outer *outer, int n_outer, xf_graph *g, xf_error *err);
/* import_if.c: for the current If node, imports both branches into
 * o->branches with the outer values they read (o->captured; their ids in
 * the outer graph go to *cap_ids, xf_malloc'd, *n_cap long) as graph
 * inputs, or as constants when known at import time, and sets o->kernel. A branch rlflow cannot import leaves the node
 * without a kernel (logged), which is not an error. */
xf_status ox_if_branches(imp_state *st, xf_opaque *o, int **cap_ids, int *n_cap, xf_error *err);
/* Output k of an If whose branches were imported (1), else 0: the output
 * of the branch its condition picks when that is known at import time
 * (computed from shapes), else both branches' when they agree. */
int ox_if_out_type(imp_state *st, const xf_opaque *o, int k, xf_dtype *dt, xf_shape *sh);
/* import_lstm.c: decodes the current LSTM node's attributes into o->lstm
 * and sets o->kernel, unless it uses something the kernel lacks
 * (activations other than the defaults: logged, no kernel). */
xf_status ox_lstm_attrs(imp_state *st, xf_opaque *o, xf_error *err);
/* import_conv1d.c: the current 1-D Conv (input 0 of rank 3) as Unsqueeze,
 * 2-D conv, Squeeze. */
xf_status ox_conv1d(imp_state *st, xf_error *err);
/* Records (in o->no_kernel) and logs why the interpreter cannot run the
 * current opaque node. */
xf_status ox_no_kernel(imp_state *st, xf_opaque *o, const char *why, xf_error *err);
/* Records the current opaque node, whose outputs were computed at import
 * from inputs of which one is deferred, as deferred too: it enters the
 * graph (ox_emit_opaque) only when an output is used as data. */
xf_status ox_defer_opaque(imp_state *st, xf_error *err);
/* Keeps the current node as an opaque node; `why` (may be NULL) is logged. */
xf_status ox_emit_opaque(imp_state *st, const char *why, xf_error *err);
/* A fresh name derived from `base` that no ONNX value uses (arena-owned). */
const char *ox_fresh_name(imp_state *st, const char *base, const char *suffix, xf_error *err);

/* ------------------------------------------------------------ attributes */

const Onnx__AttributeProto *ox_attr(const Onnx__NodeProto *n, const char *name);
/* Integer attribute, `def` when absent; wrong attribute type fails. */
xf_status ox_attr_int(imp_state *st, const char *name, int64_t def, int64_t *out, xf_error *err);
xf_status ox_attr_float(imp_state *st, const char *name, float def, float *out, xf_error *err);
/* Integer list attribute: *n = -1 when absent; more than `max` fails. */
xf_status ox_attr_ints(imp_state *st, const char *name, int64_t *out, int max, int *n,
                        xf_error *err);
/* String attribute, `def` when absent. */
xf_status ox_attr_string(imp_state *st, const char *name, const char *def, const char **out,
                          xf_error *err);
/* Name of ONNX input `i` of the current node, "" when omitted or absent. */
const char *ox_in_name(const imp_state *st, int i);
/* Symbol of input `i`, -1 when omitted. */
int ox_in_sym(const imp_state *st, int i);
/* The constant integer vector (int64 or int32, rank <= 1) on input `i`;
 * UNSUPPORTED "dynamic shape input" when it is not a constant. *n = -1 when
 * the input is omitted. */
xf_status ox_in_ints(imp_state *st, int i, int64_t *out, int max, int *n, xf_error *err);
/* The constant on input `i` (decoded), or NULL with UNSUPPORTED. */
const xf_tensor *ox_in_const(imp_state *st, int i, xf_error *err);
/* The constant float32 vector (rank <= 1) on input `i`, as doubles; *n = -1
 * when the input is omitted. */
xf_status ox_in_floats(imp_state *st, int i, double *out, int max, int *n, xf_error *err);
/* The first element of a constant tensor as a double. */
double ox_scalar_value(const xf_tensor *t);
/* A list parameter that was attribute `name` before opset `since` and is
 * input `input` from it on (Squeeze/Unsqueeze/Split/ReduceSum axes from 13,
 * ReduceMean/ReduceMax axes from 18); *n = -1 when absent. When the input
 * is only known at run time the node is kept opaque and *dynamic is set. */
xf_status ox_list_param(imp_state *st, int64_t since, const char *name, int input,
                         int64_t *out, int max, int *n, int *dynamic, xf_error *err);

/* ------------------------------------------------------------ ops and order */

/* Imports the current node (st->node, st->node_index): maps its op_type at
 * st->opset to operators of the table, or keeps it opaque. */
xf_status ox_map_node(imp_state *st, xf_error *err);

/* One ONNX op_type and the function that maps it (to `op`, when the
 * mapping has a single main operator). The tables live in import_ops.c
 * (element-wise, linear algebra), import_ops_nn.c (convolution, pooling,
 * normalisation, softmax) and import_ops_shape.c (data movement, shapes,
 * constants); each file's finder returns NULL for op_types it lacks. */
typedef struct imp_op_entry {
    const char *op_type;
    xf_status (*map)(imp_state *st, xf_op op, xf_error *err);
    xf_op op;
} imp_op_entry;
const imp_op_entry *ox_ops_nn_find(const char *op_type);
const imp_op_entry *ox_ops_shape_find(const char *op_type);
/* import_ops_act.c: Clip, HardSigmoid, HardSwish, LeakyRelu, PRelu, Min,
 * Max, Sum, Not; import_ops_resize.c: Resize, Upsample. */
const imp_op_entry *ox_ops_act_find(const char *op_type);
const imp_op_entry *ox_ops_resize_find(const char *op_type);
/* import_ops_calc.c: the shape arithmetic (Range, Mod, ScatterND), computed
 * at import when its inputs are known (ir/opaque_calc.c), else kept opaque
 * with its kernel. */
const imp_op_entry *ox_ops_calc_find(const char *op_type);
/* ConstantOfShape whose shape is not a plain constant, the same way. */
xf_status ox_calc_constant_of_shape(imp_state *st, xf_error *err);
/* Sets o's shape-arithmetic kernel and its attributes when the current
 * node is one of those operators (else leaves o alone). */
xf_status ox_calc_attrs(imp_state *st, xf_opaque *o, xf_error *err);
/* Output k of the current node when o has a shape-arithmetic kernel and
 * its inputs are known at import: 1, 0 when not, -1 with *err set. */
int ox_calc_out_type(imp_state *st, const xf_opaque *o, int k, xf_dtype *dt, xf_shape *sh,
                      xf_error *err);
/* Fails naming the current node's integer input computed from data at run
 * time, which output `name`'s size depends on, and what to do; XF_OK when
 * it has none. */
xf_status ox_calc_unknown_size(imp_state *st, const char *name, xf_error *err);

/* Helpers shared by the op mappings (import_ops.c). */
/* ONNX output k of the current node, "" when absent or omitted. */
const char *ox_out_name(const imp_state *st, int k);
/* Fails (XF_ERR_GRAPH) unless inputs 0..lo-1 are given and none after hi-1. */
xf_status ox_need_inputs(imp_state *st, int lo, int hi, xf_error *err);
/* dtype and shape of input i, which must be given. */
xf_status ox_in_info(imp_state *st, int i, xf_dtype *dt, xf_shape *sh, xf_error *err);
/* True when input i is given but its data is only known at run time. */
int ox_in_dynamic(const imp_state *st, int i);
/* *ok = 1 when every given input among the first n is float32. */
xf_status ox_all_float(imp_state *st, int n, int *ok, xf_error *err);
/* Integer attribute that must fit an int32 parameter. */
xf_status ox_attr_i32(imp_state *st, const char *name, int64_t def, int32_t *out, xf_error *err);
/* Emits op for the current node with the given input symbols; its outputs
 * are the node's outputs 0..n_out-1. A node using further outputs is kept
 * opaque instead. */
xf_status ox_emit_node(imp_state *st, xf_op op, const xf_params *p, const int *in_syms, int n_in,
                        int n_out, xf_error *err);
/* ox_emit_node with ox_emit_as's params_deferred. */
xf_status ox_emit_node_as(imp_state *st, xf_op op, const xf_params *p, const int *in_syms,
                          int n_in, int n_out, int params_deferred, xf_error *err);
/* Registers every name (inputs, initializers, node outputs), checks for
 * dangling and duplicate names and cycles, and returns a topological order
 * of the nodes (xf_malloc'd, graph->n_node entries). */
xf_status ox_resolve(imp_state *st, int **order, xf_error *err);

/* ------------------------------------------------------------ tensors */

/* Decodes a TensorProto into `t` (data xf_malloc'd). `what` names the tensor in
 * messages ("<file>: initializer 'w'"); base_dir resolves external data
 * (NULL refuses it). */
xf_status ox_tensor_decode(const Onnx__TensorProto *tp, const char *what, const char *base_dir,
                            xf_tensor *t, xf_error *err);
/* The same from `src`; when `borrowed` is given and the data can be used
 * in place (an in-memory source, little-endian host), t->data points at it
 * and *borrowed is set instead of a copy being made. */
xf_status ox_tensor_decode_src(const Onnx__TensorProto *tp, const char *what,
                                const imp_ext_src *src, xf_tensor *t, int *borrowed,
                                xf_error *err);
/* Reads a whole file into a xf_malloc'd buffer. */
xf_status ox_read_file(const char *path, uint8_t **buf, size_t *len, xf_error *err);
/* Directory part of `path` ("." when it has none), xf_malloc'd; NULL when out
 * of memory. */
char *ox_dirname(const char *path);

/* ------------------------------------------------------ protobuf-c memory */

/* protobuf-c's allocator over the ir allocation hook. protobuf-c's unpack
 * returns NULL both for malformed input and when an allocation failed:
 * `failed` tells the two apart. */
typedef struct imp_pb_alloc {
    ProtobufCAllocator base; /* pass &a.base to unpack and free_unpacked */
    int failed;              /* an allocation returned NULL */
} imp_pb_alloc;

void ox_pb_alloc_init(imp_pb_alloc *a);

/* Messages nested deeper than this (a graph in an If's branch in a node of
 * a graph ...: three per graph) are refused before decoding. */
#define IMP_PB_MAX_DEPTH 200

/* onnx__model_proto__unpack after a scan of the wire format that refuses a
 * model whose messages nest deeper than IMP_PB_MAX_DEPTH: protobuf-c
 * decodes recursively, and 3,000 nested If branches (380 KB) overflowed
 * the stack. NULL with *too_deep 1 then; otherwise as unpack (NULL for a
 * malformed file, or a failed allocation: a->failed). */
Onnx__ModelProto *ox_pb_unpack_model(imp_pb_alloc *a, size_t len, const uint8_t *buf,
                                      int *too_deep);

/* 1 when a tensor of the serialized model buf[0..len) (an initializer, a
 * Constant's or another attribute's, in any subgraph) keeps its data in an
 * external file, or the model nests too deep to tell; 0 when it holds all
 * of its data. Nothing is decoded. */
int ox_pb_external_data(const uint8_t *buf, size_t len);

#endif /* XF_ONNX_IMPORT_INTERNAL_H */
