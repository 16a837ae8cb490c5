/*
 * canon.c — canonical serialisation of a rule up to input renaming.
 *
 * A rule (or a smaller rule derived from one by a substitution) is written
 * as int32 tokens: the number of outputs, then each source output tree,
 * a separator, each target output tree. A leaf is written as its type and
 * its number in order of first use, so renaming inputs does not change the
 * text; an operator as its interned key, output index and arity. The
 * canonical form is the smallest such text over both orientations and all
 * output orders (all permutations up to PR_MAX_PERM_OUTPUTS outputs; more
 * outputs keep their order), the renaming search of ir/rule_orders.c.
 */
#include "prune/prune_internal.h"

#include <stdlib.h>
#include <string.h>

#define PR_MAX_PERM_OUTPUTS 6
#define PR_MAX_LEAVES 128

enum { TOK_LEAF = -1, TOK_SIDE = -2, TOK_ABSENT = -3 };

void pr_tokens_free(pr_tokens *t)
{
    xf_free(t->v);
    t->v = NULL;
    t->n = t->cap = 0;
}

typedef struct ser {
    const pr_table *t;
    const pr_tuple *tu;
    int32_t leaf_key[PR_MAX_LEAVES]; /* term id, or -2 - fresh index */
    int n_leaf;
    pr_tokens *out;
    int overflow;
    int nomem;
} ser;

static void emit(ser *s, int32_t tok)
{
    if (s->out->n == s->out->cap) {
        uint32_t cap = s->out->cap ? s->out->cap * 2 : 64;
        int32_t *v = xf_realloc(s->out->v, cap * sizeof *v);
        if (!v) {
            s->nomem = 1;
            return;
        }
        s->out->v = v;
        s->out->cap = cap;
    }
    s->out->v[s->out->n++] = tok;
}

static int leaf_number(ser *s, int32_t key)
{
    for (int i = 0; i < s->n_leaf; i++)
        if (s->leaf_key[i] == key) return i;
    if (s->n_leaf == PR_MAX_LEAVES) {
        s->overflow = 1;
        return 0;
    }
    s->leaf_key[s->n_leaf] = key;
    return s->n_leaf++;
}

/* Is output term `term` replaced by substitution entry e? Node-term entries
 * match every output of that application. */
static int subst_matches(const pr_table *t, int32_t from, int32_t term)
{
    if (from == term) return 1;
    const pr_term *f = &t->terms[from], *a = &t->terms[term];
    if (f->out != -1 || f->opkey == PR_LEAF || a->opkey != f->opkey || a->n_kids != f->n_kids)
        return 0;
    return a->n_kids == 0 ||
           memcmp(pr_kids(t, from), pr_kids(t, term), (size_t)a->n_kids * sizeof(int32_t)) == 0;
}

static void ser_term(ser *s, int32_t term)
{
    const pr_table *t = s->t;
    for (int e = 0; e < s->tu->n_subst; e++) {
        const pr_subst *sb = &s->tu->subst[e];
        if (!subst_matches(t, sb->from, term)) continue;
        if (sb->to >= 0) {
            if (sb->to != term) {
                ser_term(s, sb->to);
                return;
            }
            break;
        }
        emit(s, TOK_LEAF);
        emit(s, t->terms[term].type);
        emit(s, leaf_number(s, -2 - (e * 64 + (t->terms[term].out & 63))));
        return;
    }
    const pr_term *a = &t->terms[term];
    if (a->opkey == PR_LEAF) {
        if (a->type == PR_NO_TYPE) {
            emit(s, TOK_ABSENT);
            return;
        }
        emit(s, TOK_LEAF);
        emit(s, a->type);
        emit(s, leaf_number(s, term));
        return;
    }
    emit(s, a->opkey);
    emit(s, a->out);
    emit(s, a->n_kids);
    const int32_t *kids = pr_kids(t, term);
    for (int32_t i = 0; i < a->n_kids; i++) ser_term(s, kids[i]);
}

/* Serialise with sides swapped or not and outputs in order perm. */
static void ser_tuple(ser *s, int swap, const int *perm)
{
    const int32_t *a = swap ? s->tu->dst : s->tu->src;
    const int32_t *b = swap ? s->tu->src : s->tu->dst;
    s->n_leaf = 0;
    s->out->n = 0;
    emit(s, s->tu->n_out);
    for (int i = 0; i < s->tu->n_out; i++) ser_term(s, a[perm[i]]);
    emit(s, TOK_SIDE);
    for (int i = 0; i < s->tu->n_out; i++) ser_term(s, b[perm[i]]);
}

static int tokens_less(const pr_tokens *x, const pr_tokens *y)
{
    uint32_t n = x->n < y->n ? x->n : y->n;
    for (uint32_t i = 0; i < n; i++)
        if (x->v[i] != y->v[i]) return x->v[i] < y->v[i];
    return x->n < y->n;
}

/* The search's state: the smallest text so far and the one being built. */
typedef struct canon_search {
    ser s;
    pr_tokens cur, *best;
    int have;
} canon_search;

/* Serialises under order o and keeps the smaller text. */
static int try_order(void *ctx, const xf_rule_order *o)
{
    canon_search *c = ctx;
    c->s.out = &c->cur;
    ser_tuple(&c->s, o->swap, o->out);
    if (c->s.nomem) return 1;
    if (!c->have || tokens_less(&c->cur, c->best)) {
        pr_tokens tmp = *c->best;
        *c->best = c->cur;
        c->cur = tmp;
        c->have = 1;
    }
    return 0;
}

xf_status pr_canon(const pr_table *t, const pr_tuple *tu, pr_tokens *out, xf_error *err)
{
    int k = tu->n_out;
    if (k > 64) return XF_FAIL(err, XF_ERR_UNSUPPORTED, "prune: a rule with %d outputs (at most 64)", k);
    out->n = 0;
    canon_search c = {.s = {.t = t, .tu = tu}, .best = out};
    /* Leaves are numbered by first use, so inputs need no search. */
    xf_rule_orders orders = {0, k, NULL, 0, PR_MAX_PERM_OUTPUTS, 1, try_order, &c};
    xf_status st = xf_rule_orders_each(&orders, err);
    pr_tokens_free(&c.cur);
    if (st != XF_OK) return st;
    if (c.s.nomem) return XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (canonical form)");
    if (c.s.overflow)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "prune: a rule reads more than %d inputs",
                       PR_MAX_LEAVES);
    return XF_OK;
}

int pr_first_use(const pr_table *t, const pr_tuple *tu, int32_t *leaves, int max)
{
    pr_tokens tmp = {0};
    ser s = {.t = t, .tu = tu, .out = &tmp};
    int perm[64];
    for (int i = 0; i < tu->n_out && i < 64; i++) perm[i] = i;
    ser_tuple(&s, 0, perm);
    pr_tokens_free(&tmp);
    if (s.nomem) return -1;
    int n = 0;
    for (int i = 0; i < s.n_leaf && n < max; i++)
        if (s.leaf_key[i] >= 0) leaves[n++] = s.leaf_key[i];
    return n;
}
