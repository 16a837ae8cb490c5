/*
 * replay.c — checks a derivation as stored, independently of the search
 * that found it: each step's rule is read back from the database and must
 * be another rule, proved or derived and smaller than the derived rule, or
 * proved (by the solver) and of its size (so derivations never lean on
 * each other in a circle: a derived rule rests, step by step, on proved
 * rules of its size and on rules of fewer operators, down to proved ones).
 * That rule alone is compiled in the stated direction with the matcher
 * (match/), its matches at the current graph are listed, the one at the
 * stored nodes is applied, and the last graph must have the target's
 * structural hash; every graph is normalized (normalize.c) as in the
 * search. xf_derive_db replays every chain before storing it,
 * xferdb replays it to print it, and the tests replay every chain of a
 * database. Replayed with xf_derive_domain it also composes the derived
 * rule's validity domain (ir/domain.c): its own sides' conditions, and for
 * each step the conditions of the graph it rewrites and of the step's rule
 * at the dims it binds, in terms of the rule's inputs, and in every graph
 * of the chain and both sides the dims that size a generator some step
 * holds at its own shape; a chain is valid exactly there. A step by a rule
 * with no recorded domain fails.
 */
#include <stdio.h>
#include <string.h>

#include "derive_internal.h"

static int size_of(const xf_rule *r)
{
    return r->src.n_nodes > r->dst.n_nodes ? r->src.n_nodes : r->dst.n_nodes;
}

/* The one match of action 0 of rs at `nodes` in g, applied into *next;
 * *used gets the match. */
static xf_status apply_at(const xf_ruleset *rs, const xf_graph *g, const int *nodes, int n_nodes,
                          xf_graph *next, int *found, xf_match *used, xf_error *err)
{
    *found = 0;
    xf_graph_index *ix = NULL;
    xf_match *m = NULL;
    int total = 0;
    xf_status st = xf_graph_index_build(g, &ix, err);
    if (st == XF_OK) st = xf_match_rule(rs, 0, g, ix, NULL, 0, &total, err);
    if (st == XF_OK && total > 0) {
        m = xf_malloc(sizeof *m * (size_t)total);
        if (!m) st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory replaying a derivation");
    }
    if (st == XF_OK && total > 0) st = xf_match_rule(rs, 0, g, ix, m, total, &total, err);
    for (int k = 0; st == XF_OK && k < total && !*found; k++) {
        if (m[k].n_nodes != n_nodes ||
            memcmp(m[k].nodes, nodes, sizeof *nodes * (size_t)n_nodes) != 0)
            continue;
        st = xf_match_apply_from(rs, g, ix, &m[k], next, NULL, err);
        *found = st == XF_OK;
        *used = m[k];
        if (*found) derive_normalize(next);
    }
    xf_free(m);
    xf_graph_index_free(ix);
    return st;
}

