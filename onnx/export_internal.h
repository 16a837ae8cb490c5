/*
 * export_internal.h — private to the ONNX exporter: the state shared by the
 * model assembly (export.c) and the per-operator node emission
 * (export_ops.c).
 *
 * Every protobuf-c message, string and array of the model under
 * construction lives in one arena that is freed once the model has been
 * packed, so no message is ever freed piecemeal. Graph constants are not
 * copied: on a little-endian host their raw_data points at the graph's own
 * buffers for the time of the pack.
 *
 * Helpers that return a pointer return NULL on failure after recording the
 * cause in x->st / x->err; callers then return x->st.
 */
#ifndef XF_ONNX_EXPORT_INTERNAL_H
#define XF_ONNX_EXPORT_INTERNAL_H

#include <stdio.h>

#include "external_internal.h"
#include "onnx.h"
#include "onnx.pb-c.h"

/* Protobuf messages over 2 GiB cannot be parsed back by any reader. */
#define MAX_PROTO_BYTES ((size_t)0x7fffffff)

/* A growable array of message pointers (xf_malloc'd, not in the arena, because
 * it is resized; the messages it points to are in the arena). */
typedef struct xf_export_vec {
    void **items;
    size_t n, cap;
} xf_export_vec;

/* Set of names in use: an xf_htab from a name's hash to the name (the
 * strings live in the arena). */
typedef struct xf_export_names {
    xf_htab index;
} xf_export_names;

typedef struct xf_export {
    const xf_graph *g;
    int64_t opset;      /* default-domain opset written */
    xf_arena arena;     /* all messages and strings of the model */
    char **vname;       /* ONNX name of every graph value, by value id */
    xf_export_names used_values, used_nodes;
    xf_export_vec nodes, inits, value_info;
    const char *gelu_const[3]; /* shared scalars sqrt(2), 1, 0.5 once made */
    Onnx__ModelProto model;    /* built by ox_export_pack */
    Onnx__GraphProto graph;
    size_t packed_size;
    xf_status st;       /* first failure */
    xf_error *err;
    /* symbolic dims kept (export_dyn.c); dyn NULL or without symbols:
     * every shape written as it is in the graph */
    const struct xf_onnx_dynamic *dyn;
    int n_probe;
    xf_shape *pshape; /* n_probe * n_values: every value's shape at each probe */
    int fail_sym;     /* the symbol a failure to follow the symbols is due to (-1: none) */
} xf_export;

/* Records a failure (first one wins) and returns it. */
xf_status ox_export_fail_nomem(xf_export *x);

/* ONNX name of value `v` ("" for -1, an omitted optional input). */
const char *ox_export_vname(const xf_export *x, int v);

/* `name` claimed for a value when no value has it yet (NULL otherwise). */
const char *ox_export_claim(xf_export *x, const char *name);

/* A fresh intermediate value "<node>/<suffix>" with a value_info entry. */
const char *ox_export_temp(xf_export *x, int node, const char *suffix, xf_dtype dt,
                           const xf_shape *sh);

/* Appends a NodeProto for graph node `node` (suffix NULL: the node's own
 * name; else "<name>/<suffix>"). Input names may be "" for omitted inputs. */
Onnx__NodeProto *ox_export_node(xf_export *x, int node, const char *suffix, const char *op_type,
                                int n_in, const char *const *in, int n_out,
                                const char *const *out);

/* Attributes; each returns XF_OK or the recorded failure. */
xf_status ox_export_attr_int(xf_export *x, Onnx__NodeProto *n, const char *name, int64_t v);
xf_status ox_export_attr_ints(xf_export *x, Onnx__NodeProto *n, const char *name,
                              const int64_t *v, int count);
xf_status ox_export_attr_float(xf_export *x, Onnx__NodeProto *n, const char *name, float v);
xf_status ox_export_attr_string(xf_export *x, Onnx__NodeProto *n, const char *name,
                                const char *v);
/* Appends an already built attribute (opaque nodes). */
xf_status ox_export_attr_raw(xf_export *x, Onnx__NodeProto *n, Onnx__AttributeProto *a);

/* Adds an initializer named exactly `name` (already unique); `data` is
 * numel*dtype_size bytes in host order and is copied when `copy` is set or
 * the host is big-endian, else referenced until the model is packed. */
xf_status ox_export_initializer(xf_export *x, const char *name, xf_dtype dt, const xf_shape *sh,
                                const void *data, int copy);
/* New 1-D initializer "<node>/<suffix>" of dtype dt holding v[0..n). */
const char *ox_export_const_vec(xf_export *x, int node, const char *suffix, xf_dtype dt,
                                const void *v, int n);
/* New 1-D int64 initializer "<node>/<suffix>" holding v[0..n). */
const char *ox_export_const_i64(xf_export *x, int node, const char *suffix, const int64_t *v,
                                int n);
/* New rank-0 initializer "<node>/<suffix>" of dtype dt holding `value`. */
const char *ox_export_const_scalar(xf_export *x, int node, const char *suffix, xf_dtype dt,
                                   double value);
/* A rank-0 float initializer with a fixed base name, made once per model
 * and cached in *slot. */
const char *ox_export_shared_scalar(xf_export *x, const char **slot, const char *base, float value);

/* Scratch memory from the model arena (zeroed). */
void *ox_export_alloc(xf_export *x, size_t bytes);

/* export_ops.c: one NodeProto for graph node `node` of `op_type`: its first
 * n_in inputs followed by `extra` (parameter initializers), its outputs
 * unless `out` overrides the single output's name. NULL on failure. */
