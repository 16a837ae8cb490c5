/*
 * fuzz_import.c — libFuzzer harness for the ONNX importer and for what the
 * tools do next with the graph: any byte string must either import into a
 * graph that validates, or fail with an error status; never crash, hang,
 * leak or touch memory out of bounds. When the import succeeds, the graph
 * is exported again (the exporter on whatever the importer accepted) and
 * run as `xfonnx run` would: the memory-limit check, then random inputs
 * and the reference interpreter (the limit is 1 MiB here, so every graph
 * over it is refused by the check and every run stays fast).
 *
 * The symbolic dimensions of the graph inputs ("batch", "N", ...) are also
 * sized as `--dim NAME=V` would size them, with values picked by the
 * input's hash among ordinary and hostile sizes (0, 1, 3, 999999999, 2^32+1,
 * 2^62+1, INT64_MAX, -1, ...), and the sized graph goes the same way.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ir/ir.h"
#include "onnx.pb-c.h"
#include "onnx/onnx.h"

#define MAX_NAMES 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Random inputs and one interpreter run of g, within the memory limit. */
static void run_graph(const xf_graph *g)
{
    xf_error err;
    if (xf_graph_mem_check(g, &err) != XF_OK) return;
    for (int i = 0; i < g->n_nodes; i++)
        if (g->nodes[i].op == XF_OP_OPAQUE) return;
    xf_tensor *in = xf_tensor_array_alloc(g->n_inputs);
    xf_tensor *out = xf_tensor_array_alloc(g->n_outputs);
    if (in && out && xf_graph_random_inputs(g, 1, in, &err) == XF_OK)
        (void)xf_interp_run(g, in, g->n_inputs, out, &err);
    xf_tensor_array_free(in, g->n_inputs);
    xf_tensor_array_free(out, g->n_outputs);
}

/* Import (with `o`, may be NULL), validate, export, run; 0 when the
 * importer refused the bytes as nested too deep to decode (then nothing
 * here may decode them either). */
static int import_and_use(const uint8_t *data, size_t size, const xf_onnx_options *o)
{
    xf_graph g;
    xf_error err;
    if (xf_onnx_load_buffer(data, size, "fuzz.onnx", NULL, o, &g, &err) != XF_OK)
        return !strstr(err.msg, "nest deeper than");
    if (xf_graph_validate(&g, &err) != XF_OK) abort(); /* import must only return valid graphs */
    uint8_t *buf = NULL;
    size_t len = 0;
    if (xf_onnx_save_buffer(&g, &buf, &len, &err) == XF_OK) xf_free(buf);
    run_graph(&g);
    xf_graph_free(&g);
    return 1;
}

/* The distinct dim_param names of the graph inputs, at most MAX_NAMES;
 * they point into m. */
static int symbolic_names(const Onnx__ModelProto *m, const char **names)
{
    int n = 0;
    if (!m->graph) return 0;
    for (size_t i = 0; i < m->graph->n_input; i++) {
        const Onnx__ValueInfoProto *vi = m->graph->input[i];
        if (!vi || !vi->type || vi->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
            !vi->type->tensor_type || !vi->type->tensor_type->shape)
            continue;
        const Onnx__TensorShapeProto *sh = vi->type->tensor_type->shape;
        for (size_t d = 0; d < sh->n_dim && n < MAX_NAMES; d++) {
            const Onnx__TensorShapeProto__Dimension *dim = sh->dim[d];
            if (!dim || dim->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ||
                !dim->dim_param || !*dim->dim_param)
                continue;
            const char *p = dim->dim_param;
            int seen = 0;
            for (int k = 0; k < n && !seen; k++) seen = strcmp(names[k], p) == 0;
            if (!seen) names[n++] = p;
        }
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready = 0;
    if (!ready) {
        xf_log_set_level(XF_LOG_OFF);
        xf_mem_limit_set((size_t)1 << 20);
        ready = 1;
    }
    if (!import_and_use(data, size, NULL)) return 0;

    Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, size, data);
    if (!m) return 0;
    const char *names[MAX_NAMES];
    int n = symbolic_names(m, names);
    if (n > 0) {
        static const int64_t sizes[] = {0,
                                        1,
                                        2,
                                        3,
                                        7,
                                        64,
                                        4096,
                                        999999999,
                                        (int64_t)1 << 31,
                                        ((int64_t)1 << 32) + 1,
                                        ((int64_t)1 << 62) + 1,
                                        INT64_MAX,
                                        -1,
                                        INT64_MIN};
        uint64_t h = 1469598103934665603u; /* FNV-1a of the input picks the sizes */
        for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 1099511628211u;
        int64_t values[MAX_NAMES];
        for (int k = 0; k < n; k++, h >>= 4) values[k] = sizes[h % (sizeof sizes / sizeof *sizes)];
        xf_onnx_options o = xf_onnx_default_options();
        o.n_dim_overrides = n;
        o.dim_names = names;
        o.dim_values = values;
        import_and_use(data, size, &o);
    }
    onnx__model_proto__free_unpacked(m, NULL);
    return 0;
}
