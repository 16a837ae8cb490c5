/*
 * ir.h — the public face of rlflow's intermediate representation.
 *
 * Everything in rlflow stands on this module: error reporting, a leveled
 * logger, the allocation hook, an arena allocator, static tensor shapes (at
 * most XF_MAX_DIMS dims), the single operator table (arity, parameters,
 * shape inference, float32 kernel and ONNX name of every operator the
 * project knows), the graph DAG (build, validate, topological order,
 * structural hash, text format), the float32 reference interpreter that
 * runs a whole graph, and the one of each utility every module uses:
 * 64-bit mixer, hash table, clock, the output-file writer and the
 * regular-input opener.
 *
 * Nothing here prints to stdout or exits; fallible functions return an
 * xf_status and fill an optional xf_error.
 */
#ifndef XF_IR_H
#define XF_IR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------------ status */

typedef enum xf_status {
    XF_OK = 0,
    XF_ERR_INVALID = 1,     /* bad argument or malformed input */
    XF_ERR_NOMEM = 2,       /* allocation failed */
    XF_ERR_IO = 3,          /* file could not be read or written */
    XF_ERR_PARSE = 4,       /* input could not be decoded */
    XF_ERR_UNSUPPORTED = 5, /* valid input that rlflow does not handle */
    XF_ERR_SHAPE = 6,       /* shape inference rejected an operator */
    XF_ERR_GRAPH = 7,       /* graph structure is broken (cycle, dangling) */
    XF_ERR_MISMATCH = 8,    /* numerical comparison failed */
    XF_ERR_INTERNAL = 9
} xf_status;

/* Where and why something failed. `msg` is meant for a user. */
typedef struct xf_error {
    xf_status code;
    const char *src_file; /* source location that raised it */
    int src_line;
    char msg[1024];
} xf_error;

/* Fill *err (if not NULL) and evaluate to `code`. */
#define XF_FAIL(err, code, ...) xf_error_set((err), (code), __FILE__, __LINE__, __VA_ARGS__)

#if defined(__GNUC__)
#define XF_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define XF_PRINTF(a, b)
#endif

xf_status xf_error_set(xf_error *err, xf_status code, const char *file, int line,
                       const char *fmt, ...) XF_PRINTF(5, 6);
/* Put `fmt` in front of an existing message ("while importing x: <old>"). */
void xf_error_prefix(xf_error *err, const char *fmt, ...) XF_PRINTF(2, 3);
void xf_error_clear(xf_error *err);
const char *xf_status_name(xf_status s);

/* ------------------------------------------------------------------ logger */

typedef enum xf_log_level {
    XF_LOG_DEBUG = 0,
    XF_LOG_INFO = 1,
    XF_LOG_WARN = 2,
    XF_LOG_ERROR = 3,
    XF_LOG_OFF = 4
} xf_log_level;

/* Messages at or above the level go to stderr (default: XF_LOG_WARN, or the
 * value of the environment variable XF_LOG=debug|info|warn|error|off). */
void xf_log_set_level(xf_log_level level);
xf_log_level xf_log_get_level(void);
void xf_log(xf_log_level level, const char *fmt, ...) XF_PRINTF(2, 3);

/* ------------------------------------------------------------- allocation */

/* Every allocation of the library goes through these (ir/alloc.c), and so
 * through one replaceable hook: a test can fail the N-th allocation, an
 * embedder can count or pool memory. protobuf-c's allocations in onnx/ use
 * the hook too. SQLite, Z3, oneDNN and CUDA keep their own allocators; our
 * buffers around them go through the hook.
 *
 * Same contracts as the C library: xf_free(NULL) is a no-op; xf_calloc checks
 * n * size for overflow and zeroes; xf_realloc(NULL, n) allocates. Memory
 * from xf_aligned_alloc is released with xf_aligned_free, never xf_free. */
void *xf_malloc(size_t size);
void *xf_calloc(size_t n, size_t size);
void *xf_realloc(void *p, size_t size);
void xf_free(void *p);
char *xf_strdup(const char *s);
/* Grows *arr, an array of *cap elements of `elem` bytes, to hold `need`
 * (the capacity doubled from 16 until it does); 0 when out of memory,
 * *arr and *cap then unchanged. */
int xf_grow(void **arr, int *cap, int need, size_t elem);
/* `align` a power of two, at least sizeof(void *). */
void *xf_aligned_alloc(size_t align, size_t size);
void xf_aligned_free(void *p);

/* The hook: malloc, realloc and free with the user pointer as first
 * argument (xf_realloc(user, NULL, n) must allocate; xf_free(user, NULL) must do
 * nothing). xf_set_allocator copies *a; NULL restores the C library's.
 * Set it once, before any other rlflow call and before starting threads
 * (the agent's and the enumerator's workers read it without a lock), and do
 * not change it while memory from the previous one is still live: memory is
 * freed by whichever hook is current. The hook itself must be thread-safe
 * when the library runs threads. */
typedef struct xf_allocator {
    void *(*malloc)(void *user, size_t size);
    void *(*realloc)(void *user, void *p, size_t size);
    void (*free)(void *user, void *p);
    void *user;
} xf_allocator;

void xf_set_allocator(const xf_allocator *a);

/* Hands the free pages of the C library's heap back to the system (glibc's
 * malloc_trim): after a phase that freed much, so that the next phase's
 * resident memory, or a fork's page tables, do not carry it. A no-op with a
 * hook set or another C library. */
void xf_heap_trim(void);

/* For a short-lived process that will fill fresh heap memory (a verifier
 * worker forked for one rule): the next `bytes` of the C library's heap are
 * set aside and backed by transparent huge pages (madvise MADV_HUGEPAGE), so
 * they fault in 2 MB at a time instead of 4 KB. Z3 fills an 8.5 MB table for
 * each solver; in a child forked per rule every 4 KB page of it was a page
 * fault, and the kernel's page faults were two thirds of xferverify's CPU
 * time. Best effort: a no-op with a hook set, another C library, or when the
 * heap cannot grow. */
void xf_heap_huge_pages(size_t bytes);

/* Remaps the 2 MB ranges of the heap and of the anonymous mappings (malloc's
 * large blocks) that are at least half resident onto transparent huge pages
 * now (madvise MADV_HUGEPAGE, then MADV_COLLAPSE, Linux 6.1): for a process
 * about to fork many times, as every fork copies one page-table entry per
 * 4 KB page it holds. A sparser range is left as it is (collapsing fills it
 * with zeros). Best effort: a no-op with a hook set, on another system, or
 * where the kernel refuses or finds no huge page. */
void xf_heap_collapse_huge(void);

/* Called first in a forked worker process, with the parent's pid taken
 * before the fork (getpid): the kernel kills the worker (SIGKILL) when the
 * parent exits, so a parent stopped by a signal leaves no workers behind
 * (Linux; a no-op elsewhere). The parent must fork from a thread that lives
 * as long as the worker (the signal follows the forking thread). */
void xf_child_dies_with_parent(long parent);

/* ------------------------------------------------------------------- arena */

/* Bump allocator for scratch whose lifetime is one phase; freed all at once. */
typedef struct xf_arena_block xf_arena_block;
typedef struct xf_arena {
    xf_arena_block *head;
    size_t block_size;
    size_t bytes_used;
} xf_arena;

void xf_arena_init(xf_arena *a, size_t block_size);
/* 16-byte aligned, zeroed; NULL only when the system is out of memory. */
void *xf_arena_alloc(xf_arena *a, size_t bytes);
char *xf_arena_strdup(xf_arena *a, const char *s);
void xf_arena_free(xf_arena *a);

/* ------------------------------------------------------------------ shapes */

#define XF_MAX_DIMS 6

typedef struct xf_shape {
    int rank;
    int64_t dims[XF_MAX_DIMS];
} xf_shape;

xf_shape xf_shape_make(int rank, const int64_t *dims);
int64_t xf_shape_numel(const xf_shape *s);
int xf_shape_equal(const xf_shape *a, const xf_shape *b);
/* "[1,3,224,224]" into buf; returns buf. */
char *xf_shape_str(const xf_shape *s, char *buf, size_t n);
/* Numpy multidirectional broadcast of a and b into *out. */
xf_status xf_shape_broadcast(const xf_shape *a, const xf_shape *b, xf_shape *out, xf_error *err);
/* Row-major strides in elements. */
void xf_shape_strides(const xf_shape *s, int64_t *strides);
/* A possibly negative axis counted from the front of a tensor of that rank;
 * -1 when out of range. */
int xf_norm_axis(int64_t axis, int rank);

/* ------------------------------------------------------------ element types */

typedef enum xf_dtype {
    XF_DTYPE_INVALID = 0,
    XF_F32 = 1,
    XF_I64 = 2,
    XF_I32 = 3,
    XF_BOOL = 4, /* one byte per element, 0 or 1 */
    /* Carried, not computed: weights and activations of fp16, double and
     * quantised models. Only movement ops, cast and the opaque nodes with a
     * kernel (QuantizeLinear, DequantizeLinear) run on them; arithmetic on
     * them stays an opaque node (docs/onnx.md). */
    XF_F16 = 5, /* IEEE half, stored as its 16 bits */
    XF_F64 = 6,
    XF_I8 = 7,
    XF_U8 = 8,
    XF_DTYPE_COUNT
} xf_dtype;

size_t xf_dtype_size(xf_dtype t);
const char *xf_dtype_name(xf_dtype t);
/* IEEE half (XF_F16's 16 bits) to float32 and back (nearest, ties to even). */
float xf_f16_to_f32(uint16_t h);
uint16_t xf_f32_to_f16(float f);

/* The most elements, and the most bytes, any tensor may have: 2^62. Every
 * value of every graph (inputs, constants, node outputs) and every tensor
 * stays within it, so element counts, byte counts and row-major strides
 * never overflow int64_t or size_t in the kernels. */
#define XF_SHAPE_MAX_ELEMS ((int64_t)1 << 62)
/* Whether s is a valid shape for a tensor of `dtype`: rank 0..XF_MAX_DIMS,
 * every dim >= 0, and the product of the dims (zero dims counted as 1, so
 * strides fit too) and the byte count at most XF_SHAPE_MAX_ELEMS. Fills
 * *numel and *bytes when not NULL (bytes 0 for an invalid dtype). Fails with
 * XF_ERR_SHAPE and a message naming the shape; callers prefix what it is. */
