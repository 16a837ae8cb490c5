/*
 * onednn_internal.h — private contract between the files of the oneDNN
 * backend (costmodel/onednn*.c). Not part of the public API.
 *
 * The unit of work is an ox_kernel: everything needed to run ONE operator
 * configuration on oneDNN, built once and executed many times. A kernel is
 * a list of steps, each either a oneDNN primitive with its arguments or one
 * call of the float32 reference kernel (xf_op_run). Its inputs and outputs
 * are raw buffers the caller binds (cm_onednn_kernel_bind); the kernel records the
 * layout (oneDNN memory descriptor) each input arrives in and each output is
 * produced in, so the executor can keep convolutions in blocked layouts and
 * the measurer can feed every primitive the layout it prefers.
 *
 * Builders (one per operator family, onednn_conv.c, onednn_matmul.c, ...)
 * return XF_ERR_UNSUPPORTED when oneDNN has no kernel for a configuration;
 * the caller then builds the reference kernel (cm_onednn_kernel_build_reference).
 * Any other error is real.
 */
#ifndef XF_COSTMODEL_ONEDNN_INTERNAL_H
#define XF_COSTMODEL_ONEDNN_INTERNAL_H

#include <dnnl.h>

#include "backend_internal.h"

/* Backend state: one CPU engine and one in-order stream. */
typedef struct ox_state {
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    xf_backend_config cfg; /* threads, warm-up and timed runs, neighbours */
} ox_state;

/* Sets the OpenMP thread count oneDNN runs with (the Debian build uses the
 * OpenMP CPU runtime). Called before kernels are created and run. */
void cm_onednn_set_threads(const ox_state *st);

/* Translates a oneDNN status into XF_ERR_UNSUPPORTED (unimplemented or
 * rejected configuration), XF_ERR_NOMEM or XF_ERR_INTERNAL with "what: the
 * oneDNN message". XF_OK for dnnl_success. */
xf_status cm_onednn_check(dnnl_status_t s, xf_error *err, const char *what);
#define OX_TRY(call, err, what)                               \
    do {                                                      \
        xf_status ox_try_st_ = cm_onednn_check((call), (err), what); \
        if (ox_try_st_ != XF_OK) return ox_try_st_;           \
    } while (0)

/* ------------------------------------------------------- memory descriptors */

/* Dense row-major f32 descriptor of shape s (rank 0 becomes [1]). */
void cm_onednn_md_plain(dnnl_memory_desc_t *md, const xf_shape *s);
/* f32 descriptor of shape s whose layout a primitive chooses (format any). */
void cm_onednn_md_any(dnnl_memory_desc_t *md, const xf_shape *s);
/* Same as cm_onednn_md_plain, from explicit dims. */
void cm_onednn_md_plain_dims(dnnl_memory_desc_t *md, int ndims, const int64_t *dims);
/* Is md dense row-major (strides descending, no blocking, no padding)? */
int cm_onednn_md_is_plain(const dnnl_memory_desc_t *md);
/* Bytes a buffer of layout md needs (at least 1). */
size_t cm_onednn_md_bytes(const dnnl_memory_desc_t *md);

/* ------------------------------------------------------------------ kernel */

/* What a builder knows about one input. */
typedef struct ox_io {
    xf_dtype dtype;                 /* XF_DTYPE_INVALID: omitted optional input */
    xf_shape shape;
    const dnnl_memory_desc_t *md;   /* layout it arrives in; NULL: kernel chooses */
    const void *data;               /* contents when constant at build time, else NULL */
} ox_io;

typedef struct ox_step {
    dnnl_primitive_t prim; /* NULL: the reference call */
    int n_args;
    dnnl_exec_arg_t *args;
} ox_step;

/* A memory object of the kernel whose data handle is a caller's buffer. */
typedef struct ox_binding {
    dnnl_memory_t mem;
    int output; /* 0: input `index`, 1: output `index` */
    int index;
} ox_binding;

