/*
 * options.c — defaults of model preparation's options, in one place so the
 * optimiser, the benches and the tests agree.
 */
#include "agent/rewrite/rewrite.h"

#include <string.h>

xf_prepare_options xf_prepare_options_default(void)
{
    xf_prepare_options o;
    memset(&o, 0, sizeof o);
    o.fuse_layernorm = 1;
    o.fuse_gelu = 1;
    o.scalar_mul = 1;
    o.narrow = 1;
    o.split_layout = 1;
    return o;
}