xf_status xf_shape_check(const xf_shape *s, xf_dtype dtype, int64_t *numel, size_t *bytes,
                         xf_error *err);

/* The memory limit on tensors (memlimit.c): the most bytes one tensor, the
 * tensors of one graph run (xf_interp_run, the cost model's executor) or of
 * one measured operator may take; work over it is refused with
 * XF_ERR_NOMEM before anything is allocated. Process-wide; set it before
 * starting threads. Default: half of the physical memory. xf_mem_limit_set(0)
 * restores the default; values above 2^62 are taken as 2^62. */
size_t xf_mem_limit(void);
void xf_mem_limit_set(size_t bytes);
/* XF_OK when `bytes` fit the limit, else XF_ERR_NOMEM: "<what> needs N,
 * over the memory limit of L (...)". */
xf_status xf_mem_limit_check(size_t bytes, const char *what, xf_error *err);
/* "512 bytes", "1.5 KiB", "14.9 GiB" into buf; returns buf. */
char *xf_bytes_str(double bytes, char *buf, size_t n);

/* A dense row-major tensor. `data` is owned by whoever created the tensor
 * with xf_tensor_alloc (free with xf_tensor_free). */
typedef struct xf_tensor {
    xf_dtype dtype;
    xf_shape shape;
    void *data;
} xf_tensor;

xf_status xf_tensor_alloc(xf_tensor *t, xf_dtype dtype, const xf_shape *shape, xf_error *err);
void xf_tensor_free(xf_tensor *t);
/* n zeroed tensor descriptors (at least one), e.g. a graph's inputs or
 * outputs; NULL when out of memory. xf_tensor_array_free frees each
 * tensor's data, then the array (NULL is a no-op). */
xf_tensor *xf_tensor_array_alloc(int n);
void xf_tensor_array_free(xf_tensor *t, int n);
size_t xf_tensor_bytes(const xf_tensor *t);
/* Largest |a-b| and largest |a-b| / max(|b|, atol_floor) over elements;
 * shapes and dtypes must match (XF_ERR_MISMATCH otherwise). */
xf_status xf_tensor_compare(const xf_tensor *a, const xf_tensor *b, double *max_abs,
                            double *max_rel, xf_error *err);
/* "Agree": the one rule for comparing float values, a against a reference:
 * |a - ref| <= atol + rtol * |ref|; NaN agrees with NaN only. The named
 * tolerances are the defaults of its uses. */
typedef struct xf_tolerance {
    double rtol, atol;
} xf_tolerance;
/* a rewritten model against the model it came from (rlflow-agent's --rtol
 * and --atol, the checked writer, the arbiter's interpreter check) */
#define XF_TOL_MODEL ((xf_tolerance){1e-3, 1e-4})
/* both sides of a rule on the same inputs, where float32 rounding of a few
 * operators is all that may differ (xfergen's float32 confirmation, relative
 * to the output's largest magnitude; the verifier's confirmation of a
 * counterexample; xferdb check-export) */
#define XF_TOL_RULE ((xf_tolerance){1e-4, 1e-4})
/* the verifier's float probe on random inputs: a difference this large is
 * far beyond float32 rounding for a graph of a few operators */
#define XF_TOL_PROBE ((xf_tolerance){1e-3, 1e-3})
/* equal up to float rounding (xferdb show's counterexample) */
#define XF_TOL_ROUNDING ((xf_tolerance){1e-5, 1e-5})
int xf_value_agree(double a, double ref, xf_tolerance tol);
/* True when every element agrees (xf_value_agree with rtol, atol) and ints/bools are equal. */
int xf_tensor_close(const xf_tensor *a, const xf_tensor *b, double rtol, double atol);

/* ---------------------------------------------------------------- operators */

/* The operator table. Every operator is defined once, in ir/op_table.c. */
typedef enum xf_op {
    XF_OP_OPAQUE = 0, /* ONNX op without rule semantics; kept verbatim */
    /* element-wise unary */
    XF_OP_RELU,
    XF_OP_SIGMOID,
    XF_OP_TANH,
    XF_OP_ERF,
    XF_OP_GELU,
    XF_OP_SQRT,
    XF_OP_EXP,
    XF_OP_LOG,
    XF_OP_NEG,
    XF_OP_ABS,
    XF_OP_RECIPROCAL,
    XF_OP_IDENTITY,
    XF_OP_DROPOUT, /* inference mode: identity */
    XF_OP_CAST,    /* params.to */
    /* element-wise binary / ternary with numpy broadcasting */
    XF_OP_ADD,
    XF_OP_SUB,
    XF_OP_MUL,
    XF_OP_DIV,
    XF_OP_POW,
    XF_OP_EQUAL,
    XF_OP_WHERE,
    XF_OP_SCALAR_MUL, /* x * s, s a rank-0 tensor (TASO's scalar mul) */
    /* linear algebra and convolution */
    XF_OP_MATMUL, /* numpy matmul: batched, broadcasting leading dims */
    XF_OP_GEMM,   /* alpha*op(A)*op(B) + beta*C */
    XF_OP_CONV,   /* 2-D NCHW convolution, groups, dilation, fused activation */
    XF_OP_BATCHNORM,
    XF_OP_LAYERNORM,
    /* pooling and reductions */
    XF_OP_MAXPOOL,
    XF_OP_AVGPOOL,
    XF_OP_GLOBAL_AVGPOOL,
    XF_OP_REDUCE_MEAN,
    XF_OP_SOFTMAX,
    /* data movement */
    XF_OP_CONCAT,
    XF_OP_SPLIT,
    XF_OP_TRANSPOSE,
    XF_OP_RESHAPE,
    XF_OP_FLATTEN,
    XF_OP_SQUEEZE,
    XF_OP_UNSQUEEZE,
    XF_OP_SLICE,
    XF_OP_GATHER,
    XF_OP_PAD,
    XF_OP_EXPAND,
    XF_OP_ENLARGE, /* zero-pad a conv kernel [O,I,kh,kw] to params.kernel, centred */
    XF_OP_SHAPE,
    /* constant generators (no inputs) */
    XF_OP_CONSTANT_OF_SHAPE, /* params.shape filled with params.value (dtype params.to) */
    XF_OP_CONST_IDENTITY_CONV, /* [C,C,kh,kw]: 1 at the centre tap of channel c->c */
    XF_OP_CONST_IDENTITY_MATRIX, /* [n,n] identity */
    XF_OP_CONST_ONES,            /* params.shape of ones */
    XF_OP_CONST_POOL,            /* [C,1,kh,kw] filled with 1/(kh*kw): avg-pool as conv */
    /* added for models from the wild; outside every rule vocabulary */
    XF_OP_CLIP,           /* min(max(x, alpha), beta) */
    XF_OP_HARDSIGMOID,    /* max(0, min(1, alpha*x + beta)) */
    XF_OP_HARDSWISH,      /* x * max(0, min(1, x/6 + 1/2)) */
    XF_OP_LEAKYRELU,      /* x < 0 ? alpha*x : x */
    XF_OP_PRELU,          /* x < 0 ? slope*x : x, slope broadcast to x */
    XF_OP_MIN,            /* element-wise, broadcasting (ONNX Min of two inputs) */
    XF_OP_MAX,
    XF_OP_REDUCE_SUM,     /* axes, keepdims as reduce_mean */
    XF_OP_REDUCE_MAX,
    XF_OP_RESIZE,         /* shape = output shape; kernel[0] mode, kernel[1] coords, group rounding */
    XF_OP_CONV_TRANSPOSE, /* 2-D NCHW; window, group; shape = output shape */
    XF_OP_SIZE,           /* number of elements, int64 scalar */
    XF_OP_NOT,            /* bool */
    XF_OP_TILE,           /* shape = repeats per dim */
    XF_OP_COUNT
} xf_op;

typedef enum xf_activation {
    XF_ACT_NONE = 0,
    XF_ACT_RELU = 1,
    XF_ACT_SIGMOID = 2,
    XF_ACT_TANH = 3
} xf_activation;

typedef enum xf_pad_mode { XF_PAD_CONSTANT = 0, XF_PAD_REFLECT = 1, XF_PAD_EDGE = 2 } xf_pad_mode;

/* Resize (ONNX Resize-11 and later, Upsample): params.kernel[0] is the
 * mode, kernel[1] how an output coordinate maps to the input, group how a
 * nearest-mode coordinate rounds. The scale of each dim is output/input. */
typedef enum xf_resize_mode { XF_RESIZE_NEAREST = 0, XF_RESIZE_LINEAR = 1 } xf_resize_mode;
typedef enum xf_resize_coord {
    XF_RESIZE_HALF_PIXEL = 0,
    XF_RESIZE_ASYMMETRIC = 1,
    XF_RESIZE_ALIGN_CORNERS = 2,
    XF_RESIZE_PYTORCH_HALF_PIXEL = 3,
    XF_RESIZE_TF_HALF_PIXEL_FOR_NN = 4
} xf_resize_coord;
typedef enum xf_resize_round {
    XF_RESIZE_ROUND_PREFER_FLOOR = 0,
    XF_RESIZE_ROUND_PREFER_CEIL = 1,
    XF_RESIZE_FLOOR = 2,
    XF_RESIZE_CEIL = 3
} xf_resize_round;

#define XF_MAX_SPLIT 64

/* A slice end at or past this runs to the end of its axis whatever the
 * axis's size (ONNX writes INT64_MAX): a rule's validity domain
 * (domain_infer.c) reads such a slice of a rule as the whole axis from its
 * start, and the matcher (match/pattern.c) binds it only to a model slice
 * that reaches the end of its axis. */
#define XF_SLICE_TO_THE_END INT32_MAX

/* Operator parameters. One flat struct for every op; fields an op does not
 * use stay zero, so memcmp/hash over a zero-initialised struct is exact.
 * Always start from xf_params_default(). Axes are stored as given (may be
 * negative); kernels normalise them against the input rank. The layout has
 * no padding bytes (checked at compile time), so hashing the bytes is exact. */
