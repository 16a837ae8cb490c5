/*
 * report.c — the part of rlflow-agent's report that lists the rules applied
 * on the path to the best graph: one line per distinct rule, most frequent
 * first, with its database id (negative: the rule applied right to left) and
 * its readable form.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

typedef struct applied_count {
    int action, n;
} applied_count;

static int by_count(const void *a, const void *b)
{
    const applied_count *x = a, *y = b;
    if (x->n != y->n) return y->n - x->n;
    return x->action - y->action;
}

void cli_print_applied(const xf_model_search *ms, const xf_search_result *res)
{
    printf("rules applied:   %d", res->n_applied);
    if (res->n_applied == 0) {
        printf("\n");
        return;
    }
    applied_count *c = xf_calloc((size_t)res->n_applied, sizeof *c);
    if (!c) {
        printf(" (out of memory listing them)\n");
        return;
    }
    int n = 0;
    for (int i = 0; i < res->n_applied; i++) {
        int k = 0;
        while (k < n && c[k].action != res->applied[i]) k++;
        if (k == n) c[n++].action = res->applied[i];
        c[k].n++;
    }
    qsort(c, (size_t)n, sizeof *c, by_count);
    printf(" (%d distinct)\n", n);
    for (int k = 0; k < n; k++) {
        int a = c[k].action, back = a < -1;
        if (back) a = XF_ACTION_OF_BACKWARD(a);
        printf("  %4dx  rule %-7lld %s%s\n", c[k].n, (long long)xf_model_search_rule_id(ms, a),
               back ? "backwards, at a value: " : "", xf_model_search_rule_text(ms, a));
    }
    xf_free(c);
}

void cli_print_made_by(const cli_options *o, const xf_model_search *ms,
                       const xf_search_result *applied, const xf_prepare_stats *ps, int unbatched)
{
    static const char *const passes[] = {"rules", "expert", "both"};
    int n = applied ? applied->n_applied : 0, views = 0;
    for (int i = 0; i < n; i++) {
        int a = applied->applied[i];
        if (a < -1) a = XF_ACTION_OF_BACKWARD(a);
        views += xf_model_search_rule_has_view(ms, a);
    }
    printf("made by:         --passes %s: proved rules %d rewrite%s (%d with a reshape or a slice)",
           passes[o->passes], n, n == 1 ? "" : "s", views);
    if (!applied) {
        printf("; the input was written\n");
        return;
    }
    printf("; hand passes: ");
    if (o->passes == CLI_PASSES_RULES) {
        printf("none\n");
        return;
    }
    printf("narrowing %d operator%s, split layout %d, unbatched layout %s\n", ps->narrowed_ops,
           ps->narrowed_ops == 1 ? "" : "s", ps->merged_split_layouts,
           unbatched ? "chosen" : "not chosen");
}
