/*
 * stage_general.c — the generality stage: a rule R is redundant when some
 * kept rule G becomes R after substituting G's inputs by expressions (two
 * inputs may receive the same one), in either orientation and any output
 * order. Rules are visited from the most general (smallest expression
 * trees, then most distinct inputs, then input order), so a rule only has
 * to be matched against rules already kept. Kept rules are bucketed by the
 * operators at the roots of their first source and target outputs (an
 * input root is a wildcard), which keeps the matching near-linear; within
 * a bucket, a rule whose side uses an operator the other rule's side does
 * not (64-bit operator masks) is passed over without matching, since a
 * substitution only adds operators.
 */
#include "prune/prune_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_VARS 128

typedef struct binding {
    int32_t var[MAX_VARS], val[MAX_VARS];
    int n;
} binding;

/* Does pattern term p (of G) become target term x (of R) under b? */
static int match(const pr_table *t, int32_t p, int32_t x, binding *b)
{
    const pr_term *pt = &t->terms[p], *xt = &t->terms[x];
    if (pt->opkey == PR_LEAF) {
        if (pt->type == PR_NO_TYPE) return p == x; /* omitted optional argument */
        if (xt->type != pt->type) return 0;
        for (int i = 0; i < b->n; i++)
            if (b->var[i] == p) return b->val[i] == x;
        if (b->n == MAX_VARS) return 0;
        b->var[b->n] = p;
        b->val[b->n++] = x;
        return 1;
    }
    if (xt->opkey != pt->opkey || xt->out != pt->out || xt->n_kids != pt->n_kids ||
        xt->size < pt->size)
        return 0;
    const int32_t *pk = pr_kids(t, p), *xk = pr_kids(t, x);
    for (int32_t i = 0; i < pt->n_kids; i++)
        if (!match(t, pk[i], xk[i], b)) return 0;
    return 1;
}

/* Bit (opkey mod 64) of every operator in the unfolded tree of `term`. */
static uint64_t op_mask(const pr_table *t, int32_t term)
{
    const pr_term *a = &t->terms[term];
    if (a->opkey == PR_LEAF) return 0;
    uint64_t m = 1ull << (a->opkey & 63);
    const int32_t *k = pr_kids(t, term);
    for (int32_t i = 0; i < a->n_kids; i++) m |= op_mask(t, k[i]);
    return m;
}

static uint64_t side_mask(const pr_table *t, const int32_t *outs, int n)
{
    uint64_t m = 0;
    for (int i = 0; i < n; i++) m |= op_mask(t, outs[i]);
    return m;
}

static int32_t root_key(const pr_table *t, int32_t term)
{
    const pr_term *a = &t->terms[term];
    return a->opkey == PR_LEAF ? 0 : 1 + a->opkey * 64 + (a->out & 63);
}

/* Visiting order: smaller trees first, then more distinct inputs. */
typedef struct visit {
    int32_t tree_size, n_leaves;
    size_t index;
} visit;

