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
 *
 * On threads, rules go in batches (of the visiting order): each rule of a
 * batch is searched among the rules kept before the batch in parallel,
 * then, in order, among the rules kept within the batch up to the place
 * in the search order where the first search matched (the newer rules come
 * first in a bucket), so the rule that makes it redundant, and its
 * binding, are those of one sequential search.
 */
#include "prune/prune_internal.h"

#include <limits.h>
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

/* One search for a more general rule: which kept rules it reads, and what
 * it found (by -1: none). */
typedef struct search {
    int fresh_only; /* 1: only rules kept in this batch (the front of each bucket) */
    int upto;       /* last place to search (fresh_only) */
    long at_upto;   /* rule known to match at place `upto` after the fresh ones, or -1 */
    long by;        /* found, or -1 */
    int place;      /* where */
} search;

/* Searches the kept rules for one that R is an instance of, in the order a
 * single sequential search takes: orientation, output order, bucket key
 * (the places, numbered), within a bucket the most recently kept first.
 * Without fresh_only it reads only what was kept before this batch; with
 * it, the rules of this batch, up to place `upto`, where `at_upto` (found
 * there among the older rules) is the answer when no fresh rule matched. */
static void find_general(const pr_rules *rs, const buckets *bk, const unsigned char *fresh,
                         size_t ri, binding *bind, search *s)
{
    const pr_table *t = &rs->table;
    const pr_rule *r = &rs->rules[ri];
    int k = r->n_out;
    int32_t a[64], b[64];
    int perm[64];
    s->by = -1;
    if (k > 64) return;
    int place = 0;
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
            for (int q = 0; q < 4; q++, place++) {
                if (s->fresh_only && place > s->upto) return;
                if ((q == 1 && ra == 0) || (q == 2 && rb == 0) || (q == 3 && (ra == 0 || rb == 0)))
                    continue;
                long bucket = bucket_of(bk, keys[q][0], keys[q][1]);
                for (long g = bucket >= 0 ? bk->head[bucket] : -1; g >= 0; g = bk->next[g]) {
                    if (s->fresh_only && !fresh[g]) break;
                    const pr_rule *gr = &rs->rules[g];
                    if (gr->n_out != k || gr->tree_size > r->tree_size) continue;
                    if ((bk->mask[2 * g] & ~ma) || (bk->mask[2 * g + 1] & ~mb)) continue;
                    if (instance_of(rs, gr, a, b, bind)) {
                        s->by = g;
                        s->place = place;
                        return;
                    }
                }
                if (s->fresh_only && place == s->upto && s->at_upto >= 0) {
                    instance_of(rs, &rs->rules[s->at_upto], a, b, bind); /* its binding */
                    s->by = s->at_upto;
                    s->place = place;
                    return;
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

/* The stage's state; a batch of rules (in visiting order) is searched
 * among the rules kept before it in parallel (older[]), then decided in
 * order against the rules kept within it. */
typedef struct general {
    const pr_rules *rs;
    buckets bk;
    visit *order;
    unsigned char *fresh; /* per rule: kept in the current batch */
    search *older;        /* per rule of the batch */
    size_t batch_lo;
} general;

#define BATCH 4096 /* at most; pr_block_size */

static xf_status search_older(void *ctx, int worker, size_t lo, size_t hi, xf_error *err)
{
    (void)worker;
    (void)err;
    general *g = ctx;
    binding bind;
    for (size_t q = lo; q < hi; q++) {
        search *s = &g->older[q - g->batch_lo];
        *s = (search){0, 0, -1, -1, 0};
        find_general(g->rs, &g->bk, g->fresh, g->order[q].index, &bind, s);
    }
    return XF_OK;
}

static xf_status masks(void *ctx, int worker, size_t lo, size_t hi, xf_error *err)
{
    (void)worker;
    (void)err;
    general *g = ctx;
    const pr_rules *rs = g->rs;
    for (size_t q = lo; q < hi; q++) {
        size_t i = g->order[q].index;
        const pr_rule *r = &rs->rules[i];
        g->bk.mask[2 * i] = side_mask(&rs->table, pr_src_out(rs, r), r->n_out);
        g->bk.mask[2 * i + 1] = side_mask(&rs->table, pr_dst_out(rs, r), r->n_out);
    }
    return XF_OK;
}

/* Decides rule order[q] of the batch: removed, or kept into its bucket. */
static xf_status decide(general *g, size_t q, binding *bind, unsigned char *alive,
                        xf_prune_verdict *v, xf_error *err)
{
    const pr_rules *rs = g->rs;
    const pr_table *t = &rs->table;
    size_t i = g->order[q].index;
    const pr_rule *r = &rs->rules[i];
    const search *old = &g->older[q - g->batch_lo];
    search s = {1, old->by >= 0 ? old->place : INT_MAX, old->by, -1, 0};
    find_general(rs, &g->bk, g->fresh, i, bind, &s);
    if (s.by >= 0) {
        char why[256] = "";
        if (rs->reasons) describe(t, bind, why, sizeof why);
        return pr_remove(rs, alive, v, i, XF_PRUNE_GENERALITY, s.by, err, "%s", why);
    }
    if (r->n_out == 0) return XF_OK;
    g->fresh[i] = 1;
    return bucket_add(&g->bk, root_key(t, pr_src_out(rs, r)[0]), root_key(t, pr_dst_out(rs, r)[0]),
                      i, err);
}

xf_status pr_stage_generality(const pr_rules *rs, unsigned char *alive, xf_prune_verdict *v,
                              xf_error *err)
{
    xf_status st = XF_OK;
    general g;
    memset(&g, 0, sizeof g);
    g.rs = rs;
    pr_keymap_init(&g.bk.map);
    g.order = xf_malloc((rs->n + 1) * sizeof *g.order);
    g.bk.next = xf_malloc((rs->n + 1) * sizeof *g.bk.next);
    g.bk.mask = xf_malloc((2 * rs->n + 1) * sizeof *g.bk.mask);
    g.fresh = xf_calloc(rs->n + 1, 1);
    g.older = xf_malloc(BATCH * sizeof *g.older);
    binding *bind = xf_malloc(sizeof *bind);
    if (!g.order || !g.bk.next || !g.bk.mask || !g.fresh || !g.older || !bind) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (generality, %zu rules)", rs->n);
        goto out;
    }
    size_t m = 0;
    for (size_t i = 0; i < rs->n; i++)
        if (alive[i]) {
            const pr_rule *r = &rs->rules[i];
            g.order[m++] = (visit){r->tree_size, r->n_used_leaves, i};
        }
    st = xf_parallel(rs->threads, 0, m, NULL, masks, &g, err);
    if (st != XF_OK) goto out;
    qsort(g.order, m, sizeof *g.order, cmp_visit);
    pr_progress_step(rs->progress, "generality", m);
    size_t batch = pr_block_size(m, 16, BATCH);
    for (size_t lo = 0; lo < m && st == XF_OK; lo += batch) {
        size_t hi = lo + batch < m ? lo + batch : m;
        g.batch_lo = lo;
        st = xf_parallel(rs->threads, lo, hi, NULL, search_older, &g, err);
        for (size_t q = lo; q < hi && st == XF_OK; q++) st = decide(&g, q, bind, alive, v, err);
        for (size_t q = lo; q < hi; q++) g.fresh[g.order[q].index] = 0;
        pr_progress_tick(rs->progress, hi);
    }
out:
    xf_free(g.order);
    xf_free(g.bk.next);
    xf_free(g.bk.mask);
    xf_free(g.bk.head);
    xf_free(g.fresh);
    xf_free(g.older);
    xf_free(bind);
    pr_keymap_free(&g.bk.map);
    return st;
}
