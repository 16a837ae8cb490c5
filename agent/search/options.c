/*
 * options.c — defaults of the environment's and the searches' option
 * structs and the names of the search baselines, in one place so the CLI,
 * the benches and the tests agree.
 */
#include "agent/search/search.h"

#include <string.h>

xf_env_options xf_env_options_default(void)
{
    xf_env_options o;
    memset(&o, 0, sizeof o);
    o.max_locations = 200;
    o.max_steps = 200;
    o.reward_runtime = 1.0;
    o.reward_memory = 0.0;
    o.invalid_penalty = -1.0;
    o.prepare = xf_prepare_options_default();
    o.reward_target = 1.0;
    return o;
}

xf_search_options xf_search_options_default(void)
{
    xf_search_options o;
    memset(&o, 0, sizeof o);
    o.alpha = 1.05;
    o.budget = 1000;
    o.size_cap = 2.0;
    o.seed = 1;
    o.max_locations = 200;
    o.lookahead = 1;
    return o;
}

static const char *const kind_names[XF_SEARCH_KIND_COUNT] = {"random", "greedy", "taso",
                                                                   "exhaustive"};

const char *xf_search_kind_name(xf_search_kind k)
{
    return (k >= 0 && k < XF_SEARCH_KIND_COUNT) ? kind_names[k] : "?";
}

xf_status xf_search_kind_parse(const char *name, xf_search_kind *out, xf_error *err)
{
    for (int k = 0; k < XF_SEARCH_KIND_COUNT; k++) {
        if (name && strcmp(name, kind_names[k]) == 0) {
            *out = (xf_search_kind)k;
            return XF_OK;
        }
    }
    return XF_FAIL(err, XF_ERR_INVALID, "unknown search '%s': use random, greedy, taso or exhaustive",
                   name ? name : "(null)");
}
