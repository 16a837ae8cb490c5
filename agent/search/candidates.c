/*
 * candidates.c — the cheapest distinct graphs a search sees, kept for a
 * final arbiter that times them in the runtime the model will run in
 * (xf_search_options.candidates).
 *
 * The cost model ranks graphs by the sum of their operators' costs; the
 * runtime may fuse operators the cost model prices one by one, so its
 * fastest graph need not be the cheapest one. A search therefore hands out
 * its K cheapest distinct graphs besides the best, and always the start
 * graph (no rewrite), so that the arbiter can fall back to it. The list is
 * kept sorted by cost; a graph is offered once, when the search first sees
 * it, and copied (constants shared) only when it is kept. Distinct means
 * up to swapped operands of add, mul, min and max
 * (XF_HASH_IDENTITY_UNORDERED): a search that can swap operands sees many
 * graphs that differ only so (the modelzoo GPT's 19 cheapest were all one
 * model, swapped in other places), and the runtime runs them alike.
 */
#include <string.h>

#include "agent/search/search_internal.h"

void search_candidates_free(xf_search_result *res)
{
    for (int i = 0; i < res->n_candidates; i++) {
        xf_graph_free(&res->candidates[i].g);
        xf_free(res->candidates[i].applied);
    }
    xf_free(res->candidates);
    res->candidates = NULL;
    res->n_candidates = 0;
}

/* Slot to evict for a graph of cost ms: the costliest one that is not the
 * start graph, when it costs more than ms; -1 when nothing is evicted. */
static int evictee(const xf_search_ctx *c, double ms)
{
    const xf_search_result *res = c->res;
    for (int i = res->n_candidates - 1; i >= 0; i--) {
        if (c->cand_entry[i] == 0) continue;
        return res->candidates[i].ms > ms ? i : -1;
    }
    return -1;
}

static xf_status reserve(xf_search_ctx *c, int k, xf_error *err)
{
    xf_search_result *res = c->res;
    res->candidates = xf_calloc((size_t)k, sizeof *res->candidates);
    c->cand_entry = xf_calloc((size_t)k, sizeof *c->cand_entry);
    c->cand_hash = xf_calloc((size_t)k, sizeof *c->cand_hash);
    if (!res->candidates || !c->cand_entry || !c->cand_hash) {
        xf_free(res->candidates);
        xf_free(c->cand_entry);
        xf_free(c->cand_hash);
        res->candidates = NULL;
        c->cand_entry = NULL;
        c->cand_hash = NULL;
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory keeping the search's candidates");
    }
    return XF_OK;
}

xf_status search_offer(xf_search_ctx *c, const xf_graph *g, double ms, int entry,
                          xf_error *err)
{
    xf_search_result *res = c->res;
    int k = c->opt.candidates;
    if (k <= 0) return XF_OK;
    if (!res->candidates) {
        xf_status st = reserve(c, k, err);
        if (st) return st;
    }
    int slot = res->n_candidates < k ? res->n_candidates : evictee(c, ms);
    if (slot < 0) return XF_OK;
    uint64_t hash = 0;
    xf_status st = xf_graph_hash_checked(g, XF_HASH_IDENTITY_UNORDERED, &hash, err);
    if (st) return st;
    for (int i = 0; i < res->n_candidates; i++)
        if (c->cand_hash[i] == hash) return XF_OK;
    xf_graph copy;
    st = xf_graph_clone_shared(g, &copy, err);
    if (st) return st;
    if (slot < res->n_candidates) { /* evicted: close the gap */
        xf_graph_free(&res->candidates[slot].g);
        for (int i = slot; i + 1 < res->n_candidates; i++) {
            res->candidates[i] = res->candidates[i + 1];
            c->cand_entry[i] = c->cand_entry[i + 1];
            c->cand_hash[i] = c->cand_hash[i + 1];
        }
        res->n_candidates--;
    }
    int at = res->n_candidates;
    while (at > 0 && res->candidates[at - 1].ms > ms) {
        res->candidates[at] = res->candidates[at - 1];
        c->cand_entry[at] = c->cand_entry[at - 1];
        c->cand_hash[at] = c->cand_hash[at - 1];
        at--;
    }
    memset(&res->candidates[at], 0, sizeof res->candidates[at]);
    res->candidates[at].g = copy;
    res->candidates[at].ms = ms;
    c->cand_entry[at] = entry;
    c->cand_hash[at] = hash;
    res->n_candidates++;
    return XF_OK;
}

xf_status search_candidates_finish(xf_search_ctx *c, xf_error *err)
{
    xf_search_result *res = c->res;
    for (int i = 0; i < res->n_candidates; i++) {
        xf_search_candidate *cd = &res->candidates[i];
        xf_status st =
            search_trail_path(&c->trail, c->cand_entry[i], &cd->applied, &cd->n_applied, err);
        if (st) return st;
    }
    return XF_OK;
}
