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
 * dtype other than float32/int64/int32/bool, an unknown rank, an opset
 * outside 7–21) give XF_ERR_UNSUPPORTED. Symbolic input dims (named,
 * unnamed or declared 0) take the size the options give, else 1
 * (xf_onnx_sizes_choose below finds sizes at which a model imports); the
 * xf_onnx_dynamic functions below write them back symbolic, and
 * xf_onnx_write_checked writes a model only after checking it at sizes far
 * apart.
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

/* The ONNX TensorProto.DataType code of `t` (1 FLOAT, 10 FLOAT16, ...; the
 * values ONNX Runtime's ONNXTensorElementDataType uses too), 0 (UNDEFINED)
 * when `t` is invalid; and back: XF_DTYPE_INVALID for a code rlflow does not
 * carry. The one mapping, for the importer, the exporter and the target. */
int xf_onnx_dtype_code(xf_dtype t);
xf_dtype xf_onnx_dtype_of_code(int onnx_dtype);

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

/* ------------------------------------------------- symbolic dimensions
 *
 * The optimiser works on a graph with concrete shapes; a model's symbolic
 * input dims (named, unnamed, or declared 0) are sized at import. To write
 * a model that keeps them, the dims are described by an xf_onnx_dynamic
 * made from the original model: every symbol, the size it was imported at
 * (point 0) and two other sizes the model admits (points 1 and 2: it
 * imports at them; twice and three times the size where it can), and the shape of every named value of the original at
 * each probe (one symbol moved to another size, the others at point 0).
 * Export with it follows each symbol through the graph at the probes,
 * writes symbolic dims as dim_param (the symbol's name; an output keeps the
 * name the original declared) and writes every size-bearing parameter that
 * depends on a symbol so that it follows it (Reshape targets with 0/-1,
 * Expand with 1, Slice to the end, Resize by scales); a parameter it cannot
 * express that way fails the export with XF_ERR_UNSUPPORTED naming the
 * node. See docs/onnx.md. */
typedef struct xf_onnx_dynamic xf_onnx_dynamic;

#define XF_ONNX_POINTS 3

/* Reads the symbolic dims of the model in `buf` (`name`, `base_dir` as in
 * xf_onnx_load_buffer) at the sizes `opts` gives (else 1) and picks two
 * other sizes of each: the first two of x2, x3, x4, /2, /4, x1.5 at which
 * the model imports (far apart, so that dims derived through strides move
 * too). A symbol the model admits at no two of them is written fixed
 * (xf_onnx_dynamic_fixed, a warning is logged).
 * A model without symbolic dims gives a description with none. */
xf_status xf_onnx_dynamic_open(const void *buf, size_t len, const char *name, const char *base_dir,
                               const xf_onnx_options *opts, xf_onnx_dynamic **out,
                               xf_error *err);
/* Same for the model file at `path`. */
xf_status xf_onnx_dynamic_open_file(const char *path, const xf_onnx_options *opts,
                                    xf_onnx_dynamic **out, xf_error *err);
void xf_onnx_dynamic_free(xf_onnx_dynamic *d); /* NULL is a no-op */
int xf_onnx_dynamic_count(const xf_onnx_dynamic *d);
const char *xf_onnx_dynamic_name(const xf_onnx_dynamic *d, int sym);
/* Points a model is checked at: XF_ONNX_POINTS when a symbol is kept,
 * else 1 (d may be NULL). */
int xf_onnx_dynamic_points(const xf_onnx_dynamic *d);
/* NULL when symbol `sym` is kept symbolic, else why it is written fixed. */
const char *xf_onnx_dynamic_fixed(const xf_onnx_dynamic *d, int sym);
/* Size of symbol `sym` at point 0..XF_ONNX_POINTS-1. */
int64_t xf_onnx_dynamic_size(const xf_onnx_dynamic *d, int sym, int point);
/* "N=2, H=192": the sizes of `point` ("" without symbols). */
void xf_onnx_dynamic_describe(const xf_onnx_dynamic *d, int point, char *buf, size_t n);
/* Import options that put every symbol at its size of `point` (the
 * other fields from the options d was opened with); valid while d lives. */
xf_onnx_options xf_onnx_dynamic_options(const xf_onnx_dynamic *d, int point);
/* xf_onnx_save_buffer keeping the symbolic dims d describes (g imported
 * at point 0 of d, then possibly rewritten). d may be NULL or have no
 * symbols: then the same as xf_onnx_save_buffer. A model file (which may
 * need external data) is written keeping them through xf_onnx_save_with
 * or xf_onnx_writer_open, with xf_onnx_save_options.dynamic = d. */