static int cmp_visit(const void *pa, const void *pb)
{
    const visit *a = pa, *b = pb;
    if (a->tree_size != b->tree_size) return a->tree_size < b->tree_size ? -1 : 1;
    if (a->n_leaves != b->n_leaves) return a->n_leaves > b->n_leaves ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

typedef struct buckets {
    pr_keymap map; /* [root src0, root dst0] -> bucket */
    long *head;    /* per bucket: last rule added, -1 */
    size_t n, cap;
    long *next;    /* per rule: previous rule in its bucket */
    uint64_t *mask; /* per rule: operator masks of source [2i] and target [2i+1] */
} buckets;

static long bucket_of(const buckets *bk, int32_t a, int32_t b)
{
    int32_t key[2] = {a, b};
    return pr_keymap_get(&bk->map, key, 2);
}

static xf_status bucket_add(buckets *bk, int32_t a, int32_t b, size_t rule, xf_error *err)
{
    int32_t key[2] = {a, b};
    long old;
    xf_status st = pr_keymap_put(&bk->map, key, 2, (long)bk->n, &old, err);
    if (st != XF_OK) return st;
    if (old < 0) {
        if (bk->n == bk->cap) {
            size_t cap = bk->cap ? bk->cap * 2 : 64;
            long *h = xf_realloc(bk->head, cap * sizeof *h);
            if (!h) return XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (generality buckets)");
            bk->head = h;
            bk->cap = cap;
        }
        old = (long)bk->n;
        bk->head[bk->n++] = -1;
    }
    bk->next[rule] = bk->head[old];
    bk->head[old] = (long)rule;
    return XF_OK;
}

/* Is rule R (outputs a/b, already oriented and permuted) an instance of G? */
static int instance_of(const pr_rules *rs, const pr_rule *g, const int32_t *a, const int32_t *b,
                       binding *bind)
{
    const pr_table *t = &rs->table;
    bind->n = 0;
    for (int k = 0; k < g->n_out; k++)
        if (!match(t, pr_src_out(rs, g)[k], a[k], bind) ||
            !match(t, pr_dst_out(rs, g)[k], b[k], bind))
            return 0;
    return 1;
}

static void describe(const pr_table *t, const binding *bind, char *why, size_t n)
{
    int len = snprintf(why, n, "instance of a more general rule");
    int shown = 0;
    for (int i = 0; i < bind->n && len > 0 && (size_t)len < n; i++) {
        if (bind->val[i] == bind->var[i]) continue; /* input kept as it is */
        char lhs[64], rhs[160];
        pr_term_format(t, bind->var[i], lhs, sizeof lhs);
        pr_term_format(t, bind->val[i], rhs, sizeof rhs);
        int w = snprintf(why + len, n - (size_t)len, "%s %s := %s", shown++ ? "," : " with", lhs, rhs);
        if (w < 0) break;
        len += w;
    }
}

/* Searches the kept rules for one that R is an instance of; *by gets it or -1. */
static void find_general(const pr_rules *rs, const buckets *bk, size_t ri, binding *bind,
                         long *by)
{
    const pr_table *t = &rs->table;
    const pr_rule *r = &rs->rules[ri];
    int k = r->n_out;
    int32_t a[64], b[64];
    int perm[64];
    *by = -1;
    if (k > 64) return;
    for (int swap = 0; swap < 2; swap++) {
        uint64_t ma = bk->mask[2 * ri + (size_t)swap], mb = bk->mask[2 * ri + 1 - (size_t)swap];
        for (int i = 0; i < k; i++) perm[i] = i;
        int more = 1;
        while (more) {
            for (int i = 0; i < k; i++) {
                a[i] = (swap ? pr_dst_out(rs, r) : pr_src_out(rs, r))[perm[i]];
                b[i] = (swap ? pr_src_out(rs, r) : pr_dst_out(rs, r))[perm[i]];
            }
            int32_t ra = root_key(t, a[0]), rb = root_key(t, b[0]);
            int32_t keys[4][2] = {{ra, rb}, {0, rb}, {ra, 0}, {0, 0}};
            for (int q = 0; q < 4; q++) {
                if ((q == 1 && ra == 0) || (q == 2 && rb == 0) || (q == 3 && (ra == 0 || rb == 0)))
                    continue;
                long bucket = bucket_of(bk, keys[q][0], keys[q][1]);
                for (long g = bucket >= 0 ? bk->head[bucket] : -1; g >= 0; g = bk->next[g]) {
                    const pr_rule *gr = &rs->rules[g];
                    if (gr->n_out != k || gr->tree_size > r->tree_size) continue;
                    if ((bk->mask[2 * g] & ~ma) || (bk->mask[2 * g + 1] & ~mb)) continue;
                    if (instance_of(rs, gr, a, b, bind)) {
                        *by = g;
                        return;
                    }
                }
            }
            /* next output order (all orders up to 6 outputs) */
            more = 0;
            if (k <= 6) {
                int i = k - 2;
                while (i >= 0 && perm[i] >= perm[i + 1]) i--;
                if (i >= 0) {
                    int j = k - 1;
                    while (perm[j] <= perm[i]) j--;
                    int tmp = perm[i];
                    perm[i] = perm[j];
                    perm[j] = tmp;
                    for (int l = i + 1, h = k - 1; l < h; l++, h--) {
                        tmp = perm[l];
                        perm[l] = perm[h];
                        perm[h] = tmp;
                    }
                    more = 1;
                }
            }
        }
    }
}

xf_status pr_stage_generality(const pr_rules *rs, unsigned char *alive, xf_prune_verdict *v,
                              xf_error *err)
{
    const pr_table *t = &rs->table;
    xf_status st = XF_OK;
    buckets bk = {0};
    pr_keymap_init(&bk.map);
    visit *order = xf_malloc((rs->n + 1) * sizeof *order);
    bk.next = xf_malloc((rs->n + 1) * sizeof *bk.next);
    bk.mask = xf_malloc((2 * rs->n + 1) * sizeof *bk.mask);
    binding *bind = xf_malloc(sizeof *bind);
    if (!order || !bk.next || !bk.mask || !bind) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (generality, %zu rules)", rs->n);
        goto out;
    }
    size_t m = 0;
    for (size_t i = 0; i < rs->n; i++)
        if (alive[i]) {
            const pr_rule *r = &rs->rules[i];
            order[m++] = (visit){r->tree_size, r->n_used_leaves, i};
            bk.mask[2 * i] = side_mask(t, pr_src_out(rs, r), r->n_out);
            bk.mask[2 * i + 1] = side_mask(t, pr_dst_out(rs, r), r->n_out);
        }
    qsort(order, m, sizeof *order, cmp_visit);
    for (size_t q = 0; q < m; q++) {
        size_t i = order[q].index;
        const pr_rule *r = &rs->rules[i];
        long by;
        find_general(rs, &bk, i, bind, &by);
        if (by >= 0) {
            char why[256] = "";
            if (rs->reasons) describe(t, bind, why, sizeof why);
            st = pr_remove(rs, alive, v, i, XF_PRUNE_GENERALITY, by, err, "%s", why);
            if (st != XF_OK) goto out;
            continue;
        }
        if (r->n_out == 0) continue;
        st = bucket_add(&bk, root_key(t, pr_src_out(rs, r)[0]), root_key(t, pr_dst_out(rs, r)[0]),
                        i, err);
        if (st != XF_OK) goto out;
    }
out:
    xf_free(order);
    xf_free(bk.next);
    xf_free(bk.mask);
    xf_free(bk.head);
    xf_free(bind);
    pr_keymap_free(&bk.map);
    return st;
}
