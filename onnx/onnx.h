/*
 * onnx.h — ONNX import and export for rlflow graphs (protobuf-c).
 *
 * Import reads a ModelProto (opsets 11–17 of the default domain), maps every
 * operator in the ir operator table to its xf_op with parameters taken from
 * attributes and constant inputs, infers all shapes statically, folds every
 * node whose inputs are all constants (shape subgraphs such as
 * Shape→Gather→Concat→Reshape, ConstantOfShape, Equal/Where on constants)
 * into initializers, and keeps any other operator as an opaque node whose
 * attributes are exported back unchanged. Initializers may live in external
 * data files next to the model.
 *
 * Export writes a ModelProto that onnx.checker accepts and that computes the
 * same function: ops the table maps back to ONNX, rule-only ops (scalar_mul,
 * enlarge, gelu, the constant generators) lowered to standard ONNX. Files are
 * written atomically: on any error nothing is left at the destination.
 *
 * Big models: protobuf cannot encode a message over 2 GiB, so a model whose
 * weights would take it over that is written in ONNX's external-data layout
 * (the weights in a data file next to the model, each tensor at an offset
 * with its length), automatically or when asked for; import reads such
 * files in bounded chunks straight into the tensors, so both directions
 * hold one copy of the weights.
 *
 * Errors name the model file and the node ("model.onnx: node 12 'Conv_3'
 * (Conv): ..."). Inputs that are malformed (truncated protobuf, dangling
 * references, cycles, shape mismatches) give XF_ERR_PARSE / XF_ERR_GRAPH /
 * XF_ERR_SHAPE; valid models using something rlflow cannot represent (a
 * dtype other than float32/int64/int32/bool, dynamic shapes, an opset
 * outside 11–17) give XF_ERR_UNSUPPORTED.
 */
#ifndef XF_ONNX_H
#define XF_ONNX_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

typedef struct xf_onnx_options {
    int fold_constants; /* fold all-constant nodes into initializers (default 1) */
    /* Sizes for symbolic input dimensions (e.g. "batch"), applied to any
     * graph input dim given by name; unset symbolic dims default to 1. */
    int n_dim_overrides;
    const char *const *dim_names;
    const int64_t *dim_values;
} xf_onnx_options;

xf_onnx_options xf_onnx_default_options(void);

/* Reads `path`; external-data initializers are resolved relative to the
 * model's directory. `opts` may be NULL for defaults. */
xf_status xf_onnx_load(const char *path, const xf_onnx_options *opts, xf_graph *g, xf_error *err);
/* Same from memory. `name` is used in messages; `base_dir` (may be NULL)
 * is where external data files are looked up (NULL: external data refused). */
xf_status xf_onnx_load_buffer(const void *buf, size_t len, const char *name, const char *base_dir,
                              const xf_onnx_options *opts, xf_graph *g, xf_error *err);

/* Writes `g` as an ONNX model to `path` through xf_outfile (ir.h): atomically
 * onto a regular file or a new path, through onto a device or FIFO; with
 * external data only when the model would exceed 2 GiB. */
xf_status xf_onnx_save(const xf_graph *g, const char *path, xf_error *err);
/* Serialises into a xf_malloc'd buffer the caller releases with xf_free;
 * a model over 2 GiB fails (it needs a file with external data). */
xf_status xf_onnx_save_buffer(const xf_graph *g, uint8_t **buf, size_t *len, xf_error *err);

/* How a model file is written (xf_onnx_save_with, xf_onnx_writer_open). */
typedef struct xf_onnx_save_options {
    /* Data file for the weights, as the model records it: a path relative
     * to the model's directory (no absolute path, no '..'). NULL: none,
     * unless the model would exceed inline_limit; then "<model file>.data". */
    const char *external_data;
    /* Tensors smaller than this stay in the model file (default 1024
     * bytes, as onnx.save_model's size_threshold). */
    size_t external_min_bytes;
    /* Largest model written as one file (default 2 GiB - 1, protobuf's
     * limit; lower it to test the automatic switch). */
    size_t inline_limit;
} xf_onnx_save_options;

xf_onnx_save_options xf_onnx_default_save_options(void);

/* Writes `g` to `path` (and its external data file, when there is one),
 * atomically: both files are complete before either replaces what was
 * there. Writing external data next to a device or FIFO is refused.
 * `o` may be NULL (defaults: xf_onnx_save). */
xf_status xf_onnx_save_with(const xf_graph *g, const char *path, const xf_onnx_save_options *o,
                            xf_error *err);

/* A model exported but not yet written, for tools that check it first:
 * open serialises it (the weights are not copied: `g` must stay alive and
 * unchanged until the writer is freed), read_back imports it from memory
 * into `back` (external tensors borrowed from `g`, not copied), commit
 * writes the file(s) as xf_onnx_save_with does, packing the model straight
 * into its file. */
typedef struct xf_onnx_writer xf_onnx_writer;
xf_status xf_onnx_writer_open(const xf_graph *g, const char *path,
                              const xf_onnx_save_options *o, xf_onnx_writer **w, xf_error *err);
xf_status xf_onnx_writer_read_back(xf_onnx_writer *w, const xf_onnx_options *opts,
                                   xf_graph *back, xf_error *err);
/* Bytes of the model file, bytes of the external data file (0: none) and
 * its location as recorded in the model (NULL: none). */
void xf_onnx_writer_sizes(const xf_onnx_writer *w, size_t *model_bytes, uint64_t *data_bytes,
                          const char **location);
xf_status xf_onnx_writer_commit(xf_onnx_writer *w, xf_error *err);
void xf_onnx_writer_free(xf_onnx_writer *w);

/* Reads one serialized onnx.TensorProto (the test_data_set_N/input_K.pb files).
 * `name` (may be NULL) receives a xf_malloc'd copy of the tensor's name. */
xf_status xf_onnx_load_tensor(const char *path, xf_tensor *t, char **name, xf_error *err);
xf_status xf_onnx_save_tensor(const char *path, const xf_tensor *t, const char *name,
                              xf_error *err);

/* ONNX op_type of a node as it would be exported ("Conv", or the opaque
 * op's own type). */
const char *xf_onnx_op_type(const xf_node *n);

#endif /* XF_ONNX_H */