/* Step i: checks its rule and applies it to *g (replaced by the result). */
static xf_status replay_step(xf_rulesdb *db, int64_t id, int size, int i,
                             const xf_rulesdb_step *s, xf_graph *g, xf_rulesdb_rule_info *info,
                             xf_domain *dom, xf_domain_held *held, xf_error *err)
{
    xf_status st = XF_OK;
    if (s->by_rule == id)
        return XF_FAIL(err, XF_ERR_MISMATCH, "rule %lld: step %d uses the rule itself",
                       (long long)id, i);
    st = xf_rulesdb_get_rule(db, s->by_rule, info, err);
    if (st == XF_ERR_INVALID)
        return XF_FAIL(err, XF_ERR_MISMATCH, "rule %lld: step %d uses rule %lld, which is not "
                                             "in the database",
                       (long long)id, i, (long long)s->by_rule);
    if (st != XF_OK) return st;
    if (info->status != XF_RULE_PROVED && info->status != XF_RULE_DERIVED)
        return XF_FAIL(err, XF_ERR_MISMATCH, "rule %lld: step %d uses rule %lld, which is %s",
                       (long long)id, i, (long long)s->by_rule,
                       xf_rulesdb_status_name(info->status));
    if (info->size > size || (info->size == size && info->status != XF_RULE_PROVED))
        return XF_FAIL(err, XF_ERR_MISMATCH,
                       "rule %lld: step %d uses rule %lld of %d operators, %s %d",
                       (long long)id, i, (long long)s->by_rule, info->size,
                       info->size > size ? "more than" : "derived, not proved, at", size);
    int nodes[XF_MATCH_MAX_NODES];
    int n_nodes = derive_location_parse(s->location, nodes, XF_MATCH_MAX_NODES);
    if (n_nodes < 0)
        return XF_FAIL(err, XF_ERR_MISMATCH, "rule %lld: step %d: '%s' is not a location",
                       (long long)id, i, s->location);
    xf_rule by;
    xf_rule_init(&by);
    st = xf_rulesdb_load_rule(db, s->by_rule, &by, err);
    if (st == XF_OK && !by.domain.known)
        st = XF_FAIL(err, XF_ERR_MISMATCH,
                     "rule %lld: step %d uses rule %lld, derived without a recorded validity "
                     "domain (xferverify derives it again)",
                     (long long)id, i, (long long)s->by_rule);
    xf_ruleset *rs = NULL;
    xf_rule dir = by; /* the rule in the stated direction, as the only action */
    if (s->backward) dir.src = by.dst, dir.dst = by.src;
    if (st == XF_OK) {
        int64_t sid = s->backward ? -s->by_rule : s->by_rule;
        xf_ruleset_options ro = xf_ruleset_options_default();
        ro.both_directions = 0;
        ro.commutative = 0; /* a step's location is its nodes (docs/derive.md) */
        st = xf_ruleset_from_rules(&dir, &sid, 1, &ro, &rs, err);
    }
    if (st == XF_OK && xf_ruleset_count(rs) != 1) {
        const char *why = NULL;
        xf_ruleset_skipped(rs, &why);
        st = XF_FAIL(err, XF_ERR_MISMATCH,
                     "rule %lld: step %d: rule %lld cannot be applied %s (%s)", (long long)id, i,
                     (long long)s->by_rule,
                     s->backward ? "backward" : "forward", why ? why : "not usable");
    }
    xf_graph next;
    xf_graph_init(&next);
    int found = 0;
    xf_match m;
    if (st == XF_OK) st = apply_at(rs, g, nodes, n_nodes, &next, &found, &m, err);
    if (st == XF_OK && !found)
        st = XF_FAIL(err, XF_ERR_MISMATCH, "rule %lld: step %d: rule %lld (%s) does not match at "
                                           "nodes %s",
                     (long long)id, i, (long long)s->by_rule,
                     s->backward ? "backward" : "forward", s->location);
    /* the step holds where the graph it rewrites can be built and where its
     * rule holds at the dims it is applied at (as its slices read them), in
     * terms of the rule's inputs; the generators it holds at their own
     * shapes are pinned in every graph of the chain once it is replayed */
    if (st == XF_OK && dom) {
        xf_domain_step at = {&by, &dir.src, m.nodes, m.inputs, m.n_inputs};
        st = xf_domain_add_mapped(dom, g, &at, err);
        if (st == XF_OK) st = xf_domain_held_add(held, &dir.src, err);
        if (st == XF_OK) st = xf_domain_held_add(held, &dir.dst, err);
    }
    if (st == XF_OK) {
        xf_graph_free(g);
        *g = next;
    } else {
        xf_graph_free(&next);
    }
    xf_ruleset_free(rs);
    xf_rule_free(&by);
    return st;
}

/* Each graph of a chain (seen[0..n)) and the rule's own sides pin the dims
 * that size a generator the chain's steps hold (xf_domain_add_own_size). */
static xf_status pin_held(xf_domain *dom, const xf_rule *r, const xf_graph *seen, int n,
                          const xf_domain_held *held, xf_error *err)
{
    xf_status st = xf_domain_add_own_size(dom, &r->src, held, err);
    if (st == XF_OK) st = xf_domain_add_own_size(dom, &r->dst, held, err);
    for (int k = 0; st == XF_OK && k < n; k++)
        st = xf_domain_add_own_size(dom, &seen[k], held, err);
    return st;
}