typedef struct ox_kernel {
    const ox_state *st;
    xf_op op;
    xf_params params;
    int measuring; /* building for a one-op measurement: no constant data */
    int n_in, n_out;
    ox_io *in;                  /* the builder's view of each input (md not kept) */
    dnnl_memory_desc_t *given_md; /* layout each input arrives in, when has_given */
    int *has_given;
    dnnl_memory_desc_t *in_md;  /* layout each input is expected in, when has_md */
    int *in_has_md;
    dnnl_memory_t *in_mem;      /* input i bound in layout in_md[i], once created */
    void **in_ptr;              /* caller's buffers */
    xf_dtype *out_dt;
    xf_shape *out_sh;
    dnnl_memory_desc_t *out_md; /* layout each f32 output is produced in */
    void **out_ptr;
    int alias;                  /* output 0 is input 0's buffer (view ops); no steps */
    int n_steps, cap_steps;
    ox_step *steps;
    int n_owned, cap_owned;
    dnnl_memory_t *owned;       /* scratch, reordered constants, views on scratch */
    int n_bind, cap_bind;
    ox_binding *bind;
    /* the reference call: where each operand's plain bytes live */
    dnnl_memory_t *ref_in_mem;  /* plain scratch of a re-laid-out input, or NULL */
    xf_tensor *ref_in, *ref_out;
    /* the backend's own float32 element-wise loop run by the reference step
     * instead of xf_op_run (ops oneDNN lacks: erf); NULL: xf_op_run */
    void (*loop)(const float *x, float *y, size_t n);
} ox_kernel;

/* Sets up an empty kernel for op with the given inputs and outputs. */
xf_status cm_onednn_kernel_init(ox_kernel *k, const ox_state *st, xf_op op, const xf_params *p,
                         int n_in, const ox_io *in, int n_out, const xf_dtype *out_dt,
                         const xf_shape *out_sh, int measuring, xf_error *err);
void cm_onednn_kernel_free(ox_kernel *k);
/* Drops every step, memory and layout choice, back to the state after init
 * (a builder that gives up leaves the kernel ready for another builder). */
void cm_onednn_kernel_reset(ox_kernel *k);

/* Builds k with oneDNN primitives (dispatching on k->op), or returns
 * XF_ERR_UNSUPPORTED leaving k reset. */
xf_status cm_onednn_kernel_build_native(ox_kernel *k, xf_error *err);
/* Builds k as one reference call, re-laying out inputs to plain first. */
xf_status cm_onednn_kernel_build_reference(ox_kernel *k, xf_error *err);

/* Input i read through `view`, a description of input i's plain row-major
 * bytes (a reshape, a transposed stride view). Inputs in another layout are
 * first reordered into plain scratch. *mem is the memory to pass. */
xf_status cm_onednn_input_view(ox_kernel *k, int i, const dnnl_memory_desc_t *view, dnnl_memory_t *mem,
                        xf_error *err);
/* Input i in layout `want` (same dims): reordered when it arrives in another
 * layout; a constant input is reordered once, now. An input whose layout the
 * kernel chooses (md NULL) simply arrives in `want`. */
xf_status cm_onednn_input_layout(ox_kernel *k, int i, const dnnl_memory_desc_t *want,
                          dnnl_memory_t *mem, xf_error *err);
/* Input i's plain bytes seen as `view` (same element count, e.g. conv
 * weights as [g, M/g, C/g, kh, kw]) but wanted in layout `want` (dims of
 * view): reordered once when constant, every run otherwise. When the
 * kernel may choose (md NULL), the input simply arrives in `want`. */
xf_status cm_onednn_input_relayout(ox_kernel *k, int i, const dnnl_memory_desc_t *view,
                            const dnnl_memory_desc_t *want, dnnl_memory_t *mem, xf_error *err);
/* The layout input i arrives in, or NULL when the kernel may choose. */
const dnnl_memory_desc_t *cm_onednn_input_md(const ox_kernel *k, int i);
/* Output j: `layout` is what consumers see (dims of the output shape);
 * `prim` is how the primitive writes the same bytes (NULL: same as layout). */
xf_status cm_onednn_output(ox_kernel *k, int j, const dnnl_memory_desc_t *layout,
                    const dnnl_memory_desc_t *prim, dnnl_memory_t *mem, xf_error *err);
/* Scratch memory of layout md owned by the kernel. */
xf_status cm_onednn_scratch(ox_kernel *k, const dnnl_memory_desc_t *md, dnnl_memory_t *mem,
                     xf_error *err);
/* Primitive descriptor for an op descriptor on k's engine (attr may be NULL). */
xf_status cm_onednn_make_pd(const ox_kernel *k, const void *op_desc, const_dnnl_primitive_attr_t attr,
                     dnnl_primitive_desc_t *pd, xf_error *err);
