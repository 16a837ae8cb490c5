/*
 * ppo_actions.c — the compact action set of the learning agents
 * (agent/rl/ppo.h): the rules the environment offered in at least one state
 * the agent observed during a short random warm-up, at most a cap of them
 * (the most often offered), plus the no-op.
 *
 * A rule set of the taso 3-op rules has ~4,300 actions, of which a model
 * ever offers a few dozen; a policy or a world model with a head over all
 * of them spends almost all of its time on outputs that are always masked.
 * The agents' networks are sized to the compact set instead, and the set
 * maps agent actions to and from the environment's. Checkpoints store the
 * set as rule database ids (xf_ruleset_rule_id), which mean the same rules
 * in every rule set loaded from the same database, and binding maps them
 * back through the rule set at hand.
 */
#include "agent/rl/ppo.h"

#include <stdlib.h>
#include <string.h>

int xf_actions_warmup(int warmup_steps, int64_t max_env_steps)
{
    if (warmup_steps <= 0 || max_env_steps <= 0) return warmup_steps > 0 ? warmup_steps : 0;
    int64_t cap = max_env_steps / 10 > 0 ? max_env_steps / 10 : 1;
    return warmup_steps < cap ? warmup_steps : (int)cap;
}

void xf_actions_init(xf_actions *s)
{
    memset(s, 0, sizeof *s);
}

void xf_actions_free(xf_actions *s)
{
    xf_free(s->ids);
    xf_free(s->env);
    xf_free(s->agent);
    xf_actions_init(s);
}

/* Locations of rule i the agents may take in e's state: none for a rule
 * that only swaps operands (xf_ruleset_swaps_only). The matcher binds
 * add, mul, min and max either way round, so a swap enables nothing; the
 * cost model prices it at nothing, so an agent takes it at random and
 * keeps it on the path to its best graph, where it breaks the operand
 * order ONNX Runtime's bias and SkipLayerNorm fusions read (on modelzoo
 * BERT PPO's graph had 34 of them, and ran x0.69 where TASO's of equal
 * cost ran x0.62-0.67). */
int xf_actions_locations(const xf_env *e, int i)
{
    return xf_ruleset_swaps_only(xf_env_ruleset(e), i) ? 0 : xf_env_num_locations(e, i);
}

void xf_actions_count(const xf_env *e, int64_t *count)
{
    int n = xf_env_num_xfers(e);
    for (int i = 0; i < n; i++) count[i] += xf_actions_locations(e, i) > 0;
}

int xf_actions_random(const xf_env *e, xf_rng *rng, int *rule, int *loc)
{
    int n = xf_env_num_xfers(e);
    int64_t total = 0;
    for (int j = 0; j < n; j++) total += xf_actions_locations(e, j);
    if (total == 0) return 0;
    int64_t k = (int64_t)(xf_rng_next(rng) % (uint64_t)total);
    int j = 0;
    while (k >= xf_actions_locations(e, j)) k -= xf_actions_locations(e, j++);
    *rule = j;
    *loc = (int)k;
    return 1;
}

/* ---------------------------------------------------------------- choice */

/* An action index with a sort key (an offer count or a rule id). */
typedef struct ranked {
    int64_t key;
    int index;
} ranked;

