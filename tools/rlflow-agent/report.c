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

void cli_print_applied(const xf_ruleset *rs, const xf_search_result *res)
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
        printf("  %4dx  rule %-7lld %s%s\n", c[k].n, (long long)xf_ruleset_rule_id(rs, a),
               back ? "backwards, at a value: " : "", xf_ruleset_text(rs, a));
    }
    xf_free(c);
}