typedef struct xf_params {
    int32_t axis;   /* concat, split, softmax, gather, flatten, layernorm */
    int32_t n_axes; /* transpose perm, reduce/squeeze/unsqueeze/slice axes */
    int64_t axes[XF_MAX_DIMS];
    int64_t starts[XF_MAX_DIMS]; /* slice starts; pad: begin pads */
    int64_t ends[XF_MAX_DIMS];   /* slice ends; pad: end pads */
    int64_t steps[XF_MAX_DIMS];  /* slice steps */
    int32_t kernel[2], stride[2], pads[4] /* top,left,bottom,right */, dilation[2];
    int32_t group;
    int32_t activation; /* xf_activation, conv */
    int32_t keepdims;   /* reduce_mean */
    int32_t trans_a, trans_b;
    int32_t count_include_pad, ceil_mode;
    int32_t to;       /* cast / constant_of_shape dtype (xf_dtype) */
    int32_t pad_mode; /* xf_pad_mode */
    int32_t n_shape;  /* reshape / expand target, constant generators */
    int32_t n_split;  /* split: number of outputs */
    float alpha, beta, epsilon;
    double value; /* pad value, constant_of_shape value */
    int64_t shape[XF_MAX_DIMS];
    int64_t split[XF_MAX_SPLIT]; /* split sizes along axis */
} xf_params;

xf_params xf_params_default(void);
/* p's shape parameter (reshape target, generator shape) set to shape s. */
void xf_params_set_shape(xf_params *p, const xf_shape *s);
/* Whether a and b have the same shape parameter. */
int xf_params_same_shape(const xf_params *a, const xf_params *b);
/* Zeroes every field `op` does not read (documented in ir/op_table.c), so
 * equal operations have equal bytes. xf_graph_add_node applies it. */
void xf_params_canonical(xf_op op, xf_params *p);

/* Operator classes, one column of the operator table (ir/op_table.c): what
 * kind of computation an operator is, asked by the cost model, the
 * rewriter, the verifier and the enumerator instead of lists of their own.
 * Every operator but opaque has exactly one of the first seven; the last
 * four refine them. */
enum {
    XF_OPC_ELEMENTWISE = 1u << 0,   /* output element i reads element i of each operand
                                       after numpy broadcasting: unary functions,
                                       arithmetic, comparisons, where, scalar_mul, cast */
    XF_OPC_CONTRACTION = 1u << 1,   /* sums of products: matmul, gemm, conv, conv_transpose */
    XF_OPC_NORMALIZATION = 1u << 2, /* batchnorm, layernorm, softmax */
    XF_OPC_REDUCTION = 1u << 3,     /* pooling and reduce_* */
    XF_OPC_MOVEMENT = 1u << 4,      /* elements moved or repeated, no arithmetic (resize's
                                       linear mode interpolates) */
    XF_OPC_SHAPE = 1u << 5,         /* reads only its input's shape: shape, size */
    XF_OPC_GENERATOR = 1u << 6,     /* no inputs: constants made from parameters */
    XF_OPC_VIEW = 1u << 7,          /* the input's elements in their order, no copy:
                                       reshape, flatten, squeeze, unsqueeze, identity, dropout */
    XF_OPC_ARITHMETIC = 1u << 8,    /* the four operations: ewadd, ewsub, ewmul, ewdiv */
    XF_OPC_IMPORTED = 1u << 9,      /* added for imported models: no rule vocabulary,
                                       fingerprint or verifier encoding has it */
    XF_OPC_COMMUTATIVE = 1u << 10   /* two operands in either order: ewadd, ewmul, ewmin, ewmax */
};

/* Number of inputs an op takes: [min_inputs, max_inputs]; outputs likewise.
 * An input id of -1 marks an omitted optional input. */
typedef struct xf_op_info {
    const char *name;      /* rlflow name, e.g. "matmul" */
    const char *onnx_name; /* ONNX op_type it maps to, NULL if none (rule-only) */
    int min_inputs, max_inputs;
    int min_outputs, max_outputs; /* max_outputs -1: variadic (split) */
    int enumerable;               /* may xfergen use it in rules */
    unsigned classes;             /* XF_OPC_* */
    xf_activation activation;     /* the conv activation it is (relu, sigmoid, tanh) */
} xf_op_info;

const xf_op_info *xf_op_get(xf_op op);
/* 1 when op has every class in `classes` (XF_OPC_*); 0 for an unknown op. */
int xf_op_is(xf_op op, unsigned classes);
/* 1 for the operators that only give their input another shape, the
 * elements in their order: reshape, flatten, squeeze, unsqueeze (the views
 * rules move and ONNX Runtime writes as one Reshape; XF_OPC_VIEW also
 * holds identity and dropout). */
int xf_op_reshapes(xf_op op);
/* The activation a conv fuses for op (XF_ACT_NONE for any other op), and
 * the operator of an activation (XF_OP_COUNT for XF_ACT_NONE). */
xf_activation xf_op_activation(xf_op op);
xf_op xf_activation_op(xf_activation act);
/* Look up by rlflow name; returns XF_OP_COUNT when unknown. */
xf_op xf_op_from_name(const char *name);

/* -------------------------------------------------------------------- graph */

typedef enum xf_value_kind {
    XF_VALUE_INPUT = 0, /* graph input fed at run time */
    XF_VALUE_CONST = 1, /* initializer: data owned by the graph */
    XF_VALUE_NODE = 2   /* output of a node */
} xf_value_kind;

/* A tensor-valued edge of the graph. */
typedef struct xf_value {
    char *name;  /* owned (see xf_graph_release); may be NULL */
    xf_value_kind kind;
    xf_dtype dtype;
    xf_shape shape;
    int producer;        /* node index for XF_VALUE_NODE, else -1 */
    int producer_output; /* which output of the producer */
    void *data;          /* XF_VALUE_CONST: xf_shape_numel*dtype_size bytes, owned
                            unless `borrowed` */
    int borrowed;        /* 1: data belongs to another graph (xf_graph_clone_shared)
                            and is not freed with this one */
} xf_value;

/* How the interpreter runs an opaque node (ir/opaque_run.c): rules never
 * see inside these, but the numerical checks run them. */
typedef enum xf_opaque_kernel {
    XF_OPAQUE_NO_KERNEL = 0, /* cannot run: the interpreter refuses it by name */
    XF_OPAQUE_IF,            /* runs branches[0] (then) or [1] (else) on input 0 */
    XF_OPAQUE_LSTM,          /* ONNX LSTM with `lstm`'s attributes */
    /* The shape arithmetic exporters write (ir/opaque_calc.c): sizes
     * computed from shapes at run time. Range's and ConstantOfShape's
     * output sizes follow their inputs' values, so they cannot be operators
     * of the table (whose shape inference sees shapes only). */
    XF_OPAQUE_RANGE,           /* ONNX Range: start, limit, delta (scalars) */
    XF_OPAQUE_CONSTANT_OF_SHAPE, /* ONNX ConstantOfShape of a run-time shape: `calc` */
    XF_OPAQUE_MOD,             /* ONNX Mod, broadcasting; calc.fmod */
    XF_OPAQUE_SCATTER_ND,      /* ONNX ScatterND; calc.reduction */
    /* Quantised models (ir/opaque_quant.c): per tensor or per calc.axis. */
    XF_OPAQUE_QUANTIZE,        /* ONNX QuantizeLinear: x, scale, zero point */
    XF_OPAQUE_DEQUANTIZE       /* ONNX DequantizeLinear: x, scale, zero point */
} xf_opaque_kernel;

/* Attributes of the shape-arithmetic kernels. */
typedef struct xf_opaque_calc {
    int32_t fmod;        /* Mod: 1 C's fmod (the dividend's sign), 0 the divisor's sign */
    int32_t reduction;   /* ScatterND: 0 none, 1 add, 2 mul, 3 max, 4 min */
    int32_t value_dtype; /* ConstantOfShape: the fill's xf_dtype */
    double value;        /* ConstantOfShape: the fill */
    int32_t axis;        /* Quantize/DequantizeLinear: the axis of a 1-D scale */
    int32_t to;          /* QuantizeLinear without a zero point: the output's xf_dtype */
} xf_opaque_calc;

/* ONNX LSTM attributes (default activations sigmoid, tanh, tanh only). */
typedef struct xf_lstm_attrs {
    int64_t hidden_size;
    int direction;    /* 0 forward, 1 reverse, 2 bidirectional */
    int layout;       /* 0: X [seq, batch, in]; 1: X [batch, seq, in] */
    int input_forget; /* couple the input and forget gates */
    float clip;       /* cell clip threshold; 0: none */
} xf_lstm_attrs;

/* An operator the table does not model. Attributes are kept as the raw
 * serialized ONNX AttributeProto bytes so export writes them back unchanged.
 * An If's branch subgraphs are also imported as graphs of their own
 * (`branches`) so the interpreter can run them: a branch's graph inputs are
 * the outer-scope values it reads, named as in the model; the node's last
 * n_captured inputs are those values in the outer graph (captured[i] is
 * the name the branches use for input n_inputs - n_captured + i). Export
 * writes only the node's first n_inputs - n_captured inputs. */
typedef struct xf_opaque {
    char *op_type;
    char *domain;           /* "" for the default domain */
    int64_t domain_version; /* opset version of that domain in the source model */
    int n_attrs;
    uint8_t **attr_bytes;   /* each a serialized onnx.AttributeProto */
    size_t *attr_len;
    xf_opaque_kernel kernel;
    xf_lstm_attrs lstm;        /* XF_OPAQUE_LSTM */
    xf_opaque_calc calc;       /* the shape-arithmetic kernels */
    int n_branches;            /* XF_OPAQUE_IF: 2 */
    struct xf_graph *branches; /* owned */
    int n_captured;
    char **captured; /* owned */
    char *no_kernel; /* owned; why an If or LSTM has no kernel, NULL: not known */
} xf_opaque;

typedef struct xf_node {
    xf_op op;
    xf_params params;
    char *name; /* owned (see xf_graph_release); may be NULL */
    int n_inputs, n_outputs;
    int *inputs;  /* value ids, -1 for an omitted optional input (owned, ditto) */
    int *outputs; /* value ids (owned, ditto) */
    xf_opaque *opaque; /* only for XF_OP_OPAQUE */
} xf_node;

