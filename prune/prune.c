/*
 * prune.c — the pruning driver (see prune.h): canonical input order first
 * (so reasons use the names the rules end up with), then the term view of
 * the rules (an array's fed from their graphs, or fed one at a time by
 * the caller: xf_prune_run_from), then the selected
 * stages in order with per-stage counts and wall times. The stages' own
 * files say which of their work runs on the -j threads (parallel.c).
 */
#include "prune/prune_internal.h"

#include <stdlib.h>
#include <string.h>

const char *xf_prune_stage_name(xf_prune_stage s)
{
    switch (s) {
    case XF_PRUNE_KEPT: return "kept";
    case XF_PRUNE_RENAMING: return "renaming";
    case XF_PRUNE_COMMON_SUBGRAPH: return "common-subgraph";
    case XF_PRUNE_COMMON_SUPERGRAPH: return "common-supergraph";
    case XF_PRUNE_GENERALITY: return "generality";
    default: return "?";
    }
}

xf_prune_options xf_prune_options_default(void)
{
    xf_prune_options o = {XF_PRUNE_ALL_STAGES, 1, 1, 1, NULL, NULL, 1.0};
    return o;
}

void xf_prune_verdicts_free(xf_prune_verdict *verdicts, size_t n)
{
    for (size_t i = 0; verdicts && i < n; i++) {
        xf_free(verdicts[i].why);
        verdicts[i].why = NULL;
    }
}

static size_t count_alive(const unsigned char *alive, size_t n)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += alive[i] != 0;
    return c;
}

/* xf_rule_validate of rule i, its failure as the rule's (XF_ERR_INVALID). */
static xf_status check_rule(const xf_rule *r, size_t i, xf_error *err)
{
    xf_status st = xf_rule_validate(r, err);
    if (st == XF_OK) return XF_OK;
    xf_error_prefix(err, "prune: rule %zu", i);
    if (st == XF_ERR_NOMEM) return st; /* not the rule's fault */
    if (err) err->code = XF_ERR_INVALID;
    return XF_ERR_INVALID;
}

/* Rule i of an array, fed from its graphs (checked and put in canonical
 * order before). */
static xf_status feed_rule(void *user, size_t i, const xf_graph_sink *src,
                           const xf_graph_sink *dst, xf_error *err)
{
    const xf_rule *rules = user;
    return xf_rule_feed(&rules[i], src, dst, err);
}

static xf_status run(size_t n, xf_rule *rules, xf_prune_get_fn get, void *user,
                     const xf_prune_options *opt, xf_prune_verdict *verdicts,
                     xf_prune_stats *stats, xf_error *err)
{
    xf_prune_options o = opt ? *opt : xf_prune_options_default();
    xf_prune_stats s;
    memset(&s, 0, sizeof s);
    s.in = n;
    for (size_t i = 0; i < n; i++) {
        verdicts[i].stage = XF_PRUNE_KEPT;
        verdicts[i].by = -1;
        verdicts[i].why = NULL;
    }
    pr_rules rs;
    xf_htab index;
    xf_htab_init(&index);
    unsigned char *alive = xf_malloc(n + 1);
    long *first = xf_malloc((n + 1) * sizeof *first);
    double t0 = xf_clock_now();
    xf_status st = XF_OK;
    /* Checked, then renamed first, so reasons use the names the rules end
     * with. */
    for (size_t i = 0; rules && i < n && st == XF_OK; i++) {
        st = check_rule(&rules[i], i, err);
        if (st != XF_OK || !o.canonical_inputs) continue;
        st = xf_prune_canonical_inputs(&rules[i], err);
        if (st != XF_OK) xf_error_prefix(err, "prune: rule %zu", i);
    }
    pr_progress progress;
    pr_progress_init(&progress, &o);
    if (st == XF_OK)
        st = rules ? pr_rules_build(&rs, n, feed_rule, rules, 0, &o, &progress, err)
                   : pr_rules_build(&rs, n, get, user, o.canonical_inputs, &o, &progress, err);
    else memset(&rs, 0, sizeof rs);
    if (st == XF_OK && (!alive || !first))
        st = XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (%zu rules)", n);
    if (st != XF_OK) goto out;
    memset(alive, 1, n);
    st = pr_canon_index(&rs, &index, first, err);
    if (st != XF_OK) goto out;
    s.left[XF_PRUNE_KEPT] = n;
    s.seconds[XF_PRUNE_KEPT] = xf_clock_now() - t0;
    size_t left = n;
    for (int stage = XF_PRUNE_RENAMING; stage < XF_PRUNE_STAGE_COUNT; stage++) {
        double ts = xf_clock_now();
        if (o.stages & (1u << stage)) {
            switch ((xf_prune_stage)stage) {
            case XF_PRUNE_RENAMING: st = pr_stage_renaming(&rs, first, alive, verdicts, err); break;
            case XF_PRUNE_COMMON_SUBGRAPH:
                st = pr_stage_common_subgraph(&rs, &index, alive, verdicts, err);
                break;
            case XF_PRUNE_COMMON_SUPERGRAPH:
                st = pr_stage_common_supergraph(&rs, &index, alive, verdicts, err);
                break;
            case XF_PRUNE_GENERALITY: st = pr_stage_generality(&rs, alive, verdicts, err); break;
            default: break;
            }
            if (st != XF_OK) goto out;
        }
        size_t now = count_alive(alive, n);
        s.removed[stage] = left - now;
        s.left[stage] = now;
        s.seconds[stage] = xf_clock_now() - ts;
        left = now;
    }
    s.kept = left;
out:
    if (stats) *stats = s;
    pr_rules_free(&rs);
    xf_htab_free(&index);
    xf_free(alive);
    xf_free(first);
    return st;
}

xf_status xf_prune_run(xf_rule *rules, size_t n, const xf_prune_options *opt,
                       xf_prune_verdict *verdicts, xf_prune_stats *stats, xf_error *err)
{
    return run(n, rules, NULL, NULL, opt, verdicts, stats, err);
}

xf_status xf_prune_run_from(size_t n, xf_prune_get_fn get, void *user,
                            const xf_prune_options *opt, xf_prune_verdict *verdicts,
                            xf_prune_stats *stats, xf_error *err)
{
    if (!get && n > 0) return XF_FAIL(err, XF_ERR_INVALID, "prune: no rule source given");
    return run(n, NULL, get, user, opt, verdicts, stats, err);
}