xf_status xf_onnx_save_buffer_dynamic(const xf_graph *g, const xf_onnx_dynamic *d, uint8_t **buf,
                                      size_t *len, xf_error *err);

/* The bytes of a model file as they are (a regular file only; see
 * xf_infile_open), in a xf_malloc'd buffer. */
xf_status xf_onnx_read_file(const char *path, uint8_t **buf, size_t *len, xf_error *err);

/* Bytes of one tensor in an external data file: `length` bytes at
 * `offset`, taken from `data` (the graph's own buffer). */
typedef struct xf_onnx_extent {
    uint64_t offset, length;
    const void *data;
} xf_onnx_extent;

/* A data file of weights written once and shared by many models (the
 * target writes its input's weights once; the candidates it times borrow
 * those buffers and reference the file instead of copying the weights):
 * `n` extents sorted by data pointer, in the file `location` (a path
 * relative to the model's directory). */
typedef struct xf_onnx_shared_data {
    const char *location;
    size_t n;
    const xf_onnx_extent *extents;
} xf_onnx_shared_data;

/* An initializer written as a reference into shared data: its name in the
 * model, the buffer it refers to, its dtype and shape, and whether every
 * node of the model that reads it reads it as a weight (`weight`: MatMul's
 * and Gemm's B and C, Conv's and ConvTranspose's W and B, Gather's table,
 * LayerNormalization's scale and bias). Only such an initializer is safe
 * to hand a runtime as a buffer of the caller's under its name: a
 * runtime's graph optimiser may rewrite any other in place under the same
 * name (ONNX Runtime's transpose optimiser transposes the operand of an Add
 * or a Concat it pushes a Transpose through), and the buffer handed in by
 * name then overrides the rewritten tensor (target/share.c). */
typedef struct xf_onnx_shared_ref {
    const char *name;
    const void *data;
    xf_dtype dtype;
    xf_shape shape;
    int weight;
} xf_onnx_shared_ref;

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
    /* Symbolic dims to keep (see above; NULL or none: every shape written
     * as it is in the graph, imported at point 0 of it). A writer reads the
     * model back at any point of it (xf_onnx_dynamic_options). */
    const xf_onnx_dynamic *dynamic;
    /* Constants whose buffer is one of these extents (same data pointer
     * and byte length) are written as references into that shared file,
     * not copied (NULL: none); see xf_onnx_writer_shared. */
    const xf_onnx_shared_data *shared;
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
/* The tensors in the writer's own data file (by offset; 0 when it has
 * none), and the initializers it wrote as references into
 * xf_onnx_save_options.shared; both valid until the writer is freed. */
size_t xf_onnx_writer_extents(const xf_onnx_writer *w, const xf_onnx_extent **ext);
size_t xf_onnx_writer_shared(const xf_onnx_writer *w, const xf_onnx_shared_ref **refs);
xf_status xf_onnx_writer_commit(xf_onnx_writer *w, xf_error *err);
void xf_onnx_writer_free(xf_onnx_writer *w);

/* ------------------------------------------ writing a model checked at its sizes
 *
 * What a tool writes: `graph` (imported at point 0 of d, then possibly
 * rewritten) exported keeping d's symbolic dims through a writer, read back
 * from those very bytes at every point of d (external weights in place) and
 * compared there with the original (o->model) read at the same sizes
 * (xf_interp_check); the file (and its external data file) is written only
 * when every point passes. Points 1 and 2 move every kept symbol at once
 * to sizes far from the one imported at (x2, x3: every dim derived through
 * strided convolutions and pools moves too); a failure there is put down
 * to one symbol by moving each alone. A symbol that cannot be kept (the
 * parameters of the model cannot follow it, or the model written fails at
 * a size of it) is written fixed at its point-0 size with a warning
 * (xf_onnx_dynamic_fixed says why; d is changed), and the export is tried
 * again. With o->fall_back, an optimised graph that fails, or `graph`
 * being `input` itself (nothing better was found), is replaced by the input
 * file's bytes when they hold all of its data (no external data) and
 * o->external_data is NULL: the model exactly as the user had it; else by
 * `input` (the model as imported) exported the same way, and when that
 * fails for another reason than a symbol, by the input file's bytes
 * (nothing at all with o->external_data). Fails only when nothing could be
 * written (or, without fall_back, when `graph` cannot be). */