typedef struct xf_graph {
    char *name;
    int n_values, cap_values;
    xf_value *values;
    int n_nodes, cap_nodes;
    xf_node *nodes;
    int n_inputs, cap_inputs;
    int *inputs; /* value ids of graph inputs, in order */
    int n_outputs, cap_outputs;
    int *outputs; /* value ids of graph outputs, in order */
    int64_t opset; /* ONNX default-domain opset it came from (0: none) */
    /* A clone's value and node names and node input/output arrays live in
     * this one allocation (NULL: none) instead of one malloc each; they are
     * freed with the graph, never one by one: see xf_graph_release. */
    char *block;
    size_t block_bytes;
} xf_graph;

void xf_graph_init(xf_graph *g);
void xf_graph_free(xf_graph *g);
/* Frees a value or node name, or a node's input/output array, of g that is
 * being replaced or dropped: nothing when it lives in g's clone block.
 * Code that replaces such a pointer must use this, never xf_free(). */
void xf_graph_release(const xf_graph *g, void *p);
/* Whether p (a name or node array of g) lives in g's clone block, where it
 * cannot be realloc'ed. */
int xf_graph_in_block(const xf_graph *g, const void *p);
/* Whether value v is one of g's outputs. */
int xf_graph_is_output(const xf_graph *g, int v);
xf_status xf_graph_clone(const xf_graph *src, xf_graph *dst, xf_error *err);
/* Like xf_graph_clone, but constants point at src's data (borrowed) instead
 * of copying it: cheap for models with large weights. The data must outlive
 * dst and must not be modified through dst. */
xf_status xf_graph_clone_shared(const xf_graph *src, xf_graph *dst, xf_error *err);

/* A graph held compactly while it waits (the TASO search's queue): its
 * node and value arrays run-length encoded (an xf_params is mostly zero
 * bytes), everything they point to kept as it is (ir/graph_pack.c). */
typedef struct xf_graph_packed {
    xf_graph g;     /* the graph without its node and value arrays */
    uint8_t *bytes; /* those arrays, encoded */
    size_t n_bytes;
} xf_graph_packed;
/* Packs g into *p, taking it over (g left empty); on failure (no memory)
 * g is untouched. */
xf_status xf_graph_pack(xf_graph *g, xf_graph_packed *p, xf_error *err);
/* The graph back, byte for byte (spare room in its arrays as a clone
 * has); p is left empty. On failure p is untouched. */
xf_status xf_graph_unpack(xf_graph_packed *p, xf_graph *g, xf_error *err);
/* Frees a packed graph without unpacking it (no allocation); NULL or
 * empty is a no-op. */
void xf_graph_packed_free(xf_graph_packed *p);
/* Bytes its encoded arrays take. */
size_t xf_graph_packed_bytes(const xf_graph_packed *p);

/* Builders. Each returns a value id (>= 0) or -1 with *err set. */
int xf_graph_add_input(xf_graph *g, const char *name, xf_dtype dtype, const xf_shape *shape,
                       xf_error *err);
/* Copies `data` (numel * dtype size bytes). */
int xf_graph_add_const(xf_graph *g, const char *name, xf_dtype dtype, const xf_shape *shape,
                       const void *data, xf_error *err);
/* Takes ownership of `data` (xf_malloc'd) on success and on failure. */
int xf_graph_add_const_owned(xf_graph *g, const char *name, xf_dtype dtype,
                             const xf_shape *shape, void *data, xf_error *err);
/* Adds a node, infers its output shapes and dtypes with the op table, and
 * creates its output values (named `name`:i if name is given). Returns the
 * node index; the output value ids are in g->nodes[idx].outputs. n_outputs
 * is needed only for variadic ops (split); pass 0 to use the op's default. */
int xf_graph_add_node(xf_graph *g, xf_op op, const xf_params *params, const int *inputs,
                      int n_inputs, int n_outputs, const char *name, xf_error *err);
/* Convenience for single-output ops: returns the output value id. */
int xf_graph_op(xf_graph *g, xf_op op, const xf_params *params, const int *inputs,
                int n_inputs, xf_error *err);
/* Adds an opaque node whose output shapes/dtypes are given by the caller;
 * takes ownership of `opaque`. Returns the node index. */
int xf_graph_add_opaque(xf_graph *g, xf_opaque *opaque, const int *inputs, int n_inputs,
                        const xf_dtype *out_dtypes, const xf_shape *out_shapes, int n_outputs,
                        const char *name, xf_error *err);
xf_status xf_graph_mark_output(xf_graph *g, int value, xf_error *err);
void xf_opaque_free(xf_opaque *o);

/* A graph handed over piece by piece to a consumer that needs no xf_graph
 * of its own (ir/graph_sink.c): first every input, then the nodes in a
 * topological order, then the outputs. Values are numbered as they come:
 * the inputs 0 .. n_inputs - 1, then each node's outputs in turn; a node
 * input of -1 is an omitted optional one. A feeder stops at the first
 * call that fails and returns its status. The rules database's decoder
 * feeds any sink (xf_rulesdb_graph_decode); pruning builds its term view
 * from one, without building the graph. */
typedef struct xf_graph_sink {
    void *user;
    /* name may be NULL */
    xf_status (*input)(void *user, const char *name, xf_dtype dtype, const xf_shape *shape,
                       xf_error *err);
    xf_status (*node)(void *user, xf_op op, const xf_params *params, const int *inputs,
                      int n_inputs, int n_outputs, xf_error *err);
    xf_status (*output)(void *user, int value, xf_error *err);
} xf_graph_sink;
/* Feeds g to sink in xf_graph_topo_order. A constant initializer or an
 * opaque node is XF_ERR_UNSUPPORTED (rule graphs take weights as inputs and
 * constants from generator operators). */
xf_status xf_graph_feed(const xf_graph *g, const xf_graph_sink *sink, xf_error *err);

/* In-place surgery (ir/graph_edit.c): rule application, preparation and
 * finishing rewrite a shared clone of a graph with these instead of
 * rebuilding it node by node.
 * uses[v] = how often value v is a node input plus how often it is a graph
 * output. `uses` has g->n_values entries. */
void xf_edit_use_counts(const xf_graph *g, int *uses);
/* Deletes every node i with node_dead[i] and every value v with
 * value_dead[v] (either array may be NULL: nothing of that kind dies),
 * keeping the relative order of the rest and renumbering node inputs and
 * outputs, value producers, graph inputs and graph outputs. The caller
 * guarantees that every output of a dead node is dead and that no surviving
 * node or graph input/output refers to a dead value. Owned constant data of
 * dead values is freed. Fails only when out of memory (g unchanged then). */
xf_status xf_edit_compact(xf_graph *g, const uint8_t *node_dead, const uint8_t *value_dead,
                          xf_error *err);
/* Same contract as xf_edit_compact, but each hole is filled with the last
 * surviving node (value) instead of shifting everything after it: only as
 * many nodes and values move as are deleted, which matters because a node
 * is about a kilobyte (its xf_params). Node order is not kept. node_map
 * (g->n_nodes entries before the call; NULL: not wanted) receives each
 * node's new index, -1 for a deleted one. */
xf_status xf_edit_compact_fill(xf_graph *g, const uint8_t *node_dead, const uint8_t *value_dead,
                               int *node_map, xf_error *err);

/* Checks arity, that every input refers to an existing value, that the graph
 * is acyclic and every value has one producer, and re-runs shape inference on
 * every node against the recorded shapes. The message names the node. */
xf_status xf_graph_validate(const xf_graph *g, xf_error *err);
/* Node indices in a topological order (inputs before users); ties broken by
 * node index so the order is deterministic (node order itself when it is
 * topological). `order` has n_nodes entries. */
xf_status xf_graph_topo_order(const xf_graph *g, int *order, xf_error *err);
/* The sort behind it, for any DAG of n nodes: node i's successors are
 * succ[start[i] .. start[i+1]), indeg[i] its number of predecessors
 * (consumed). Fills order with the nodes, smallest ready index first;
 * returns how many it ordered: fewer than n means a cycle, and the nodes
 * with indeg > 0 are on or behind one. heap: n ints of scratch. */
int xf_topo_kahn(int n, const int *start, const int *succ, int *indeg, int *order, int *heap);
/* Structural hash that ignores node order and value names: it depends on
 * ops, params, graph-input positions, shapes, dtypes, constants and which
 * values are outputs (in order). A constant counts by its contents
 * (XF_HASH_CONTENT) or by its data pointer, dtype and shape
 * (XF_HASH_IDENTITY: cheap, for graphs sharing their weights; its values
 * differ from content mode's and are never stored). XF_HASH_UNORDERED and
 * XF_HASH_IDENTITY_UNORDERED are content and identity mode where the two
 * operands of add, mul, min and max count in either order: graphs that
 * differ only by swapped operands of those hash equal (never stored).
 * Never 0; 0 means the graph could not be hashed (a cycle, no memory). */
typedef enum xf_hash_mode {
    XF_HASH_CONTENT,
    XF_HASH_IDENTITY,
    XF_HASH_UNORDERED,
    XF_HASH_IDENTITY_UNORDERED
} xf_hash_mode;
uint64_t xf_graph_hash_mode(const xf_graph *g, xf_hash_mode mode);
/* xf_graph_hash_mode(g, XF_HASH_CONTENT): the hash stored in the rules DB. */
uint64_t xf_graph_hash(const xf_graph *g);
/* Canonical node order: a topological order that takes, among the ready
 * nodes, the one with the smallest structural node hash (then the lowest
 * index). Graphs that differ only in node order or names get the same
 * sequence of nodes. `order` has n_nodes entries. */
xf_status xf_graph_canonical_order(const xf_graph *g, int *order, xf_error *err);
/* xf_graph_hash_mode with the reason when g cannot be hashed (*hash 0):
 * XF_ERR_NOMEM, or the cycle xf_graph_topo_order reports. */
xf_status xf_graph_hash_checked(const xf_graph *g, xf_hash_mode mode, uint64_t *hash,
                                xf_error *err);