static xf_status replay(xf_rulesdb *db, int64_t id, const xf_rule *r,
                        const xf_rulesdb_step *steps, int n, xf_derive_step_fn on_step,
                        void *user, xf_domain *dom, xf_error *err)
{
    if (n < 1)
        return XF_FAIL(err, XF_ERR_MISMATCH, "rule %lld: its derivation has no steps",
                       (long long)id);
    xf_graph g[2]; /* the graph made from the source, and from the target */
    xf_graph_init(&g[0]);
    xf_graph_init(&g[1]);
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    xf_domain_held held;
    xf_domain_held_init(&held);
    /* with dom: every graph of the chain (both starts, then the graph
     * after each step), to pin what any step holds */
    int n_seen = 0;
    xf_graph *seen = dom ? xf_malloc(sizeof *seen * ((size_t)n + 2)) : NULL;
    xf_status st = dom && !seen
                       ? XF_FAIL(err, XF_ERR_NOMEM, "out of memory replaying a derivation")
                       : XF_OK;
    if (st == XF_OK) st = xf_graph_clone(&r->src, &g[0], err);
    if (st == XF_OK) st = xf_graph_clone(&r->dst, &g[1], err);
    if (st == XF_OK) derive_normalize(&g[0]), derive_normalize(&g[1]);
    for (int s = 0; s < 2 && st == XF_OK && seen; s++) {
        xf_graph_init(&seen[n_seen]);
        st = xf_graph_clone(&g[s], &seen[n_seen++], err);
    }
    for (int i = 0; i < n && st == XF_OK; i++) {
        int side = steps[i].from_target != 0;
        if (i > 0 && steps[i - 1].from_target && !side)
            st = XF_FAIL(err, XF_ERR_MISMATCH, "rule %lld: step %d from the source follows one "
                                               "from the target",
                         (long long)id, i);
        if (st == XF_OK)
            st = replay_step(db, id, size_of(r), i, &steps[i], &g[side], &info, dom, &held, err);
        if (st == XF_OK && on_step) on_step(user, i, &steps[i], &info, &g[side]);
        if (st == XF_OK && seen) {
            xf_graph_init(&seen[n_seen]);
            st = xf_graph_clone(&g[side], &seen[n_seen++], err);
        }
    }
    if (st == XF_OK && dom) st = xf_domain_add_graph(dom, &g[0], err);
    if (st == XF_OK && dom) st = xf_domain_add_graph(dom, &g[1], err);
    if (st == XF_OK && dom) st = pin_held(dom, r, seen, n_seen, &held, err);
    uint64_t have = 0, want = 0;
    if (st == XF_OK) st = xf_graph_hash_checked(&g[0], XF_HASH_CONTENT, &have, err);
    if (st == XF_OK) st = xf_graph_hash_checked(&g[1], XF_HASH_CONTENT, &want, err);
    if (st == XF_OK && have != want) {
        char a[256], b[256];
        if (xf_graph_format(&g[0], a, sizeof a, NULL) != XF_OK) snprintf(a, sizeof a, "?");
        if (xf_graph_format(&g[1], b, sizeof b, NULL) != XF_OK) snprintf(b, sizeof b, "?");
        st = XF_FAIL(err, XF_ERR_MISMATCH,
                     "rule %lld: its derivation does not join the sides: %s from the source, "
                     "%s from the target",
                     (long long)id, a, b);
    }
    xf_rulesdb_rule_info_free(&info);
    for (int k = 0; k < n_seen; k++) xf_graph_free(&seen[k]);
    xf_free(seen);
    xf_domain_held_free(&held);
    xf_graph_free(&g[0]);
    xf_graph_free(&g[1]);
    return st;
}

xf_status xf_derive_replay(xf_rulesdb *db, int64_t id, const xf_rule *r,
                           const xf_rulesdb_step *steps, int n, xf_derive_step_fn on_step,
                           void *user, xf_error *err)
{
    return replay(db, id, r, steps, n, on_step, user, NULL, err);
}

xf_status xf_derive_domain(xf_rulesdb *db, int64_t id, const xf_rule *r,
                           const xf_rulesdb_step *steps, int n, xf_domain *out, xf_error *err)
{
    xf_status st = xf_domain_of_rule(r, out, err);
    if (st == XF_OK) st = replay(db, id, r, steps, n, NULL, NULL, out, err);
    if (st == XF_OK) st = xf_domain_normalize(out, err);
    if (st != XF_OK) xf_domain_clear(out), out->known = 0;
    return st;
}