typedef struct xf_onnx_check_options {
    const char *model;         /* the original model file: read at each size, the last resort */
    const char *output;        /* the file to write */
    const char *external_data; /* as xf_onnx_save_options.external_data */
    int numeric;    /* compare outputs at each point (default 1; 0: read back only) */
    int same_graph; /* the graph must read back with its canonical hash (a round trip) */
    int fall_back;  /* write the input when the graph fails (see above) */
    uint64_t seed;  /* of the random inputs (default 1) */
    double rtol, atol; /* tolerance of the comparison (defaults 1e-3, 1e-4) */
} xf_onnx_check_options;

xf_onnx_check_options xf_onnx_default_check_options(void);

typedef enum xf_onnx_wrote {
    XF_ONNX_WROTE_GRAPH = 0,     /* the graph given */
    XF_ONNX_WROTE_INPUT = 1,     /* the graph failed: the input, exported */
    XF_ONNX_WROTE_INPUT_FILE = 2 /* the input file's bytes: the graph was the input, or it
                                    failed (why says why) */
} xf_onnx_wrote;

typedef struct xf_onnx_checked {
    xf_onnx_wrote wrote;
    char why[2048];     /* why the graph given was not written ("" when it was) */
    int n_points;       /* points checked (1 when no symbol is kept, 0: the file copied) */
    xf_check_result at[XF_ONNX_POINTS]; /* the model written at each point (max_abs -1:
                                           not compared) */
    xf_check_result worst; /* the largest differences over the points */
    uint64_t hash_back;    /* canonical hash of the model read back at point 0 (same_graph) */
    int n_fixed;           /* symbols written fixed here (xf_onnx_dynamic_fixed) */
    size_t model_bytes;
    uint64_t data_bytes;       /* external data written (0: none) */
    char data_location[4096];  /* its file as the model records it ("": none) */
} xf_onnx_checked;

xf_status xf_onnx_write_checked(const xf_onnx_check_options *o, xf_onnx_dynamic *d,
                                const xf_graph *input, const xf_graph *graph,
                                xf_onnx_checked *out, xf_error *err);

/* *yes: xf_onnx_write_checked (with o->fall_back) writes the input file's
 * bytes when it keeps the input: o->external_data is NULL and the file
 * o->model holds all of its data. A file over max_bytes is not read
 * (*yes 0). Fails only on out of memory. */
xf_status xf_onnx_input_copyable(const xf_onnx_check_options *o, uint64_t max_bytes, int *yes,
                                 xf_error *err);

/* --------------------------------------------- sizes of the symbolic dims
 *
 * A size for every symbolic input dim of the model at `path`: the one the
 * options give; else its size in the data's input tensors (data_dir, an
 * ONNX test_data_set: data_dir/input_<k>.pb for graph input k; NULL: no
 * data); else 1 when the model imports with the rest at 1; else the
 * smallest power of two (up to 4096) at which it imports, found by
 * importing it at 2, 4, 8 ... and then lowering each symbol in turn.
 * XF_ERR_SHAPE when the data do not fit the inputs; when no size imports,
 * the importer's errors at 1 and 4096 (its own code when they are the
 * same: a failure that has nothing to do with the sizes). */
typedef struct xf_onnx_sizes xf_onnx_sizes;
xf_status xf_onnx_sizes_choose(const char *path, const xf_onnx_options *given,
                               const char *data_dir, xf_onnx_sizes **out, xf_error *err);
/* `given` with a size for every symbol; valid while s lives. */
xf_onnx_options xf_onnx_sizes_options(const xf_onnx_sizes *s);
/* One line saying the sizes chosen and where they come from; "" when the
 * options gave every one (or there are none). */
const char *xf_onnx_sizes_said(const xf_onnx_sizes *s);
void xf_onnx_sizes_free(xf_onnx_sizes *s); /* NULL is a no-op */

/* Reads one serialized onnx.TensorProto (the test_data_set_N/input_K.pb files).
 * `name` (may be NULL) receives a xf_malloc'd copy of the tensor's name. */
xf_status xf_onnx_load_tensor(const char *path, xf_tensor *t, char **name, xf_error *err);
xf_status xf_onnx_save_tensor(const char *path, const xf_tensor *t, const char *name,
                              xf_error *err);

/* ONNX op_type of a node as it would be exported ("Conv", or the opaque
 * op's own type). */
const char *xf_onnx_op_type(const xf_node *n);

#endif /* XF_ONNX_H */
