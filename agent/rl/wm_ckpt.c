/*
 * wm_ckpt.c — checkpoint files of the world-model agent: a versioned header
 * with the sizes that shape its networks, the latent standardisation, the
 * Adam step counts, then its three parameter stores as agent/nn/nn.h writes
 * them (the fixed GNN encoder without Adam moments, the world model and the
 * controller with them).
 *
 *   "XFWMAGNT" | u32 XF_WM_CKPT_VERSION | u32 n | n × (u32 size) |
 *   u32 M | M × (i64 rule id) |
 *   u32 normalised | f32 z_mean[D] | f32 z_std[D] | f32 reward_scale |
 *   u64 world-model Adam step | u64 controller Adam step |
 *   GNN store | world-model store | controller store
 *
 * A checkpoint loads only into an agent whose sizes are all equal; a
 * mismatch names the size and both values. The action set is not a size:
 * its rule ids are mapped through the environment's rule set, and the
 * world model and controller are built for it before their stores are
 * read. A load that fails part-way leaves the agent as it was.
 */
#include "agent/rl/wm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC "XFWMAGNT"
#define N_SIZES 11

static const char *const size_names[N_SIZES] = {
    "max locations",  "GNN hidden width",   "GNN latent",     "GNN rounds",
    "GNN MLP layers", "LSTM units",         "mixture components", "xfer embedding",
    "PPO hidden",     "PPO trunk layers",   "PPO rule embedding"};

static void sizes_of(const xf_wm_agent *a, uint32_t *s)
{
    const xf_wm_agent_options *o = &a->opt;
    int v[N_SIZES] = {a->max_locations, o->gnn.hidden, o->gnn.latent,     o->gnn.rounds,
                      o->gnn.mlp_layers, o->wm_hidden, o->n_mix,          o->wm_embed,
                      o->hp.hidden,      o->hp.trunk_layers, o->hp.embed};
    for (int i = 0; i < N_SIZES; i++) s[i] = (uint32_t)v[i];
}

static int put_floats(FILE *f, const float *x, int n)
{
    int ok = 1;
    for (int i = 0; ok && i < n; i++) {
        uint32_t u;
        memcpy(&u, &x[i], 4);
        ok = xf_ckpt_put_u32(f, u);
    }
    return ok;
}

static int get_floats(FILE *f, float *x, int n)
{
    int ok = 1;
    for (int i = 0; ok && i < n; i++) {
        uint32_t u = 0;
        ok = xf_ckpt_get_u32(f, &u);
        memcpy(&x[i], &u, 4);
    }
    return ok;
}

xf_status xf_wm_agent_save(const xf_wm_agent *a, const char *path, xf_error *err)
{
    if (!a->built)
        return XF_FAIL(err, XF_ERR_INVALID,
                       "world-model agent: nothing to save to '%s': the agent has no actions yet "
                       "(train or load it first)",
                       path);
    xf_outfile out;
    xf_status st = xf_outfile_open(&out, path, err);
    if (st != XF_OK) return st;
    FILE *f = out.f;
    uint32_t s[N_SIZES];
    sizes_of(a, s);
    int D = a->opt.gnn.latent;
    int ok = fwrite(MAGIC, 1, 8, f) == 8 && xf_ckpt_put_u32(f, XF_WM_CKPT_VERSION) &&
             xf_ckpt_put_u32(f, N_SIZES);
    for (int i = 0; ok && i < N_SIZES; i++) ok = xf_ckpt_put_u32(f, s[i]);
    ok = ok && xf_actions_write(f, &a->act) && xf_ckpt_put_u32(f, (uint32_t)a->normalised) &&
         put_floats(f, a->z_mean, D) && put_floats(f, a->z_std, D) &&
         put_floats(f, &a->reward_scale, 1) && xf_ckpt_put_i64(f, a->wm_adam.step) &&
         xf_ckpt_put_i64(f, a->ctl_adam.step);
    st = ok ? XF_OK
            : XF_FAIL(err, XF_ERR_IO, "cannot write checkpoint '%s': %s", path, strerror(errno));
    if (!st) st = xf_nn_params_save(&a->gnn_p, f, 0, path, err);
    if (!st) st = xf_nn_params_save(&a->wm_p, f, 1, path, err);
    if (!st) st = xf_nn_params_save(&a->ctl_p, f, 1, path, err);
    if (st != XF_OK) {
        xf_outfile_abort(&out);
        return st;
    }
    return xf_outfile_commit(&out, err);
}

/* Values and Adam moments of a store, to put back after a failed load. */
typedef struct snapshot {
    float *buf;
    size_t n;
} snapshot;

static int snap_take(snapshot *s, const xf_nn_params *p)
{
    s->n = xf_nn_params_total(p);
    s->buf = xf_malloc((3 * s->n + 1) * sizeof *s->buf);
    if (!s->buf) return 0;
    memcpy(s->buf, p->value, s->n * sizeof *s->buf);
    memcpy(s->buf + s->n, p->m, s->n * sizeof *s->buf);
    memcpy(s->buf + 2 * s->n, p->v, s->n * sizeof *s->buf);
    return 1;
}

static void snap_restore(const snapshot *s, xf_nn_params *p)
{
    memcpy(p->value, s->buf, s->n * sizeof *s->buf);
    memcpy(p->m, s->buf + s->n, s->n * sizeof *s->buf);
    memcpy(p->v, s->buf + 2 * s->n, s->n * sizeof *s->buf);
}