Onnx__NodeProto *ox_export_emit_main(xf_export *x, int node, const char *op_type, int n_in,
                                     const char *const *extra, int n_extra, const char *out);
/* export_ops_act.c: the operators added for models from the wild that need
 * attributes or parameter inputs (clip, hardsigmoid, leakyrelu,
 * reduce_sum/reduce_max, resize, conv_transpose, tile). */
xf_status ox_export_emit_act(xf_export *x, int node);

/* export_ops.c: true for the constant generators (no inputs), which are
 * written as initializers holding their evaluated output. */
int ox_export_is_generator(xf_op op);
/* export_ops.c: emits graph node `node` (one or more NodeProtos, or an
 * initializer for constant generators). */
xf_status ox_export_emit(xf_export *x, int node);

/* export_dyn.c: symbolic dims (see its top comment). Follows the symbols
 * through the graph into x->pshape; fails naming a node whose parameters
 * cannot follow them (XF_ERR_UNSUPPORTED; x->fail_sym: the symbol whose
 * probe showed it, which written fixed would let the export through). */
xf_status ox_export_dyn_follow(xf_export *x);
/* The dim_param of dim `axis` of value v: the original's on a graph
 * output that declared one, else NULL for a fixed dim, the symbol's name
 * for a dim that is one on a graph output or an opaque node's output, ""
 * for one that moves otherwise (inner values: see export_dyn.c). */
const char *ox_export_dyn_dim_name(const xf_export *x, int v, int axis);
/* The Reshape target to write (0 copies the input's dim, -1 infers; a
 * target with nothing else to infer infers its first copied dim);
 * src[i] >= 0: dim i is taken from a run-time shape (else -1): the input's
 * dim src[i] when below XF_EXPORT_SRC_GRAPH, else dim src[i] % XF_MAX_DIMS
 * of graph input (src[i] - XF_EXPORT_SRC_GRAPH) / XF_MAX_DIMS (a symbol the
 * Reshape's input holds only in a product: [B*S,H] -> [B,S,h,d]);
 * *relative = 1 when 0s, -1 or src carry that meaning. */
#define XF_EXPORT_SRC_GRAPH (1 << 20)
xf_status ox_export_dyn_reshape(xf_export *x, int node, int64_t *target, int *src,
                                int *relative);
/* The Expand target to write (1 where the input's symbolic dim is kept);
 * src[i] >= XF_EXPORT_SRC_GRAPH: dim i is a graph input's dim read at run
 * time (a constant broadcast to the batch), else src[i] = -1. */
xf_status ox_export_dyn_expand(xf_export *x, int node, int64_t *target, int *src);
/* Slice ends to write (INT64_MAX for a slice to the end of a moving axis). */
void ox_export_dyn_slice_ends(const xf_export *x, int node, int64_t *ends);
/* *use_scales = 1 when the Resize must be written with scales (its sizes
 * move), the scales in `scales`. */
xf_status ox_export_dyn_resize(xf_export *x, int node, float *scales, int *use_scales);

/* Where the weights go (export.c asks, external_write.c moves them). */
typedef struct xf_export_layout {
    const char *location; /* external data file; NULL: inline unless over inline_limit */
    const char *auto_location; /* the file used when the model is over inline_limit */
    size_t min_bytes;     /* smaller tensors stay inline */
    size_t inline_limit;  /* largest model packed without external data */
    /* filled by ox_export_externalize: the data file's segments by offset
     * (xf_malloc'd), its size, and the location used (NULL: none) */
    imp_ext_seg *segs;
    size_t n_segs;
    uint64_t data_bytes;
    const char *used_location;
    /* weights already in a shared data file (NULL: none), and filled by
     * ox_export_share: the initializers written as references into it
     * (xf_malloc'd) */
    const xf_onnx_shared_data *shared;
    xf_onnx_shared_ref *refs;
    size_t n_refs;
} xf_export_layout;

void ox_export_init(xf_export *x, const xf_graph *g, xf_error *err);
void ox_export_free(xf_export *x);
/* Builds the model (x->model, its size in x->packed_size) and, when buf is
 * given, packs it into a xf_malloc'd buffer. With a layout, initializers
 * of at least layout->min_bytes move to the external data file when a
 * location is given or the model would exceed the inline limit; without
 * one (a buffer in memory) a model over 2 GiB fails. */
xf_status ox_export_pack(xf_export *x, xf_export_layout *layout, uint8_t **buf, size_t *len);
/* Writes the built model to f as it is packed (no copy in memory); 0 when
 * a write failed (ferror(f) and errno say why). */
int ox_export_stream(xf_export *x, FILE *f);
/* external_write.c: turns the big raw_data initializers of x into external
 * references to layout's data file (location, offset, length), recording
 * the bytes to write as segments. */
xf_status ox_export_externalize(xf_export *x, xf_export_layout *layout);
/* external_write.c: turns the initializers whose bytes are an extent of
 * layout->shared (same buffer, same length) into external references to
 * the shared data file, recording them in layout->refs. */
xf_status ox_export_share(xf_export *x, xf_export_layout *layout);

/* external_write.c: xf_onnx_writer_open, saying in *fail_sym which symbol
 * an export that cannot follow the symbols is due to (else -1). */
xf_status ox_export_writer_open(const xf_graph *g, const char *path, const xf_onnx_save_options *o,
                                xf_onnx_writer **out, int *fail_sym, xf_error *err);

#endif /* XF_ONNX_EXPORT_INTERNAL_H */
