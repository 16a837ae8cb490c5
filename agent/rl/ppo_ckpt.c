/*
 * ppo_ckpt.c — checkpoint files of the PPO agents: a small versioned header
 * with the sizes that shape the networks, the agent's action set as rule
 * database ids, the Adam step count, then the parameter store as
 * agent/nn/nn.h writes it (values and Adam moments).
 *
 *   "XFPPOAGT" | u32 XF_PPO_CKPT_VERSION | u32 n | n × (u32 size) |
 *   u32 M | M × (i64 rule id) | u64 adam step | xf_nn_params stream
 *
 * Also the little-endian field I/O every agent checkpoint uses (this one,
 * the action set's section and the world-model agent's, wm_ckpt.c).
 *
 * A checkpoint loads only into an agent whose sizes are all equal (so the
 * store's tensors match): a mismatch names the size and both values, which
 * says what to change (--locations, network sizes). The action count is not
 * a size: the loading agent builds its policy for the checkpoint's set.
 */
#include "agent/rl/ppo.h"

#include <errno.h>
#include <string.h>

#define MAGIC "XFPPOAGT"

int xf_ckpt_put_u32(FILE *f, uint32_t v)
{
    unsigned char b[4] = {(unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
                          (unsigned char)(v >> 24)};
    return fwrite(b, 1, 4, f) == 4;
}

int xf_ckpt_get_u32(FILE *f, uint32_t *v)
{
    unsigned char b[4];
    if (fread(b, 1, 4, f) != 4) return 0;
    *v = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    return 1;
}

int xf_ckpt_put_i64(FILE *f, int64_t v)
{
    uint64_t u = (uint64_t)v;
    return xf_ckpt_put_u32(f, (uint32_t)u) && xf_ckpt_put_u32(f, (uint32_t)(u >> 32));
}

int xf_ckpt_get_i64(FILE *f, int64_t *v)
{
    uint32_t lo, hi;
    if (!xf_ckpt_get_u32(f, &lo) || !xf_ckpt_get_u32(f, &hi)) return 0;
    *v = (int64_t)((uint64_t)hi << 32 | lo);
    return 1;
}

xf_status xf_ppo_ckpt_save(const char *path, const int *sizes, int n, const xf_actions *act,
                           int64_t adam_step, const xf_nn_params *p, xf_error *err)
{
    xf_outfile out;
    xf_status st = xf_outfile_open(&out, path, err);
    if (st != XF_OK) return st;
    FILE *f = out.f;
    int ok = fwrite(MAGIC, 1, 8, f) == 8 && xf_ckpt_put_u32(f, XF_PPO_CKPT_VERSION) &&
             xf_ckpt_put_u32(f, (uint32_t)n);
    for (int i = 0; ok && i < n; i++) ok = xf_ckpt_put_u32(f, (uint32_t)sizes[i]);
    ok = ok && xf_actions_write(f, act) && xf_ckpt_put_i64(f, adam_step);
    st = ok ? xf_nn_params_save(p, f, 1, path, err)
            : XF_FAIL(err, XF_ERR_IO, "cannot write checkpoint '%s': %s", path, strerror(errno));
    if (st != XF_OK) {
        xf_outfile_abort(&out);
        return st;
    }
    return xf_outfile_commit(&out, err);
}

xf_status xf_ppo_ckpt_open(const char *path, const char *const *names, const int *sizes, int n,
                           xf_actions *act, int64_t *adam_step, FILE **out, xf_error *err)
{
    *out = NULL;
    FILE *f;
    xf_status st0 = xf_infile_open(path, &f, err);
    if (st0 != XF_OK) {
        xf_error_prefix(err, "cannot read checkpoint");
        return st0;
    }
    char magic[8];
    uint32_t version = 0, count = 0;
    xf_status st = XF_OK;
    if (fread(magic, 1, 8, f) != 8 || memcmp(magic, MAGIC, 8) != 0)
        st = XF_FAIL(err, XF_ERR_PARSE, "'%s' is not a PPO agent checkpoint (bad magic)", path);
    else if (!xf_ckpt_get_u32(f, &version) || version != XF_PPO_CKPT_VERSION)
        st = XF_FAIL(err, XF_ERR_PARSE, "checkpoint '%s': version %u, this build reads %u", path,
                     version, XF_PPO_CKPT_VERSION);
    else if (!xf_ckpt_get_u32(f, &count) || count != (uint32_t)n)
        st = XF_FAIL(err, XF_ERR_PARSE, "checkpoint '%s': %u sizes in the header, expected %d",
                     path, count, n);
    for (int i = 0; !st && i < n; i++) {
        uint32_t v;
        if (!xf_ckpt_get_u32(f, &v))
            st = XF_FAIL(err, XF_ERR_PARSE, "checkpoint '%s' is truncated", path);
        else if (v != (uint32_t)sizes[i])
            st = XF_FAIL(err, XF_ERR_MISMATCH, "checkpoint '%s' has %s %u, this agent %d", path,
                         names[i], v, sizes[i]);
    }
    if (!st) st = xf_actions_read(f, path, act, err);
    if (!st && !xf_ckpt_get_i64(f, adam_step))
        st = XF_FAIL(err, XF_ERR_PARSE, "checkpoint '%s' is truncated", path);
    if (st) {
        fclose(f);
        return st;
    }
    *out = f;
    return XF_OK;
}
