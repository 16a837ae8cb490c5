/*
 * builder_internal.h — private to modelzoo/: a small layer over the ir graph
 * builders for writing model architectures compactly (random parameters
 * drawn from one seeded RNG,
 * named constants and nodes, and the CNN layers the zoo's models share
 * (conv, batch-norm, pooling, flatten, fully-connected)), and the
 * builders of the zoo's architectures.
 *
 * Errors are sticky: the first failure is recorded in the builder and
 * every later call returns -1 without doing anything, so an architecture
 * reads as straight-line code and checks zoo_finish() once at the end.
 * Value ids are >= 0; -1 means "something already failed".
 *
 * Names: every node is given a name (its output value carries the same
 * name); parameters are "<layer>.weight", "<layer>.bias" and so on, in the
 * style of PyTorch state-dict keys.
 */
#ifndef XF_MODELZOO_BUILDER_INTERNAL_H
#define XF_MODELZOO_BUILDER_INTERNAL_H

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

#include "ir/ir.h"
#include "modelzoo/modelzoo.h"

/* "<prefix>.<suffix>" written into the char array `buf`; evaluates to buf. */
#define ZB_SUB(buf, prefix, suffix) \
    (snprintf((buf), sizeof(buf), "%s.%s", (prefix), (suffix)), (buf))

/* Parameter bytes one model may hold (64 GiB): a bound against sizes
 * typed by mistake. Models over protobuf's 2 GiB are written with their
 * weights in an external data file (onnx.h). */
#define ZB_MAX_PARAM_BYTES ((size_t)64 << 30)
/* Elements any input or intermediate tensor may have. */
#define ZB_MAX_ELEMENTS ((int64_t)1 << 40)

typedef struct zb {
    xf_graph *g;
    xf_rng rng;
    xf_error *err; /* never NULL */
    xf_status st;  /* first failure, XF_OK while building */
    size_t param_bytes;
} zb;

/* Starts building into the empty graph `g` named `name`; `err` must not
 * be NULL. */
void zoo_init(zb *b, xf_graph *g, const char *name, uint64_t seed, xf_error *err);
/* XF_OK, or the first failure (the graph is then to be freed). */
xf_status zoo_finish(zb *b);
/* Records a failure (when none is recorded yet) and returns -1. */
int zoo_fail(zb *b, xf_status code, const char *fmt, ...) XF_PRINTF(3, 4);

/* Shape of value v (v must be valid). */
const xf_shape *zoo_shape(const zb *b, int v);

int zoo_input(zb *b, const char *name, xf_dtype dt, int rank, const int64_t *dims);
/* Marks v as a graph output, renaming it to `name`. */
void zoo_output(zb *b, int v, const char *name);

/* float32 parameter filled uniformly from [-bound, bound). */
int zoo_param(zb *b, const char *name, int rank, const int64_t *dims, float bound);
/* float32 parameter filled uniformly from [lo, hi). */
int zoo_param_range(zb *b, const char *name, int rank, const int64_t *dims, float lo, float hi);
/* rank-0 float32 constant. */
int zoo_scalar(zb *b, const char *name, float value);
/* int64 constant of the given shape holding v[0..numel). */
int zoo_ints(zb *b, const char *name, int rank, const int64_t *dims, const int64_t *v);

/* A node with one output named `name`; params NULL for defaults. */
int zoo_node(zb *b, xf_op op, const xf_params *p, const int *in, int n_in, const char *name);
/* Split of x along `axis` into n parts of the given sizes; the outputs'
 * ids go to out[0..n) (all -1 on failure). Returns out[0]. */
int zoo_split(zb *b, int x, int axis, int n, const int64_t *sizes, const char *name, int *out);
int zoo_unary(zb *b, xf_op op, int x, const char *name);
int zoo_binary(zb *b, xf_op op, int x, int y, const char *name);

/* ------------------------------------------------------------ CNN layers */

/* Conv2d "<name>" with weight "<name>.weight" [out_ch, C, k, k] (He-uniform)
 * and, when `bias`, "<name>.bias" [out_ch]. */
int zoo_conv(zb *b, int x, const char *name, int64_t out_ch, int k, int stride, int pad, int bias);
/* BatchNormalization "<name>" (epsilon 1e-5) with random "<name>.weight",
 * ".bias", ".running_mean" and a positive ".running_var". */
int zoo_batchnorm(zb *b, int x, const char *name);
int zoo_maxpool(zb *b, int x, const char *name, int k, int stride, int pad, int ceil_mode);
/* Flatten(axis 1). */
int zoo_flatten(zb *b, int x, const char *name);
/* Gemm "<name>" (transB) of x [M,K] with "<name>.weight" [out,K] and
 * "<name>.bias" [out], as torch.nn.Linear exports on 2-D inputs. */
int zoo_gemm(zb *b, int x, const char *name, int64_t out);

/* ------------------------------------------------ the zoo's architectures */

/* Builders registered in zoo.c (resnet.c, squeezenet.c, bert.c, vit.c). */
xf_status zoo_build_resnet18(const xf_zoo_config *c, xf_graph *g, xf_error *err);
xf_status zoo_build_resnet34(const xf_zoo_config *c, xf_graph *g, xf_error *err);
xf_status zoo_build_resnet50(const xf_zoo_config *c, xf_graph *g, xf_error *err);
xf_status zoo_build_squeezenet(const xf_zoo_config *c, xf_graph *g, xf_error *err);
xf_status zoo_build_lookahead_transpose(const xf_zoo_config *c, xf_graph *g, xf_error *err);
xf_status zoo_build_bert(const xf_zoo_config *c, xf_graph *g, xf_error *err);
xf_status zoo_build_vit(const xf_zoo_config *c, xf_graph *g, xf_error *err);
xf_status zoo_build_gpt(const xf_zoo_config *c, xf_graph *g, xf_error *err);
xf_status zoo_build_gpt_tied(const xf_zoo_config *c, xf_graph *g, xf_error *err);

#endif /* XF_MODELZOO_BUILDER_INTERNAL_H */
