/*
 * ckpt_actions.c — what a learning agent's checkpoint says before any
 * network is built: which agent saved it (PPO or world model) and its
 * action set as rule database ids (agent/rl/rl.h, xf_rl_ckpt_actions).
 *
 * Both checkpoint formats (ppo_ckpt.c, wm_ckpt.c) begin alike: 8 bytes of
 * magic, u32 version (2), u32 n, n × u32 sizes, then the action section
 * (xf_actions_write). A caller that knows the rules database checks the
 * ids against it before loading, so that a rule missing from the database
 * is an error naming the rule, while a rule that cannot match the model at
 * hand is only unavailable there (xf_actions.partial).
 */
#include "rl.h"

#include <string.h>

/* Sizes beyond this are a corrupt header. */
#define MAX_SIZES 64

xf_status xf_rl_ckpt_actions(const char *path, int *wm, xf_actions *act, xf_error *err)
{
    FILE *f;
    xf_status st = xf_infile_open(path, &f, err);
    if (st != XF_OK) {
        xf_error_prefix(err, "cannot read checkpoint");
        return st;
    }
    char magic[8];
    uint32_t version = 0, n = 0;
    if (fread(magic, 1, 8, f) != 8 ||
        (memcmp(magic, "XFPPOAGT", 8) != 0 && memcmp(magic, "XFWMAGNT", 8) != 0))
        st = XF_FAIL(err, XF_ERR_PARSE,
                     "'%s' is not an agent checkpoint (bad magic: neither a PPO nor a "
                     "world-model agent's)",
                     path);
    else if (!xf_ckpt_get_u32(f, &version) ||
             version != (memcmp(magic, "XFWMAGNT", 8) == 0 ? XF_WM_CKPT_VERSION
                                                             : XF_PPO_CKPT_VERSION))
        st = XF_FAIL(err, XF_ERR_PARSE, "checkpoint '%s': version %u, this build reads %u", path,
                     version,
                     memcmp(magic, "XFWMAGNT", 8) == 0 ? XF_WM_CKPT_VERSION : XF_PPO_CKPT_VERSION);
    else if (!xf_ckpt_get_u32(f, &n) || n > MAX_SIZES)
        st = XF_FAIL(err, XF_ERR_PARSE, "checkpoint '%s': %u sizes in the header (corrupt)", path,
                     n);
    for (uint32_t i = 0; !st && i < n; i++) {
        uint32_t v;
        if (!xf_ckpt_get_u32(f, &v))
            st = XF_FAIL(err, XF_ERR_PARSE, "checkpoint '%s' is truncated", path);
    }
    if (!st) st = xf_actions_read(f, path, act, err);
    if (!st) *wm = memcmp(magic, "XFWMAGNT", 8) == 0;
    fclose(f);
    return st;
}
