/*
 * actions_tally.c — the action set of an agent trained over several models
 * (agent/rl/ppo.h, xf_actions_tally): the rules each model's environment
 * offered during a random warm-up, counted by rule database id so that the
 * counts of different rule sets (each restricted to what can match its
 * model, so action numbers differ between models) add up, and the set
 * chosen from the union.
 *
 * The set is in id order, not rule-set order: ids are the one numbering
 * every model shares. It is partial: on a model whose rule set lacks one
 * of its ids (the rule cannot match there) that action is unavailable.
 */
#include "agent/rl/ppo.h"

#include <stdlib.h>
#include <string.h>

void xf_actions_tally_init(xf_actions_tally *t)
{
    memset(t, 0, sizeof *t);
}

void xf_actions_tally_free(xf_actions_tally *t)
{
    xf_free(t->id);
    xf_free(t->count);
    xf_actions_tally_init(t);
}

/* Index of the first entry with id >= key. */
static int lower_bound(const xf_actions_tally *t, int64_t key)
{
    int lo = 0, hi = t->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (t->id[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static xf_status grow(xf_actions_tally *t, xf_error *err)
{
    int cap = t->cap ? 2 * t->cap : 64;
    int64_t *id = xf_realloc(t->id, (size_t)cap * sizeof *id);
    if (id) t->id = id;
    int64_t *count = id ? xf_realloc(t->count, (size_t)cap * sizeof *count) : NULL;
    if (count) t->count = count;
    if (!id || !count) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory counting offered rules");
    t->cap = cap;
    return XF_OK;
}

xf_status xf_actions_tally_add(xf_actions_tally *t, const xf_ruleset *rs, const int64_t *count,
                               xf_error *err)
{
    int n = xf_ruleset_count(rs);
    for (int i = 0; i < n; i++) {
        if (count[i] <= 0) continue;
        int64_t key = xf_ruleset_rule_id(rs, i);
        int k = lower_bound(t, key);
        if (k < t->n && t->id[k] == key) {
            t->count[k] += count[i];
            continue;
        }
        if (t->n == t->cap) {
            xf_status st = grow(t, err);
            if (st) return st;
        }
        memmove(t->id + k + 1, t->id + k, (size_t)(t->n - k) * sizeof *t->id);
        memmove(t->count + k + 1, t->count + k, (size_t)(t->n - k) * sizeof *t->count);
        t->id[k] = key;
        t->count[k] = count[i];
        t->n++;
    }
    return XF_OK;
}

/* An id with its count. */
typedef struct counted {
    int64_t count, id;
} counted;

static int by_count(const void *pa, const void *pb)
{
    const counted *a = pa, *b = pb;
    if (a->count != b->count) return a->count > b->count ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

static int by_id(const void *pa, const void *pb)
{
    const counted *a = pa, *b = pb;
    return (a->id > b->id) - (a->id < b->id);
}

xf_status xf_actions_tally_choose(const xf_actions_tally *t, int cap, xf_actions *s,
                                  xf_error *err)
{
    if (cap < 1)
        return XF_FAIL(err, XF_ERR_INVALID, "the action cap (%d) must be at least 1", cap);
    counted *c = xf_malloc((size_t)(t->n > 0 ? t->n : 1) * sizeof *c);
    int64_t *ids = xf_malloc((size_t)(t->n > 0 ? t->n : 1) * sizeof *ids);
    if (!c || !ids) {
        xf_free(c);
        xf_free(ids);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory choosing the agent's actions");
    }
    for (int k = 0; k < t->n; k++) c[k] = (counted){t->count[k], t->id[k]};
    qsort(c, (size_t)t->n, sizeof *c, by_count);
    int kept = t->n < cap ? t->n : cap;
    qsort(c, (size_t)kept, sizeof *c, by_id);
    for (int k = 0; k < kept; k++) ids[k] = c[k].id;
    xf_free(c);
    xf_actions_free(s);
    s->M = kept;
    s->ids = ids;
    s->partial = 1;
    return XF_OK;
}
