/*
 * latency.c — xf_agent_latency_pair: the end-to-end latency of a model and
 * its optimised version on a cost-model backend's executor, the figure
 * rlflow-agent reports beside the cost model's estimate.
 */
#include <stdlib.h>

#include "agent/search/search.h"

/* Both models are prepared once and timed in alternation, LATENCY_ROUNDS
 * rounds of a 10-run median each; the smallest median of each model is
 * reported. Alternating and taking the minimum keeps a burst of load from
 * other processes from landing on one model only; the spread of each
 * model's medians says how far apart two timings of one model can be. */
#define LATENCY_ROUNDS 5

xf_status xf_agent_latency_pair(xf_cost_model *cm, const xf_graph *a, const xf_graph *b,
                                double *ms_a, double *ms_b, double *spread, xf_error *err)
{
    const xf_graph *g[2] = {a, b};
    xf_exec *e[2] = {NULL, NULL};
    xf_tensor *in[2] = {xf_tensor_array_alloc(a->n_inputs), xf_tensor_array_alloc(b->n_inputs)};
    double best[2] = {0, 0}, worst[2] = {0, 0};
    xf_status st = XF_OK;
    if (!in[0] || !in[1]) st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory for the latency run");
    for (int k = 0; k < 2 && !st; k++) {
        st = xf_exec_prepare(cm, g[k], &e[k], err);
        if (!st) st = xf_graph_random_inputs(g[k], 1, in[k], err);
    }
    for (int r = 0; r < LATENCY_ROUNDS && !st; r++)
        for (int k = 0; k < 2 && !st; k++) {
            double ms = 0;
            st = xf_exec_latency(e[k], in[k], g[k]->n_inputs, r == 0 ? 3 : 1, 10, &ms, err);
            if (!st && (r == 0 || ms < best[k])) best[k] = ms;
            if (!st && (r == 0 || ms > worst[k])) worst[k] = ms;
        }
    for (int k = 0; k < 2; k++) {
        xf_tensor_array_free(in[k], g[k]->n_inputs);
        xf_exec_free(e[k]);
    }
    *ms_a = best[0];
    *ms_b = best[1];
    *spread = 0;
    for (int k = 0; k < 2; k++)
        if (best[k] > 0 && (worst[k] - best[k]) / best[k] > *spread)
            *spread = (worst[k] - best[k]) / best[k];
    return st;
}