static int by_count(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (a->key != b->key) return a->key > b->key ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

static int by_index(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    return (a->index > b->index) - (a->index < b->index);
}

static int by_id(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

xf_status xf_actions_choose(xf_actions *s, const xf_ruleset *rs, const int64_t *count, int cap,
                            xf_error *err)
{
    if (cap < 1)
        return XF_FAIL(err, XF_ERR_INVALID, "the action cap (%d) must be at least 1", cap);
    int n = xf_ruleset_count(rs), m = 0;
    ranked *r = xf_malloc((size_t)(n > 0 ? n : 1) * sizeof *r);
    if (!r) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory choosing the agent's actions");
    for (int i = 0; i < n; i++)
        if (count[i] > 0) r[m++] = (ranked){count[i], i};
    qsort(r, (size_t)m, sizeof *r, by_count);
    /* Rules whose id repeats a more often offered one are left out, so the
     * ids name the actions uniquely. */
    int kept = 0;
    for (int i = 0; i < m && kept < cap; i++) {
        int64_t id = xf_ruleset_rule_id(rs, r[i].index);
        int dup = 0;
        for (int k = 0; k < kept && !dup; k++) dup = xf_ruleset_rule_id(rs, r[k].index) == id;
        if (!dup) r[kept++] = r[i];
    }
    qsort(r, (size_t)kept, sizeof *r, by_index);
    xf_actions c;
    xf_actions_init(&c);
    c.ids = xf_malloc((size_t)(kept > 0 ? kept : 1) * sizeof *c.ids);
    if (!c.ids) {
        xf_free(r);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory choosing the agent's actions");
    }
    c.M = kept;
    for (int k = 0; k < kept; k++) c.ids[k] = xf_ruleset_rule_id(rs, r[k].index);
    xf_free(r);
    xf_status st = xf_actions_bind(&c, rs, err);
    if (st) {
        xf_actions_free(&c);
        return st;
    }
    xf_actions_free(s);
    *s = c;
    return XF_OK;
}

xf_status xf_actions_bind(xf_actions *s, const xf_ruleset *rs, xf_error *err)
{
    int n = xf_ruleset_count(rs);
    /* (id, index) of every action of rs sorted by id, then index: the
     * first action with an id is the one it names. */
    ranked *byid = xf_malloc((size_t)(n > 0 ? n : 1) * sizeof *byid);
    int *env = xf_malloc((size_t)(s->M > 0 ? s->M : 1) * sizeof *env);
    int *agent = xf_malloc(((size_t)n + 1) * sizeof *agent);
    if (!byid || !env || !agent) {
        xf_free(byid);
        xf_free(env);
        xf_free(agent);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory mapping the agent's %d actions", s->M);
    }
    for (int i = 0; i < n; i++) byid[i] = (ranked){xf_ruleset_rule_id(rs, i), i};
    qsort(byid, (size_t)n, sizeof *byid, by_id);
    for (int i = 0; i < n; i++) agent[i] = -1;
    agent[n] = s->M;
    xf_status st = XF_OK;
    int unbound = 0;
    for (int j = 0; j < s->M && !st; j++) {
        int lo = 0, hi = n; /* first entry with id >= ids[j] */
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (byid[mid].key < s->ids[j]) lo = mid + 1;
            else hi = mid;
        }
        if ((lo == n || byid[lo].key != s->ids[j]) && s->partial) {
            env[j] = -1;
            unbound++;
        } else if (lo == n || byid[lo].key != s->ids[j])
            st = XF_FAIL(err, XF_ERR_MISMATCH,
                         "rule id %lld (agent action %d) is not in the rule set: the agent needs "
                         "the rules database it was trained with, with this rule relevant to "
                         "the model",
                         (long long)s->ids[j], j);
        else if (agent[byid[lo].index] >= 0)
            st = XF_FAIL(err, XF_ERR_INVALID,
                         "rule id %lld appears twice among the agent's actions",
                         (long long)s->ids[j]);
        else {
            env[j] = byid[lo].index;
            agent[byid[lo].index] = j;
        }
    }
    xf_free(byid);
    if (st) {
        xf_free(env);
        xf_free(agent);
        return st;
    }
    xf_free(s->env);
    xf_free(s->agent);
    s->env = env;
    s->agent = agent;
    s->n_env = n;
    s->unbound = unbound;
    return XF_OK;
}

void xf_actions_mask(const xf_actions *s, const xf_env *e, uint8_t *mask, int *n_loc)
{
    for (int j = 0; j < s->M; j++) {
        n_loc[j] = s->env[j] >= 0 ? xf_actions_locations(e, s->env[j]) : 0;
        mask[j] = n_loc[j] > 0;
    }
    n_loc[s->M] = 0;
    mask[s->M] = 1;
}

int xf_actions_outside(const xf_actions *s, const xf_env *e)
{
    const uint8_t *mask = xf_env_xfer_mask(e);
    int n = xf_env_num_xfers(e), outside = 0;
    for (int i = 0; i < n && i < s->n_env; i++) outside += mask[i] && s->agent[i] < 0;
    return outside;
}

xf_status xf_actions_copy_ids(xf_actions *dst, const xf_actions *ids, xf_error *err)
{
    xf_actions_init(dst);
    dst->ids = xf_malloc((size_t)(ids->M > 0 ? ids->M : 1) * sizeof *dst->ids);
    if (!dst->ids) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory copying %d actions", ids->M);
    if (ids->M > 0) memcpy(dst->ids, ids->ids, (size_t)ids->M * sizeof *dst->ids);
    dst->M = ids->M;
    dst->partial = ids->partial;
    return XF_OK;
}

/* ----------------------------------------------------------- checkpoints */

int xf_actions_write(FILE *f, const xf_actions *s)
{
    int ok = xf_ckpt_put_u32(f, (uint32_t)s->M);
    for (int j = 0; ok && j < s->M; j++) ok = xf_ckpt_put_i64(f, s->ids[j]);
    return ok;
}

/* Actions beyond this are a corrupt header, not a checkpoint. */
#define XF_ACTIONS_MAX (1 << 24)

xf_status xf_actions_read(FILE *f, const char *path, xf_actions *s, xf_error *err)
{
    uint32_t m = 0;
    if (!xf_ckpt_get_u32(f, &m))
        return XF_FAIL(err, XF_ERR_PARSE, "checkpoint '%s' is truncated", path);
    if (m > XF_ACTIONS_MAX)
        return XF_FAIL(err, XF_ERR_PARSE, "checkpoint '%s': %u actions (corrupt header)", path, m);
    int64_t *ids = xf_malloc((size_t)(m > 0 ? m : 1) * sizeof *ids);
    if (!ids) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory reading '%s'", path);
    for (uint32_t j = 0; j < m; j++)
        if (!xf_ckpt_get_i64(f, &ids[j])) {
            xf_free(ids);
            return XF_FAIL(err, XF_ERR_PARSE, "checkpoint '%s' is truncated", path);
        }
    xf_actions_free(s);
    s->M = (int)m;
    s->ids = ids;
    return XF_OK;
}
