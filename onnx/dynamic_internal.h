/*
 * dynamic_internal.h — private to onnx/: the layout of xf_onnx_dynamic
 * (onnx.h), shared by its construction (dynamic.c) and the exporter that
 * follows the symbols through a graph (export_dyn.c).
 *
 * Probes: probe k (0 <= k < 2 * n_sym) puts symbol k / 2 at its size of
 * point 1 + k % 2 and every other symbol at point 0. For each probe the
 * original model was imported and the shape of every named value kept, so
 * the exporter can look up what the model itself computes at that size
 * (a Reshape target folded from a shape subgraph, an opaque node's output)
 * where inference from the rewritten graph alone would be ambiguous.
 */
#ifndef XF_ONNX_DYNAMIC_INTERNAL_H
#define XF_ONNX_DYNAMIC_INTERNAL_H

#include "import_internal.h"

/* A symbolic dim on a graph input, or a named dim on a graph output. */
typedef struct dyn_at {
    const char *value; /* input or output name (arena) */
    int input;        /* inputs: its position among the graph inputs without an
                         initializer (the test_data_set file input_<input>.pb) */
    int axis;
    int sym;          /* symbol index (inputs); -1 on outputs */
    const char *name; /* the dim_param (outputs) */
} dyn_at;

/* Shapes of the original's named values at one probe. */
typedef struct dyn_probe {
    imp_map index; /* value name -> entry of shapes */
    xf_shape *shapes;
    int n, cap;
} dyn_probe;

struct xf_onnx_dynamic {
    xf_arena arena;                /* names */
    xf_onnx_options opts;          /* as opened, without dim overrides */
    int n_sym;
    const char **names;            /* per symbol */
    const char **fixed;            /* per symbol: why it is written fixed, NULL: kept */
    int64_t *sizes;                /* n_sym * XF_ONNX_POINTS: sizes[sym * POINTS + point] */
    int64_t *point_values;         /* n_sym * XF_ONNX_POINTS: by point, for the options */
    dyn_at *inputs, *outputs;
    int n_inputs, n_outputs;
    dyn_probe *probes;             /* 2 * n_sym, then point 0 */
};

/* Reads the symbols of the model in buf into a new description (names
 * and where they are; no sizes yet): the first step of
 * xf_onnx_dynamic_open, also used to choose sizes (sizes.c). */
xf_status ox_dyn_read(const void *buf, size_t len, const char *name, xf_onnx_dynamic **out,
                           xf_error *err);

/* Writes symbol `sym` fixed at its point-0 size from now on (its probes
 * become point 0), saying why in a warning and in xf_onnx_dynamic_fixed. */
xf_status ox_dyn_fix(xf_onnx_dynamic *d, const char *model, int sym, const char *why,
                          xf_error *err);

/* "N=2, H=192" for one size of each symbol (values[sym]). */
void ox_dyn_describe_sizes(const xf_onnx_dynamic *d, const int64_t *values, char *buf,
                                size_t n);

/* Size of symbol `sym` at probe `k`. */
int64_t ox_dyn_probe_size(const xf_onnx_dynamic *d, int sym, int k);
/* The original's shape of value `name` at probe k, or NULL when the
 * original has no such value or its shape at point 0 is not `at0` (then
 * the name is on another tensor). */
const xf_shape *ox_dyn_probe_shape(const xf_onnx_dynamic *d, int k, const char *name,
                                        const xf_shape *at0);

#endif /* XF_ONNX_DYNAMIC_INTERNAL_H */