/* Number of nodes per op (array of XF_OP_COUNT). */
void xf_graph_op_histogram(const xf_graph *g, int *counts);
/* Total bytes of constant data. */
size_t xf_graph_param_bytes(const xf_graph *g);
/* What g holds in memory when its nodes run one at a time in topological
 * order (xf_graph_topo_order, the order the ONNX exporter writes): its
 * weights, and the most bytes of graph inputs and node outputs alive at
 * once, each value counted whole (no aliasing, no reuse in place) from the
 * step it is made (the start for an input) to the last step reading it (the
 * end for a graph output) (ir/memory.c). */
typedef struct xf_graph_memory {
    uint64_t weight_bytes;          /* xf_graph_param_bytes */
    uint64_t peak_activation_bytes;
    int peak_node;                  /* the node whose step reaches the peak (-1: the inputs) */
} xf_graph_memory;
xf_status xf_graph_memory_use(const xf_graph *g, xf_graph_memory *m, xf_error *err);
/* Whether the tensors of every value of g (inputs, constants, node
 * outputs: what an executor holds at once, and a bound on what the
 * interpreter does) fit the memory limit; XF_ERR_NOMEM naming the total,
 * the limit and the largest tensor (value and producing node) otherwise. */
xf_status xf_graph_mem_check(const xf_graph *g, xf_error *err);
/* Short description "node 12 'Conv_3' (conv)" for error messages. */
const char *xf_node_describe(const xf_graph *g, int node, char *buf, size_t n);

/* Runs shape inference for one node configuration without a graph.
 * in_dtypes/in_shapes may contain NULL-ish entries (dtype INVALID) for
 * omitted optional inputs. Fills out_dtypes/out_shapes (n_outputs long). */
xf_status xf_op_infer(xf_op op, const xf_params *params, int n_inputs, const xf_dtype *in_dtypes,
                      const xf_shape *in_shapes, int n_outputs, xf_dtype *out_dtypes,
                      xf_shape *out_shapes, xf_error *err);
/* Runs one op's float32 reference kernel. Outputs must be allocated by the
 * caller with the inferred shapes. Omitted optional inputs are NULL. */
xf_status xf_op_run(xf_op op, const xf_params *params, int n_inputs, const xf_tensor *const *in,
                    int n_outputs, xf_tensor *out, xf_error *err);
/* The number of parts k >= 2 when split parameters p cut an axis of size d
 * into k equal parts (sizes d/k), else 0. Such a split's sizes follow its
 * axis: the enumerator makes them so, and the matcher, the validity domain
 * and the bounded check re-derive them at other sizes. */
int xf_split_equal_parts(const xf_params *p, int64_t d);
/* The axes a reduce (reduce_mean, reduce_sum, reduce_max) of a rank-`rank`
 * input reduces, as red[0 .. XF_MAX_DIMS) flags: its axes, or every axis
 * when it lists none (ONNX's default, noop_with_empty_axes 0). Returns how
 * many; -1 - i when entry i is out of range or repeats an earlier one (-1
 * too for a count of axes out of 0 .. XF_MAX_DIMS). The
 * one reading of the axes: the kernels, the shape inference, the validity
 * domain, a rule's symbolic dims and the verifier ask it. */
int xf_reduce_axes(const xf_params *p, int rank, int *red);
/* The input dim each output dim of a transpose of a rank-`rank` input takes
 * into perm[0 .. rank): its permutation (entries may count from the end),
 * or the reversed axes when it lists none. 0, or -1 when the permutation
 * does not fit the rank. */
int xf_transpose_perm(const xf_params *p, int rank, int *perm);
/* Default number of outputs for op (1 for most, params.n_split for split). */
int xf_op_default_outputs(xf_op op, const xf_params *params);

/* ------------------------------------------------------------- interpreter */

/* Runs the whole graph. `inputs` follows g->inputs order; `outputs` (n =
 * g->n_outputs) are allocated here and owned by the caller
 * (xf_tensor_free each). Intermediate buffers are released as soon as their
 * last user has run. Opaque nodes run when they have a kernel (If, LSTM:
 * opaque_run.c); others fail with XF_ERR_UNSUPPORTED naming them.
 * A graph over the memory limit (xf_graph_mem_check) is refused first. */
xf_status xf_interp_run(const xf_graph *g, const xf_tensor *inputs, int n_inputs,
                        xf_tensor *outputs, xf_error *err);

/* The branch an If node takes for condition tensor `cond` (0 then, 1
 * else); XF_ERR_INVALID when cond is not a one-element bool/int tensor. */
xf_status xf_opaque_if_branch(const xf_tensor *cond, int *branch, xf_error *err);
/* The shape-arithmetic and quantisation kernels (kernel XF_OPAQUE_RANGE ..
 * XF_OPAQUE_DEQUANTIZE) on inputs whose data is given (NULL for omitted
 * ones): xf_opaque_calc_infer puts the output's dtype and shape, which may
 * follow the inputs' values, into *dt and *sh; xf_opaque_calc_run fills
 * `out`, allocated by the caller with that dtype and shape. The importer
 * runs them on values known at import, the interpreter at run time. */
int xf_opaque_calc_kernel(xf_opaque_kernel k);
xf_status xf_opaque_calc_infer(const xf_opaque *o, int n_in, const xf_tensor *const *in,
                               xf_dtype *dt, xf_shape *sh, xf_error *err);
xf_status xf_opaque_calc_run(const xf_opaque *o, int n_in, const xf_tensor *const *in,
                             xf_tensor *out, xf_error *err);

/* Allocates and fills one tensor per graph input with deterministic random
 * data: floats uniform in [-1, 1); integer inputs in [0, bound) where bound
 * is the smallest table size of any Gather that indexes with them (token
 * ids stay in the vocabulary), else 2 (masks). Caller frees each tensor.
 * Inputs are made to run g: a graph over the memory limit
 * (xf_graph_mem_check) is refused before any is allocated. */
xf_status xf_graph_random_inputs(const xf_graph *g, uint64_t seed, xf_tensor *inputs,
                                 xf_error *err);

/* What xf_interp_check found: the largest absolute and relative differences
 * over all outputs, and the first output outside the tolerance. */
typedef struct xf_check_result {
    double max_abs, max_rel;
    int bad_output; /* first output with some |d| > atol + rtol*|ref|; -1: all agree */
    double bad_abs; /* largest |d| of that output */
} xf_check_result;

/* Runs `model` and `opt` with the reference interpreter on the same random
 * inputs (xf_graph_random_inputs with seed) and compares every output.
 * A model that computes something else is not an error: it is reported in
 * out->bad_output. Fails (XF_ERR_MISMATCH) when the two models do not have
 * the same inputs and outputs (numbers, names, in the same order: names are
 * how a caller feeds and fetches them), or when a model cannot run (the
 * message says which). */
xf_status xf_interp_check(const xf_graph *model, const xf_graph *opt, uint64_t seed, double rtol,
                          double atol, xf_check_result *out, xf_error *err);

/* ------------------------------------------------------------------- rules */

/* ------------------------------------------------------ validity domains */

/* Where a rule holds: a conjunction of conditions on the dims of its inputs
 * (ir/domain.c says how domains are computed, written and composed).
 * A dim is named by the rule input and an axis counted from the end (-1:
 * the last), so a domain reads the same at every rank the matcher applies a
 * rule at; an axis the tensor does not have counts as 1 (numpy's rank
 * promotion). Each condition is a linear form over dims with integer
 * coefficients, sum(coef * dim) + c, and a relation: == 0, >= 0, or
 * == 0 modulo m. Written as text (the rules database's `domain` column):
 * "m2[-2] == m0[-1]; w0[-1] == 3; (x0[-2]) % 2 == 0"; "" holds everywhere.
 * A new kind of condition is a new xf_dom_kind with its clause in
 * domain.c's holds / format / parse / normalise (one switch each). */
#define XF_DOMAIN_MAX_TERMS 8

typedef enum xf_dom_kind {
    XF_DOM_EQ = 0,  /* sum + c == 0 */
    XF_DOM_GE = 1,  /* sum + c >= 0 */
    XF_DOM_MOD = 2, /* sum + c == 0 modulo m (m >= 2) */
    XF_DOM_KIND_COUNT
} xf_dom_kind;

/* Dim `axis` (negative: counted from the end) of rule input `input`. */
typedef struct xf_dim_ref {
    int16_t input;
    int16_t axis;
} xf_dim_ref;

typedef struct xf_dom_atom {
    int kind; /* xf_dom_kind */
    int n;    /* terms */
    xf_dim_ref dim[XF_DOMAIN_MAX_TERMS];
    int64_t coef[XF_DOMAIN_MAX_TERMS];
    int64_t c;
    int64_t m; /* XF_DOM_MOD: the modulus */
} xf_dom_atom;

typedef struct xf_domain {
    int known; /* 0: nothing recorded (holds nowhere for a derived rule, see
                  rulesdb.h); 1: the conditions below, none: everywhere */
    int n, cap;
    xf_dom_atom *a;
} xf_domain;

/* A graph substitution: `src` and `dst` read the same graph inputs (equal
 * count, order, dtypes and shapes) and have the same number of outputs;
 * output i of src is replaced by output i of dst. In rules, weights are graph
 * inputs; constants come from the generator ops (const_ones...). */
typedef struct xf_rule {
    xf_graph src, dst;
    uint64_t fingerprint; /* of the outputs both sides compute (0: none) */
    xf_domain domain;     /* where it holds (known 0: not recorded; a rule from
                             the rules database, see xf_rulesdb_load_rule) */
} xf_rule;

void xf_rule_init(xf_rule *r);
void xf_rule_free(xf_rule *r);
/* Validates both graphs and checks the interface agreement above; the
 * message says which side or which input/output disagrees. */
xf_status xf_rule_validate(const xf_rule *r, xf_error *err);
/* Feeds r's source to src and its target to dst (xf_graph_feed). */
xf_status xf_rule_feed(const xf_rule *r, const xf_graph_sink *src, const xf_graph_sink *dst,
                       xf_error *err);
/* Whether source operator `node` of r is a split that cuts freely: the
 * matcher lets it match a split of the model cut anywhere, and the
 * verifier and the validity domain leave its sizes open; any other source
 * split is k equal parts of its axis, or the rule's own sizes. So it is
 * when each of its outputs o is one rule output only, read by no source
 * operator, and the target's is output o of one target split, that output
 * again one rule output only and read by no target operator: both sides
 * then cut one tensor each, computed from the inputs alone, and a proof at
 * any one cut covering the axis makes the two tensors equal, so their parts
 * agree at every cut (docs/match.md, docs/verify.md "Limits"). */
