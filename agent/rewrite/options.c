/*
 * options.c — defaults of the rewrite engine's option structs (rule set
 * loading, model preparation), in one place so the CLI, the benches and the
 * tests agree.
 */
#include "agent/rewrite/rewrite.h"

#include <string.h>

xf_ruleset_options xf_ruleset_options_default(void)
{
    xf_ruleset_options o;
    memset(&o, 0, sizeof o);
    o.status = 1; /* XF_RULE_PROVED */
    o.both_directions = 1;
    o.commutative = 1;
    return o;
}

xf_prepare_options xf_prepare_options_default(void)
{
    xf_prepare_options o;
    memset(&o, 0, sizeof o);
    o.fuse_layernorm = 1;
    o.scalar_mul = 1;
    o.narrow = 1;
    o.split_layout = 1;
    return o;
}
