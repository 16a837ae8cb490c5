/*
 * rule_orders.c — the renaming search behind every rule identity
 * (xf_rule_orders_each): the one place that walks the orders a rule's key
 * is taken over, so that "a rule up to renaming of its inputs, reordering
 * of its outputs and, where asked, reading it backwards" means the same
 * thing in xferdb diff (rule_key.c), prune's canonical form, the coverage
 * bench and the rule set.
 *
 * The caller says how many inputs and outputs there are, which inputs are
 * interchangeable (a comparison: inputs that compare equal form a class,
 * e.g. the same dtype and shape; none: the key numbers inputs itself, by
 * first use) and up to how many inputs and outputs every order is tried;
 * it gets each order once and keeps the smallest key of its own kind (a
 * pair of graph hashes, a token sequence, a text). The orders are: inputs
 * sorted by class, then every order that keeps that class sequence (each
 * class permuted on its own, like an odometer), times every order of the
 * outputs, times both orientations when asked. More inputs than max_in
 * keep the sorted order; more outputs than max_out keep their given order.
 */
#include <stdlib.h>

#include "ir.h"

/* Lexicographic next permutation of p[0..n); 0 after the last one, which
 * is left as it is (descending). */
static int next_perm(int *p, int n)
{
    int i = n - 2;
    while (i >= 0 && p[i] >= p[i + 1]) i--;
    if (i < 0) return 0;
    int j = n - 1;
    while (p[j] <= p[i]) j--;
    int t = p[i];
    p[i] = p[j];
    p[j] = t;
    for (int a = i + 1, b = n - 1; a < b; a++, b--) t = p[a], p[a] = p[b], p[b] = t;
    return 1;
}

static void reverse(int *p, int n)
{
    for (int a = 0, b = n - 1; a < b; a++, b--) {
        int t = p[a];
        p[a] = p[b];
        p[b] = t;
    }
}

/* Stable insertion sort of inputs 0..n-1 by class (rules have few inputs),
 * so each class lists its inputs ascending: its first permutation. */
static void sort_by_class(const xf_rule_orders *s, int *p)
{
    for (int i = 0; i < s->n_in; i++) p[i] = i;
    if (!s->in_cmp) return;
    for (int i = 1; i < s->n_in; i++)
        for (int j = i; j > 0 && s->in_cmp(s->ctx, p[j - 1], p[j]) > 0; j--) {
            int t = p[j];
            p[j] = p[j - 1];
            p[j - 1] = t;
        }
}

/* Next input order that keeps the class sequence: the last class that has
 * a next permutation takes it, the classes after it start over. start[i]
 * is where the class of position i begins. */
static int next_in_order(const xf_rule_orders *s, int *p, const int *start)
{
    for (int end = s->n_in; end > 0;) {
        int b = start[end - 1];
        if (next_perm(p + b, end - b)) return 1;
        reverse(p + b, end - b);
        end = b;
    }
    return 0;
}

xf_status xf_rule_orders_each(const xf_rule_orders *s, xf_error *err)
{
    int n_in = s->n_in, n_out = s->n_out;
    if (n_in < 0 || n_out < 0)
        return XF_FAIL(err, XF_ERR_INVALID, "rule orders: %d inputs, %d outputs", n_in, n_out);
    int *mem = xf_malloc(sizeof(int) * (size_t)(2 * n_in + n_out + 1));
    if (!mem) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory ordering a rule's inputs");
    int *p = mem, *start = mem + n_in, *q = mem + 2 * n_in;
    int all_in = s->in_cmp && n_in <= s->max_in, all_out = n_out <= s->max_out;
    sort_by_class(s, p);
    for (int i = 0; i < n_in; i++) {
        int same = i > 0 && s->in_cmp && s->in_cmp(s->ctx, p[i - 1], p[i]) == 0;
        start[i] = same ? start[i - 1] : i;
    }
    int stop = 0;
    /* After its last order each class is back in sorted order. */
    for (int swap = 0; swap < (s->both_sides ? 2 : 1) && !stop; swap++) {
        do {
            for (int i = 0; i < n_out; i++) q[i] = i;
            do {
                xf_rule_order o = {p, q, swap};
                stop = s->visit(s->ctx, &o);
            } while (!stop && all_out && next_perm(q, n_out));
        } while (!stop && all_in && next_in_order(s, p, start));
    }
    xf_free(mem);
    return XF_OK;
}