int xf_rule_split_cuts_freely(const xf_rule *r, int node);

/* The shape of a rule's generator `gop` (const_iconv, const_pool,
 * const_imatrix, const_ones; the rule's parameters *rule_p) read first by
 * the operator `user_op` at input `slot`, into *p: the one sizing rule the
 * bounded check (verify/), the matcher's source and its target (match/)
 * share. own[0..1] are the shapes of the consumer's first two operands (the
 * only ones it sizes from; n_in its operand count) at the rule's own
 * shapes, in[0..1] where the rule is checked or applied, both in the
 * rule's operand order (NULL: not known, such as a generator not sized
 * yet). The consumer sizes it (an identity conv [C,C,..] or pooling kernel
 * [C,1,..] from the conv input's channels C, an identity matrix from the
 * matmul's other operand, an element-wise binary operand from the other
 * operand) only where, at the own shapes, that gives the rule's own shape;
 * else it keeps the rule's shape everywhere, since a proof at the own
 * shapes holds for the generator it saw there. Returns 1 when the consumer
 * sized it, 0 when *p is *rule_p. */
int xf_rule_generator_shape(xf_op gop, const xf_params *rule_p, xf_op user_op, int n_in, int slot,
                            const xf_shape *const *own, const xf_shape *const *in, xf_params *p);
/* Whether that consumer leaves the generator at the rule's shape *rule_p
 * wherever the rule is checked or applied (xf_rule_generator_shape returns
 * 0 whatever in[] is): at the own shapes own[0..1] it does not size it, or
 * not to its own shape. A rule proved so holds only for the generator of
 * that shape (docs/derive.md, "Where a derived rule holds"). Else (0)
 * *from gets the operand that sizes it (0 or 1) and *axes the dims of that
 * operand that give its size (bit d: dim d); either may be NULL. */
int xf_rule_generator_held(xf_op gop, const xf_params *rule_p, xf_op user_op, int n_in, int slot,
                           const xf_shape *const *own, int *from, uint32_t *axes);

/* Validity domains (types above xf_rule). */
void xf_domain_init(xf_domain *d); /* known 0, no conditions */
void xf_domain_free(xf_domain *d); /* then as after init */
/* Empties d and marks it known: holds everywhere. */
void xf_domain_clear(xf_domain *d);
xf_status xf_domain_copy(const xf_domain *src, xf_domain *dst, xf_error *err);
/* Appends one condition (normalised on the next xf_domain_normalize). */
xf_status xf_domain_add(xf_domain *d, const xf_dom_atom *a, xf_error *err);
/* The canonical form: dims equal to others or to constants named by the
 * lowest dim of their class, those substituted into the other conditions,
 * each condition divided by the gcd of its coefficients, trivially true
 * ones dropped, the rest sorted and deduplicated; an unsatisfiable domain
 * is the one condition "0 == 1". Equal sets of conditions written two ways
 * mostly become equal (not always: this is no decision procedure). */
xf_status xf_domain_normalize(xf_domain *d, xf_error *err);
/* 1 when every condition holds with input i of shape in[i] (n inputs); 0
 * when one fails, names an input past n or one whose in[i] is NULL, or
 * overflows 64 bits. An unknown domain (known 0) holds nowhere. */
int xf_domain_holds(const xf_domain *d, const xf_shape *const *in, int n);
/* The text form with inputs named names[0..n_names) ("in<i>" past them);
 * "" for no condition. XF_ERR_INVALID when buf is too small. */
xf_status xf_domain_format(const xf_domain *d, const char *const *names, int n_names, char *buf,
                           size_t n, xf_error *err);
/* Reads the text form (known 1); names as for format, "in<i>" accepted for
 * any input. XF_ERR_PARSE names the offending text. */
xf_status xf_domain_parse(const char *text, const char *const *names, int n_names,
                          xf_domain *out, xf_error *err);
/* 1 when both are known and have the same normalised conditions. */
int xf_domain_equal(const xf_domain *a, const xf_domain *b);
/* *yes 1 when every condition of b follows from a's (a holds only where b
 * does): a's conditions, normalised, do not change when b's are added. A
 * sufficient test, not a decision procedure: *yes 0 may mean "cannot
 * tell". Errors: out of memory, overflow. */
xf_status xf_domain_implies(const xf_domain *a, const xf_domain *b, int *yes, xf_error *err);

/* What the operators of a rule's two sides demand of its input dims for
 * both to be built and to give outputs of equal shapes, with the rule's
 * parameters (domain_infer.c): matmul's inner dims equal, the other axes of
 * a concat, operands of element-wise operators equal where they are equal
 * in the rule, dims where the rule broadcasts stay 1, a kernel's size,
 * sums for concatenated axes, halves for a split into halves, a target
 * split's sizes and a generator's left open (the matcher sizes them)... An operator
 * with no symbolic rule there keeps its inputs' dims at the rule's own
 * sizes (sound, narrower). Normalised; known 1. */
xf_status xf_domain_of_rule(const xf_rule *r, xf_domain *out, xf_error *err);
/* The same with every generator (const_ones, const_iconv...) at the rule's
 * own size, where the matcher and the bounded check size it from its
 * consumer: what a proof by the own shapes covers (verify/). */
xf_status xf_domain_of_rule_pinned(const xf_rule *r, xf_domain *out, xf_error *err);
/* A dim of a value on one side of a rule held at a size: what a proof took
 * from the rule's own shapes (verify/prove_encode.c: a swap of two axes of
 * size 1 moves nothing, a mean over one element is its input...), so that
 * it holds only where the dim has that size. */
typedef struct xf_rule_dim_size {
    int side;  /* 0 source, 1 target */
    int value; /* a value of that side's graph */
    int axis;  /* 0 .. its rank - 1 */
    int64_t size;
} xf_rule_dim_size;
/* xf_domain_of_rule with each dim held[0..n) at its size too (a dim that is
 * not linear in the inputs pins those it depends on). */
xf_status xf_domain_of_rule_held(const xf_rule *r, const xf_rule_dim_size *held, int n,
                                 xf_domain *out, xf_error *err);
/* The dims of a rule's values as the domain inference sees them, for a
 * proof that must hold at every size the domain admits (verify/prove_encode.c
 * encodes a concat's, split's and slice's sizes with them, not with their
 * numbers at the rule's own shapes). Variable k is an integer unknown: an
 * input dim, a size the matcher chooses (a target split's, a generator's) or
 * a dim not linear in the inputs. A form is (sum coef * var + c) / den; a
 * condition is one of the domain's (xf_dom_kind) over the variables: the
 * rule's domain is where some choice of the variables meets them all. Every
 * variable an equality with a unit coefficient defines (the last such in
 * it: chosen sizes before input dims) is substituted away in the forms and
 * the other conditions (its equality kept), so sizes the
 * domain makes equal are one form term for term (a dim pinned to its own
 * size a constant), and each form is reduced by the gcd of its terms. */
typedef struct xf_dim_form {
    int n;
    int var[XF_DOMAIN_MAX_TERMS];
    int64_t coef[XF_DOMAIN_MAX_TERMS];
    int64_t c, den;
} xf_dim_form;
typedef struct xf_dim_cond {
    int kind; /* xf_dom_kind, of the form's numerator */
    xf_dim_form l;
    int64_t m; /* XF_DOM_MOD: the modulus */
    int soft;  /* 1: a broadcast's tie (equal, or numpy's 1), which a model
                  need not keep for a size the matcher chooses (it ignores a
                  source generator's shape, sizes a target one to the full
                  operand): it never defines a chosen variable in the forms */
} xf_dim_cond;
typedef struct xf_rule_forms {
    int n_vars;
    unsigned char *chosen; /* per variable, 1: a size the matcher chooses (a
                              generator's, a target split's), which no domain
                              over the input dims can hold at a size */
    xf_dim_form *dims[2]; /* side s, value v, axis d: dims[s][off[s][v] + d] */
    int *off[2];
    xf_dim_cond *cond;
    int n_cond;
} xf_rule_forms;
xf_status xf_rule_forms_infer(const xf_rule *r, xf_rule_forms *out, xf_error *err);
void xf_rule_forms_free(xf_rule_forms *f);
/* *r = a + b, its terms sorted and reduced as above; -1 (r unchanged) when
 * it overflows or needs more than XF_DOMAIN_MAX_TERMS terms. */
int xf_dim_form_add(const xf_dim_form *a, const xf_dim_form *b, xf_dim_form *r);
/* Derived rules (derive/): adds to d (over the inputs of g, a graph reading
 * the rule's inputs in order at their own shapes) what g's operators
 * demand of them. */
xf_status xf_domain_add_graph(xf_domain *d, const xf_graph *g, xf_error *err);
/* A rule applied in a graph g at a match (match/): the rule (its domain),
 * the side it matched (its source, or its target applied backward), g's
 * node for each node of that side and g's value for each rule input. */
typedef struct xf_domain_step {
    const xf_rule *rule;
    const xf_graph *matched;
    const int *nodes;
    const int *values;
    int n_values;
} xf_domain_step;
/* Adds to d what g's operators demand of its inputs and, with a step
 * (NULL: none), the conditions of the step's domain with its input k bound
 * to value values[k] of g: each of its dims replaced by what that value's
 * dim is in terms of g's inputs (a sum for a concatenated axis...), or the
 * inputs it depends on pinned to their own sizes where it is not linear in
 * them. A scalar input of the step binds a one-element value of any rank
 * (match/match.c), which no condition names: every dim of that value is 1.
 * A slice of the step "to the end" (XF_SLICE_TO_THE_END) bound to a slice
 * of g with a finite end, or the reverse (the matcher binds them where the
 * end is the axis's size), holds only there: that axis of g's slice input
 * at its own size. */
xf_status xf_domain_add_mapped(xf_domain *d, const xf_graph *g, const xf_domain_step *step,
                               xf_error *err);
/* The generators a derived rule's chain holds at their own shapes, by
 * operator and shape (xf_params_same_shape): those of each step's matched
 * and made sides their first reader there does not size. */
