/*
 * checkpoint.c — a learning agent's checkpoint checked before the model is
 * loaded (xf_optimize_file with options.load): which agent saved it (the
 * checkpoint decides which agent runs), and whether every rule it acts
 * with is in the rules database. A rule id the database lacks means the
 * agent was trained with another database: an error naming the id and
 * both files. A rule the database has but that cannot match this model
 * (the rule set is restricted to the model) is only unavailable to the
 * agent here, which the report's agent line counts; a model it never saw
 * is what a pre-trained agent is for.
 */
#include "optimize_internal.h"

#include <stdlib.h>

#include "rulesdb/rulesdb.h"

xf_status opt_check_checkpoint(opt_run *s, xf_error *err)
{
    xf_optimize_options *o = &s->o;
    xf_actions act;
    xf_actions_init(&act);
    int wm = 0;
    xf_status st = xf_rl_ckpt_actions(o->load, &wm, &act, err);
    if (st) {
        xf_actions_free(&act);
        return st;
    }
    xf_optimize_agent kind = wm ? XF_OPTIMIZE_WM : XF_OPTIMIZE_PPO;
    if (o->agent != kind)
        opt_note(s, XF_OPTIMIZE_INFO, "%s is a %s agent's checkpoint: that agent runs", o->load,
                 wm ? "world-model" : "PPO");
    o->agent = kind;
    xf_rulesdb *db = NULL;
    st = xf_rulesdb_open(o->rules, XF_RULESDB_READONLY, &db, err);
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    for (int j = 0; !st && j < act.M; j++) {
        int64_t id = llabs(act.ids[j]);
        xf_error miss = {0};
        xf_status got = xf_rulesdb_get_rule(db, id, &info, &miss);
        if (got != XF_OK && got != XF_ERR_INVALID) { /* not "no such rule": out of memory, I/O */
            *err = miss;
            st = got;
        } else if (got != XF_OK)
            st = XF_FAIL(err, XF_ERR_MISMATCH,
                         "checkpoint '%s': rule id %lld (agent action %d) is not in the rules "
                         "database '%s' (%s): the agent needs the database it was trained with",
                         o->load, (long long)act.ids[j], j, o->rules, miss.msg);
    }
    xf_rulesdb_rule_info_free(&info);
    xf_rulesdb_close(db);
    xf_actions_free(&act);
    return st;
}