/* Memory descriptor the primitive chose (query dnnl_query_src_md etc.). */
const dnnl_memory_desc_t *cm_onednn_pd_md(const_dnnl_primitive_desc_t pd, dnnl_query_t what, int index);
/* Creates the primitive of pd (which it destroys) and appends it with args. */
xf_status cm_onednn_add_step(ox_kernel *k, dnnl_primitive_desc_t pd, int n_args,
                      const dnnl_exec_arg_t *args, xf_error *err);
/* For a primitive reading input 0 (SRC) and writing output 0 (DST): binds
 * both in the layouts pd chose and appends it; destroys pd on failure too. */
xf_status cm_onednn_add_src_dst_step(ox_kernel *k, dnnl_primitive_desc_t pd, xf_error *err);
/* Appends a reorder from memory src to memory dst. */
xf_status cm_onednn_add_reorder(ox_kernel *k, dnnl_memory_t src, dnnl_memory_t dst, xf_error *err);
/* Reorders src into dst right now (constants at build time). */
xf_status cm_onednn_reorder_now(const ox_state *st, dnnl_memory_t src, dnnl_memory_t dst,
                         xf_error *err);

/* Points input i and output j at the caller's buffers (layouts in_md /
 * out_md for f32 values, plain otherwise). Done once per buffer change. */
xf_status cm_onednn_kernel_bind(ox_kernel *k, void *const *in, void *const *out, xf_error *err);
/* Runs every step once. */
xf_status cm_onednn_kernel_run(ox_kernel *k, xf_error *err);
/* Number of steps one run executes (the kernel count). */
int cm_onednn_kernel_count(const ox_kernel *k);

/* ------------------------------------------------- per-family builders */

xf_status cm_onednn_build_conv(ox_kernel *k, xf_error *err);      /* onednn_conv.c */
xf_status cm_onednn_build_matmul(ox_kernel *k, xf_error *err);    /* onednn_matmul.c */
xf_status cm_onednn_build_gemm(ox_kernel *k, xf_error *err);      /* onednn_matmul.c */
xf_status cm_onednn_build_unary(ox_kernel *k, xf_error *err);     /* onednn_eltwise.c */
xf_status cm_onednn_build_binary(ox_kernel *k, xf_error *err);    /* onednn_eltwise.c */
xf_status cm_onednn_build_pow(ox_kernel *k, xf_error *err);       /* onednn_eltwise.c */
xf_status cm_onednn_build_pool(ox_kernel *k, xf_error *err);      /* onednn_pool.c */
xf_status cm_onednn_build_global_pool(ox_kernel *k, xf_error *err); /* onednn_pool.c */
xf_status cm_onednn_build_reduce_mean(ox_kernel *k, xf_error *err); /* onednn_pool.c */
xf_status cm_onednn_build_softmax(ox_kernel *k, xf_error *err);   /* onednn_norm.c */
xf_status cm_onednn_build_batchnorm(ox_kernel *k, xf_error *err); /* onednn_norm.c */
xf_status cm_onednn_build_layernorm(ox_kernel *k, xf_error *err); /* onednn_norm.c */
xf_status cm_onednn_build_concat(ox_kernel *k, xf_error *err);    /* onednn_move.c */
xf_status cm_onednn_build_transpose(ox_kernel *k, xf_error *err); /* onednn_move.c */
xf_status cm_onednn_build_erf(ox_kernel *k, xf_error *err);       /* onednn_erf.c */
xf_status cm_onednn_build_view(ox_kernel *k, xf_error *err);      /* onednn_move.c */

/* ------------------------------------------------------- backend entry points */

xf_status cm_onednn_measure(void *state, const xf_backend_op *op, double *ms, int *kernels,
                            xf_cost_runs_verdict *verdict, xf_error *err); /* onednn_measure.c */
xf_status cm_onednn_exec_prepare(void *state, const xf_graph *g, void **exec, xf_error *err);
xf_status cm_onednn_exec_run(void *exec, const xf_tensor *inputs, int n_inputs, xf_error *err);
xf_status cm_onednn_exec_output(void *exec, int i, xf_tensor *out, xf_error *err);
void cm_onednn_exec_free(void *exec);                                          /* onednn_exec.c */

#endif /* XF_COSTMODEL_ONEDNN_INTERNAL_H */