typedef struct xf_domain_held {
    int n, cap;
    xf_op *op;
    xf_params *params;
} xf_domain_held;
void xf_domain_held_init(xf_domain_held *h);
void xf_domain_held_free(xf_domain_held *h); /* then as after init */
/* Adds to h each generator of a step's side (its matched or made graph)
 * that the side holds at its own shape, unless h has one of that operator
 * and shape. */
xf_status xf_domain_held_add(xf_domain_held *h, const xf_graph *side, xf_error *err);
/* With h not empty, adds to d what g's operators demand of its inputs
 * and, for each generator of g of an operator and shape in h, the dims of
 * each reader's operand in g that give it its own shape, at their own
 * sizes: a chain holds a step's generator at its own shape, and any graph
 * of the chain (the one a step rewrites, the one it makes, a later one,
 * the derived rule's sides) whose reader sizes it would let the matcher
 * size it from the model (docs/derive.md, "Where a derived rule holds"). */
xf_status xf_domain_add_own_size(xf_domain *d, const xf_graph *g, const xf_domain_held *h,
                                 xf_error *err);

/* The renaming search every rule identity is taken over (rule_orders.c):
 * visit gets each order of a rule once and keeps the smallest key of its
 * own kind. in[i] is the input and out[i] the output put at position i;
 * swap: the sides are read backwards (target => source). */
typedef struct xf_rule_order {
    const int *in, *out;
    int swap;
} xf_rule_order;

typedef struct xf_rule_orders {
    int n_in, n_out;
    /* Orders inputs a and b by class; equal: interchangeable. NULL: inputs
     * keep their order (the key numbers them itself, e.g. by first use). */
    int (*in_cmp)(void *ctx, int a, int b);
    /* Every order is tried up to these counts; past them, inputs keep the
     * order sorted by class and outputs their given order. */
    int max_in, max_out;
    int both_sides; /* also every order with the sides swapped */
    int (*visit)(void *ctx, const xf_rule_order *o); /* nonzero: stop */
    void *ctx;
} xf_rule_orders;

/* Inputs sorted by class and every order keeping that class sequence,
 * times every output order, times both orientations when asked. */
xf_status xf_rule_orders_each(const xf_rule_orders *s, xf_error *err);

/* Identity of a rule modulo renaming of its inputs (rule_key.c): the
 * smallest (source hash, target hash) of xf_graph_hash over every renaming,
 * that is every order of the graph inputs that keeps dtypes and shapes in
 * a canonical sequence and every joint order of the mapped outputs. Equal
 * keys: one rule is a renaming of the other (up to 128-bit collisions). */
typedef struct xf_rule_key {
    uint64_t src, dst;
} xf_rule_key;

/* Permutes r's inputs and outputs while it searches, and restores them.
 * *reversed (may be NULL) gets the key of the rule read backwards
 * (target => source). */
xf_status xf_rule_key_of(xf_rule *r, xf_rule_key *key, xf_rule_key *reversed, xf_error *err);
int xf_rule_key_cmp(const xf_rule_key *a, const xf_rule_key *b);
/* The key of r as written, without renaming: its sides' xf_graph_hash
 * (XF_ERR_NOMEM, key {0, 0}, when a side cannot be hashed). */
xf_status xf_rule_key_as_written(const xf_rule *r, xf_rule_key *key, xf_error *err);

/* ------------------------------------------------- reshapes in rules (views) */

/* What a reshape from `in` to `out` does to the axes (ir/view.c), so a rule
 * found on small tensors applies to a model's reshape of the same kind at
 * other sizes:
 *  - FLATTEN: the first k >= 2 axes merged into one, [a1..ak, R] -> [a1*..*ak, R]
 *    ([B, S, H] -> [B*S, H]);
 *  - UNFLATTEN: its inverse, [P, R] -> [a1..ak, R] with a1*..*ak = P;
 *  - SPLIT_LAST: the last axis split in two, [.., H] -> [.., h, H/h] (a
 *    transformer's heads);
 *  - MERGE_LAST: its inverse, [.., h, d] -> [.., h*d];
 *  - GENERAL: anything else (matched only with its exact target shape).
 * Unit dims can make a reshape two kinds at once ([B, 1, H] -> [B, H]): the
 * first in the order above is taken. *k gets the axes merged or made by a
 * (un)flatten, else 0. */
typedef enum xf_view_kind {
    XF_VIEW_GENERAL = 0,
    XF_VIEW_FLATTEN = 1,
    XF_VIEW_UNFLATTEN = 2,
    XF_VIEW_SPLIT_LAST = 3,
    XF_VIEW_MERGE_LAST = 4
} xf_view_kind;
xf_view_kind xf_view_classify(const xf_shape *in, const xf_shape *out, int *k);
const char *xf_view_kind_name(xf_view_kind kind);

/* Symbolic dims of a rule (ir/rule_dims.c). A rule is enumerated at small
 * fixed sizes, but its reshapes must apply at a model's sizes: the lead dims
 * an unflatten restores, the head count a split of the last axis makes.
 * Every dim of every value of both sides is written as a monomial
 * num/den * s1^e1 * ... over symbols: one per dim of each rule input, and
 * fresh ones for the sizes a reshape chooses (an unflatten's first k-1 lead
 * dims, a split's head count), which are the rule's *parameter variables*.
 * Operators tie dims (operands of element-wise ops, matmul's inner dims,
 * the two sides' outputs), and each tie is solved for one symbol where it
 * can be (a variable of the target first: the target's unflatten takes the
 * lead dims of the source's value it replaces). A rule applies at a match
 * when every dim of every value of both sides equals its monomial under
 * the symbols bound there: inputs' dims from the bound values, the
 * source's variables from the matched reshapes; the target's reshapes take
 * their shapes from their monomials. `ok` is 0 when some target reshape has
 * a size no bound symbol determines (the rule then only matches at its own
 * reshape targets). Dims the monomials cannot express (a convolution's
 * spatial output, a concat of different sizes) are opaque: not checked, and
 * no reshape may depend on them. */
#define XF_DIMX_FACTORS 6
typedef struct xf_dimx {
    int64_t num, den; /* coefficient; den 0: opaque */
    int n;            /* factors */
    int16_t sym[XF_DIMX_FACTORS];
    int8_t exp[XF_DIMX_FACTORS];
} xf_dimx;

#define XF_RULE_DIMS_MAX_INPUTS 16
#define XF_RULE_DIMS_INPUT_SYMS (XF_RULE_DIMS_MAX_INPUTS * XF_MAX_DIMS)
#define XF_RULE_DIMS_MAX_SYMS (XF_RULE_DIMS_INPUT_SYMS + 64)
#define XF_RULE_DIMS_MAX_CONS 32

typedef struct xf_rule_dims {
    int ok;
    const char *why; /* when !ok */
    int n_values[2];                   /* per side (0 source, 1 target) */
    xf_dimx (*val[2])[XF_MAX_DIMS];    /* per side and value: its dims, normalised */
    int n_sym;                         /* symbols in use */
    int8_t sym_side[XF_RULE_DIMS_MAX_SYMS]; /* fresh symbol: side of the reshape that makes it; -1 input dim */
    xf_dimx def[XF_RULE_DIMS_MAX_SYMS];     /* den 0: free; else its value over free symbols */
    int n_cons;                             /* ties no symbol could be solved for */
    xf_dimx cons[XF_RULE_DIMS_MAX_CONS][2];
} xf_rule_dims;

/* 1 when some node of either side is a reshape (the rules that need their
 * symbolic dims to apply at other sizes). */
int xf_rule_has_views(const xf_rule *r);
/* Fills *d (xf_rule_dims_free it); XF_ERR_NOMEM only: a rule the monomials
 * cannot follow gets ok 0 and why. */
xf_status xf_rule_dims_infer(const xf_rule *r, xf_rule_dims *d, xf_error *err);
void xf_rule_dims_free(xf_rule_dims *d);
/* Binds symbols from shapes of source values: shapes[v] for source value v
 * (rank -1: unknown), into symval (n_sym entries, 0: unbound); then every
 * known source value's dims are checked against their monomials. 0 when
 * they disagree. Ranks are not compared (d stores none): a caller binding a
 * model's values first refuses any of another rank than the rule's
 * (match/instantiate.c, bind_dims; review 46g F1). */
int xf_rule_dims_bind(const xf_rule_dims *d, const xf_shape *shapes, int64_t *symval);
/* The dims of value v of side `side` under symval into out->dims[0 ..
 * out->rank) (the caller sets the rank: the value's in the rule); 0 when
 * some dim cannot be evaluated. */
int xf_rule_dims_shape(const xf_rule_dims *d, int side, int v, const int64_t *symval,
                       xf_shape *out);
/* 1 when shape s agrees with the monomials of value v (opaque dims pass). */
int xf_rule_dims_agree(const xf_rule_dims *d, int side, int v, const int64_t *symval,
                       const xf_shape *s);
/* Equal monomials (opaque ones are equal to nothing). */
int xf_dimx_equal(const xf_dimx *a, const xf_dimx *b);
/* "s3*s7/2" (symbols: in<i>.<dim> for input dims, v<k> for variables). */
char *xf_dimx_str(const xf_dimx *x, char *buf, size_t n);

/* Readable infix form of a small graph, one expression per output joined by
 * ", ": "ewadd(matmul(x0, w0), matmul(x0, w1))". Inputs print as their
 * names (or in<i>), parameters that matter in brackets ("concat[axis=1]"),
 * shared subexpressions repeat. Returns XF_ERR_INVALID when buf is too
 * small (buf then holds a truncated string). */
xf_status xf_graph_format(const xf_graph *g, char *buf, size_t n, xf_error *err);

/* Builds the node for one operator of graph text: name as written (it may
 * end in an output index, "split1"), params the text between its brackets
 * ("" when none), args the argument values (-1: omitted). Returns the value
 * the expression stands for, or -1 with err filled. */
typedef int (*xf_graph_parse_op)(xf_graph *g, const char *name, const char *params,
                                 const int *args, int n_args, void *user, xf_error *err);
/* Reads the text of xf_graph_format back: each expression (separated by
 * "," or ";" at the top level) becomes a graph output of g, whose graph
 * inputs are already there (the text names them, by name or in<i>, but
 * carries no dtypes or shapes). op: NULL for the default, operator table
 * names with default parameters (text with parameters is
 * XF_ERR_UNSUPPORTED) and an output index suffix for multi-output
 * operators. */
