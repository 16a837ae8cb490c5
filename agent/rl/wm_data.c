/*
 * wm_data.c — the recorded rollouts the world model learns from: episodes
 * of latents, actions, rewards, done flags and the locations every rule
 * offers after each step, grown as the agent collects them; and the
 * warm-up's episodes, recorded over every rule of the rule set, mapped to
 * the agent's action set once it is chosen.
 */
#include "agent/rl/wm.h"

#include <stdlib.h>
#include <string.h>

void xf_wm_data_init(xf_wm_data *d, int D, int N)
{
    memset(d, 0, sizeof *d);
    d->D = D;
    d->N = N;
}

static void episode_free(xf_wm_episode *e)
{
    xf_free(e->z);
    xf_free(e->xfer);
    xf_free(e->loc);
    xf_free(e->reward);
    xf_free(e->done);
    xf_free(e->locs);
    memset(e, 0, sizeof *e);
}

void xf_wm_data_free(xf_wm_data *d)
{
    for (int i = 0; i < d->n; i++) episode_free(&d->ep[i]);
    xf_free(d->ep);
    xf_wm_data_init(d, d->D, d->N);
}

/* Room for `cap` steps in e (z gets cap + 1 rows). */
static xf_status episode_reserve(xf_wm_episode *e, int cap, int D, int N, xf_error *err)
{
    if (cap <= e->cap) return XF_OK;
    size_t c = (size_t)cap;
    float *z = xf_realloc(e->z, (c + 1) * (size_t)D * sizeof *z);
    if (z) e->z = z;
    int *xfer = z ? xf_realloc(e->xfer, c * sizeof *xfer) : NULL;
    if (xfer) e->xfer = xfer;
    int *loc = xfer ? xf_realloc(e->loc, c * sizeof *loc) : NULL;
    if (loc) e->loc = loc;
    float *reward = loc ? xf_realloc(e->reward, c * sizeof *reward) : NULL;
    if (reward) e->reward = reward;
    uint8_t *done = reward ? xf_realloc(e->done, c * sizeof *done) : NULL;
    if (done) e->done = done;
    uint16_t *locs = done ? xf_realloc(e->locs, c * (size_t)N * sizeof *locs) : NULL;
    if (locs) e->locs = locs;
    if (!locs) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory recording a rollout of %d steps", cap);
    e->cap = cap;
    return XF_OK;
}

xf_status xf_wm_data_begin(xf_wm_data *d, const float *z0, int *index, xf_error *err)
{
    if (d->n == d->cap) {
        int cap = d->cap ? 2 * d->cap : 64;
        xf_wm_episode *ep = xf_realloc(d->ep, (size_t)cap * sizeof *ep);
        if (!ep) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory recording rollouts");
        d->ep = ep;
        d->cap = cap;
    }
    xf_wm_episode *e = &d->ep[d->n];
    memset(e, 0, sizeof *e);
    xf_status st = episode_reserve(e, 16, d->D, d->N, err);
    if (st) {
        episode_free(e);
        return st;
    }
    memcpy(e->z, z0, (size_t)d->D * sizeof *z0);
    *index = d->n++;
    return XF_OK;
}

xf_status xf_wm_data_step(xf_wm_data *d, int xfer, int loc, float reward, int done,
                          const float *z, const uint16_t *locs, xf_error *err)
{
    if (d->n == 0) return XF_FAIL(err, XF_ERR_INVALID, "rollout step recorded before an episode");
    xf_wm_episode *e = &d->ep[d->n - 1];
    if (e->T == e->cap) {
        xf_status st = episode_reserve(e, 2 * e->cap, d->D, d->N, err);
        if (st) return st;
    }
    int t = e->T;
    e->xfer[t] = xfer;
    e->loc[t] = loc;
    e->reward[t] = reward;
    e->done[t] = (uint8_t)(done != 0);
    memcpy(e->z + (size_t)(t + 1) * (size_t)d->D, z, (size_t)d->D * sizeof *z);
    memcpy(e->locs + (size_t)t * (size_t)d->N, locs, (size_t)d->N * sizeof *locs);
    e->T++;
    d->steps++;
    return XF_OK;
}

xf_status xf_wm_data_add_mapped(xf_wm_data *dst, const xf_wm_data *src, const xf_actions *act,
                                xf_error *err)
{
    uint16_t *locs = xf_malloc((size_t)(act->M > 0 ? act->M : 1) * sizeof *locs);
    if (!locs) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory mapping recorded rollouts");
    xf_status st = XF_OK;
    for (int i = 0; !st && i < src->n; i++) {
        const xf_wm_episode *e = &src->ep[i];
        int idx;
        st = xf_wm_data_begin(dst, e->z, &idx, err);
        for (int t = 0; !st && t < e->T; t++) {
            int x = e->xfer[t] >= 0 && e->xfer[t] <= act->n_env ? act->agent[e->xfer[t]] : -1;
            if (x < 0) break;
            const uint16_t *el = e->locs + (size_t)t * (size_t)src->N;
            for (int j = 0; j < act->M; j++) locs[j] = el[act->env[j]];
            st = xf_wm_data_step(dst, x, e->loc[t], e->reward[t], e->done[t],
                                 e->z + (size_t)(t + 1) * (size_t)src->D, locs, err);
        }
    }
    xf_free(locs);
    return st;
}