/* Reads and checks the header; act gets the action ids (unbound), stats
 * z_mean[D] | z_std[D] | reward_scale. */
static xf_status read_header(FILE *f, const xf_wm_agent *a, const char *path, xf_actions *act,
                             uint32_t *norm, float *stats, int64_t *steps, xf_error *err)
{
    char magic[8];
    uint32_t version = 0, count = 0, want[N_SIZES];
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, MAGIC, 8) != 0)
        return XF_FAIL(err, XF_ERR_PARSE, "'%s' is not a world-model agent checkpoint (bad magic)",
                       path);
    if (!xf_ckpt_get_u32(f, &version) || version != XF_WM_CKPT_VERSION)
        return XF_FAIL(err, XF_ERR_PARSE, "checkpoint '%s': version %u, this build reads %u", path,
                       version, XF_WM_CKPT_VERSION);
    if (!xf_ckpt_get_u32(f, &count) || count != N_SIZES)
        return XF_FAIL(err, XF_ERR_PARSE, "checkpoint '%s': %u sizes in the header, expected %d",
                       path, count, N_SIZES);
    sizes_of(a, want);
    for (int i = 0; i < N_SIZES; i++) {
        uint32_t v;
        if (!xf_ckpt_get_u32(f, &v))
            return XF_FAIL(err, XF_ERR_PARSE, "checkpoint '%s' is truncated", path);
        if (v != want[i])
            return XF_FAIL(err, XF_ERR_MISMATCH,
                           "checkpoint '%s' was saved with %s %u, this agent has %u", path,
                           size_names[i], v, want[i]);
    }
    xf_status st = xf_actions_read(f, path, act, err);
    if (st) return st;
    int D = a->opt.gnn.latent;
    if (!xf_ckpt_get_u32(f, norm) || !get_floats(f, stats, 2 * D + 1) ||
        !xf_ckpt_get_i64(f, &steps[0]) || !xf_ckpt_get_i64(f, &steps[1]))
        return XF_FAIL(err, XF_ERR_PARSE, "checkpoint '%s' is truncated", path);
    for (int d = 0; d <= D; d++)
        if (!(stats[D + d] > 0))
            return XF_FAIL(err, XF_ERR_PARSE, "checkpoint '%s': scale %d of the latents and reward "
                           "is %g, must be > 0", path, d, (double)stats[D + d]);
    return XF_OK;
}

xf_status xf_wm_agent_load(xf_wm_agent *a, const char *path, const xf_env *e, xf_error *err)
{
    FILE *f;
    xf_status st0 = xf_infile_open(path, &f, err);
    if (st0 != XF_OK) {
        xf_error_prefix(err, "cannot read checkpoint");
        return st0;
    }
    int D = a->opt.gnn.latent;
    float *stats = xf_malloc((2 * (size_t)D + 1) * sizeof *stats);
    snapshot snap = {NULL, 0};
    xf_actions act;
    xf_actions_init(&act);
    xf_status st = stats && snap_take(&snap, &a->gnn_p)
                       ? XF_OK
                       : XF_FAIL(err, XF_ERR_NOMEM, "out of memory loading '%s'", path);
    uint32_t norm = 0;
    int64_t steps[2] = {0, 0};
    if (!st) st = read_header(f, a, path, &act, &norm, stats, steps, err);
    act.partial = a->opt.transfer;
    if (!st) {
        st = xf_actions_bind(&act, xf_env_ruleset(e), err);
        if (st) xf_error_prefix(err, "checkpoint '%s'", path);
    }
    /* The new networks' initial values are overwritten: a generator of its
     * own leaves the agent's random stream as it was. */
    xf_rng rng;
    xf_rng_seed(&rng, a->opt.seed);
    xf_nn_params wm_p, ctl_p;
    xf_wm wm;
    xf_ppo_net ctl;
    int made = 0, gnn_read = 0;
    if (!st) {
        st = xf_wm_agent_nets(a, act.M, &rng, &wm_p, &wm, &ctl_p, &ctl, err);
        made = !st;
    }
    if (!st) {
        st = xf_nn_params_load(&a->gnn_p, f, path, err);
        gnn_read = 1;
    }
    if (!st) st = xf_nn_params_load(&wm_p, f, path, err);
    if (!st) st = xf_nn_params_load(&ctl_p, f, path, err);
    if (st && gnn_read) snap_restore(&snap, &a->gnn_p);
    if (!st) {
        made = 0;
        st = xf_wm_agent_install(a, &act, &wm_p, &wm, &ctl_p, &ctl, err);
    }
    if (!st) {
        a->normalised = norm != 0;
        memcpy(a->z_mean, stats, (size_t)D * sizeof *stats);
        memcpy(a->z_std, stats + D, (size_t)D * sizeof *stats);
        a->reward_scale = stats[2 * D];
        a->wm_adam.step = steps[0];
        a->ctl_adam.step = steps[1];
    }
    if (made) {
        xf_nn_params_free(&wm_p);
        xf_nn_params_free(&ctl_p);
    }
    xf_actions_free(&act);
    xf_free(snap.buf);
    xf_free(stats);
    fclose(f);
    return st;
}