xf_status xf_graph_parse(xf_graph *g, const char *text, xf_graph_parse_op op, void *user,
                         xf_error *err);

/* --------------------------------------------------------------- utilities */

/* Bounded string builder over a caller's buffer: appends stop at the buffer's
 * end (the text stays NUL-terminated), `overflow` records that something was
 * cut, and `len` keeps counting the full length (so len + 1 is the size the
 * text needs). Initialise as {buf, sizeof buf, 0, 0}. */
typedef struct xf_strbuf {
    char *p;
    size_t n, len;
    int overflow;
} xf_strbuf;
void xf_strbuf_printf(xf_strbuf *b, const char *fmt, ...) XF_PRINTF(2, 3);

/* Deterministic PRNG (splitmix64) for random weights and test inputs. */
typedef struct xf_rng {
    uint64_t state;
} xf_rng;
void xf_rng_seed(xf_rng *r, uint64_t seed);
uint64_t xf_rng_next(xf_rng *r);
float xf_rng_uniform(xf_rng *r, float lo, float hi); /* [lo, hi) */
float xf_rng_normal(xf_rng *r);

/* The one 64-bit mixer: folds v into the running hash h (boost-style
 * combine, then the splitmix64 finaliser). Its values are stored (rules DB
 * hash column), so it never changes. Inline: graph hashes call it a few
 * times per edge. */
static inline uint64_t xf_hash_u64(uint64_t h, uint64_t v)
{
    uint64_t z = h ^ (v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2));
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}
/* n bytes at data folded into h (built on xf_hash_u64). */
uint64_t xf_hash_bytes(uint64_t h, const void *data, size_t n);

/* The one hash table: open addressing over nonzero 64-bit keys, each with a
 * 64-bit value (count, index into the caller's array, bits). Tables keyed
 * by the hash of a larger key hold several entries per key (xf_htab_add)
 * and walk them with xf_htab_next, comparing the real keys. Iteration order
 * is unspecified: read slot[0..cap) where key != 0 only when order does
 * not matter. Zero-initialised (or xf_htab_init) is an empty table. */
typedef struct xf_htab_slot {
    uint64_t key; /* 0: empty */
    uint64_t val;
} xf_htab_slot;
typedef struct xf_htab {
    xf_htab_slot *slot;
    size_t cap, n; /* cap: power of two, at least 2n */
} xf_htab;
#define XF_HTAB_START ((size_t)-1)
/* A hash as the key of a hash-keyed multimap (0 is reserved). */
static inline uint64_t xf_htab_key(uint64_t h)
{
    return h ? h : 1;
}
void xf_htab_init(xf_htab *t);
void xf_htab_free(xf_htab *t);
/* Empties the table, keeping its memory. */
void xf_htab_clear(xf_htab *t);
/* Makes room for n entries without growing again. */
xf_status xf_htab_reserve(xf_htab *t, size_t n, xf_error *err);
/* The value of an entry with key, NULL when absent. The
 * pointer is valid until the next insertion. */
uint64_t *xf_htab_get(const xf_htab *t, uint64_t key);
/* Finds key or inserts it with value 0; *val (optional) points at its value,
 * *added (optional) says whether it was inserted. */
xf_status xf_htab_put(xf_htab *t, uint64_t key, uint64_t **val, int *added, xf_error *err);
/* Inserts (key, val) even when key is present (hash-keyed multimaps). */
xf_status xf_htab_add(xf_htab *t, uint64_t key, uint64_t val, xf_error *err);
/* Walks the entries with key: start with *pos = XF_HTAB_START; returns each
 * value in turn, then NULL. */
uint64_t *xf_htab_next(const xf_htab *t, uint64_t key, size_t *pos);
/* Starts loading the slot where a search for key begins, for a caller that
 * looks up a run of keys known ahead in a table larger than the caches: its
 * misses then overlap. Only a hint: the table is not changed. */
void xf_htab_prefetch(const xf_htab *t, uint64_t key);

/* The one clock: CLOCK_MONOTONIC in seconds or milliseconds, and the
 * calling thread's CPU time in seconds (benchmarks). */
double xf_clock_now(void);
double xf_clock_now_ms(void);
double xf_clock_thread_cpu(void);

/* --------------------------------------------------------- parallel ranges */

#define XF_PARALLEL_MAX_THREADS 256

/* Work on indices [lo, hi) as thread `worker` (0 .. threads - 1; worker 0
 * is the thread that called xf_parallel or xf_parallel_finish). */
typedef xf_status (*xf_range_fn)(void *ctx, int worker, size_t lo, size_t hi, xf_error *err);

/* How a loop is cut and what it reports; NULL or zeroed: xf_parallel's
 * own choice, nothing reported. */
typedef struct xf_parallel_plan {
    /* Indices a thread takes at a time (0: a quarter of the range's share
     * of each thread, at most 512). Small chunks for work whose cost per
     * index varies and whose ranges are short (the enumerator's batches),
     * so that no thread waits long for the last chunk of another. */
    size_t chunk;
    /* NULL, or one entry per thread: set to the CPU seconds each spent in
     * the loop (0 for a thread that did not run). */
    double *cpu;
} xf_parallel_plan;

/* Runs fn over [lo, hi) in chunks on up to `threads` threads, the calling
 * one among them; every thread is joined before it returns. With one
 * thread (or one index), fn is called once with the whole range. On
 * failure, the error of the lowest failed chunk (the chunks before it
 * have all run, chunks after it may have). */
xf_status xf_parallel(int threads, size_t lo, size_t hi, const xf_parallel_plan *plan,
                      xf_range_fn fn, void *ctx, xf_error *err);

/* The same in two halves: _start sets up to `helpers` threads on the
 * chunks (in order; none when threads cannot be made) and returns;
 * _finish, with `help`, has the calling thread take the chunks left too
 * (without it, only when no helper started), joins them, frees the job
 * and returns as xf_parallel. plan->cpu, when given, has helpers + 1
 * entries and is filled by _finish. _start fails only when out of memory
 * (no job then: *job NULL, and _finish of NULL does nothing). */
typedef struct xf_parallel_job xf_parallel_job;
xf_status xf_parallel_start(xf_parallel_job **job, int helpers, size_t lo, size_t hi,
                            const xf_parallel_plan *plan, xf_range_fn fn, void *ctx,
                            xf_error *err);
xf_status xf_parallel_finish(xf_parallel_job *job, int help, xf_error *err);

/* ------------------------------------------------------------------- files */

/* An output file being written: xf_outfile_open, write to `f`, then
 * xf_outfile_commit (or xf_outfile_abort to drop it). A regular file or a
 * new path is written atomically: into a temporary file next to it that
 * commit fsyncs and renames over it (keeping the old file's mode), so the
 * destination holds the old content or the new, never a part. Anything
 * else (a device such as /dev/null, a FIFO, a socket) is written through
 * and never replaced or removed; opening a FIFO waits for its reader, as a
 * shell's `>` does. A symbolic link is followed and what it points to is
 * written by the same rule, the link stays. Every write, the flush, fsync
 * and close are checked: commit fails with the system's message ("No space
 * left on device" for a full disk or /dev/full), and a failed or aborted
 * file leaves the destination untouched and no temporary file behind.
 * Messages name the path as given. */
typedef struct xf_outfile {
    FILE *f;    /* write here */
    char *path; /* as given */
    char *dest; /* after following symbolic links */
    char *tmp;  /* the temporary file; NULL when writing through */
} xf_outfile;
xf_status xf_outfile_open(xf_outfile *o, const char *path, xf_error *err);
/* Closes and publishes the file; *o is released either way. */
xf_status xf_outfile_commit(xf_outfile *o, xf_error *err);
/* Commits n files that belong together (a model and its external data):
 * every one is flushed, fsynced and closed before the first is renamed into
 * place, so a failure while writing any leaves all destinations as they
 * were; the renames then follow one another in order. All n are released. */
xf_status xf_outfile_commit_all(xf_outfile *o, int n, xf_error *err);
/* Drops the file: the destination stays as it was. */
void xf_outfile_abort(xf_outfile *o);
/* Files this process must not write over (its inputs: a model, a rules
 * database, a cost cache): xf_outfile_open refuses an output that is one of
 * them (same device and inode, or for a file not yet there the same
 * resolved path) with XF_ERR_INVALID naming it and `what` ("the input
 * model"); writers that do not go through xf_outfile (SQLite) call
 * xf_outfile_check. Up to 16; a tool registers them before it writes.
 * xf_outfile_protect_clear forgets them (tests); a library call that
 * registers its own inputs takes xf_outfile_protect_mark first and hands it
 * to xf_outfile_protect_release when it returns, forgetting only what it
 * added (a process may call it again and again). Not thread-safe: register
 * before starting threads. */
xf_status xf_outfile_protect(const char *path, const char *what, xf_error *err);
xf_status xf_outfile_check(const char *path, xf_error *err);
void xf_outfile_protect_clear(void);
int xf_outfile_protect_mark(void);
void xf_outfile_protect_release(int mark);
/* (A temporary file being written is removed when SIGINT, SIGTERM or
 * SIGHUP stops the process, unless the tool set its own handler.) */

/* Whether path can be written as an output, without writing it: its
 * temporary file is created next to it and removed (a device, FIFO or
 * socket is only checked against the protected files). A tool checks its
 * outputs so before a long run, not after. */
xf_status xf_outfile_probe(const char *path, xf_error *err);

/* data[0..len) as the whole content of path, through an xf_outfile. */
xf_status xf_outfile_write_all(const char *path, const void *data, size_t len, xf_error *err);

/* Writes n bytes to the file descriptor fd (a worker's pipe), retrying
 * interrupted and short writes: 0, or -1 with errno set. */
int xf_fd_write_all(int fd, const void *p, size_t n);

/* Opens path for reading (binary) when it is a regular file, after
 * following symbolic links; a FIFO, device, socket or directory is refused
 * at once (XF_ERR_IO, the message says which), never opened in a way that
 * could block. */
xf_status xf_infile_open(const char *path, FILE **out, xf_error *err);

#endif /* XF_IR_H */
