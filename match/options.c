/*
 * options.c — defaults of rule set loading, in one place so the optimiser,
 * the deriver, the benches and the tests agree.
 */
#include "match/match.h"

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
