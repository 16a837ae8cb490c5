/*
 * graph_inputs.c — deterministic random inputs for a graph, used wherever
 * two models are compared on "the same random inputs" (round trips, tools,
 * benchmarks). Integer inputs that index a Gather stay inside its table.
 * A graph whose tensors exceed the memory limit gets none: it could not run.
 */
#include "ir.h"

#include <string.h>

static int64_t int_bound(const xf_graph *g, int value)
{
    int64_t bound = -1;
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *n = &g->nodes[i];
        if (n->op != XF_OP_GATHER || n->n_inputs < 2 || n->inputs[1] != value) continue;
        const xf_shape *ds = &g->values[n->inputs[0]].shape;
        int axis = n->params.axis < 0 ? n->params.axis + ds->rank : n->params.axis;
        if (axis < 0 || axis >= ds->rank) continue;
        if (bound < 0 || ds->dims[axis] < bound) bound = ds->dims[axis];
    }
    return bound > 0 ? bound : 2;
}

xf_status xf_graph_random_inputs(const xf_graph *g, uint64_t seed, xf_tensor *inputs,
                                 xf_error *err)
{
    xf_status st = xf_graph_mem_check(g, err);
    if (st != XF_OK) return st;
    xf_rng r;
    xf_rng_seed(&r, seed);
    for (int i = 0; i < g->n_inputs; i++) {
        const xf_value *v = &g->values[g->inputs[i]];
        st = xf_tensor_alloc(&inputs[i], v->dtype, &v->shape, err);
        if (st != XF_OK) {
            for (int j = 0; j < i; j++) xf_tensor_free(&inputs[j]);
            return st;
        }
        int64_t n = xf_shape_numel(&v->shape);
        uint64_t hi = (uint64_t)int_bound(g, g->inputs[i]);
        for (int64_t k = 0; k < n; k++) {
            switch (v->dtype) {
            case XF_F32: ((float *)inputs[i].data)[k] = xf_rng_uniform(&r, -1.0f, 1.0f); break;
            case XF_I64: ((int64_t *)inputs[i].data)[k] = (int64_t)(xf_rng_next(&r) % hi); break;
            case XF_I32: ((int32_t *)inputs[i].data)[k] = (int32_t)(xf_rng_next(&r) % hi); break;
            case XF_BOOL: ((uint8_t *)inputs[i].data)[k] = (uint8_t)(xf_rng_next(&r) & 1); break;
            case XF_F16:
                ((uint16_t *)inputs[i].data)[k] = xf_f32_to_f16(xf_rng_uniform(&r, -1.0f, 1.0f));
                break;
            case XF_F64: ((double *)inputs[i].data)[k] = xf_rng_uniform(&r, -1.0f, 1.0f); break;
            case XF_I8: ((int8_t *)inputs[i].data)[k] = (int8_t)(xf_rng_next(&r) % 256u); break;
            case XF_U8: ((uint8_t *)inputs[i].data)[k] = (uint8_t)(xf_rng_next(&r) % 256u); break;
            default: break;
            }
        }
    }
    return XF_OK;
}
