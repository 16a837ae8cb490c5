/*
 * stage_common.c — the first three pruning stages: duplicates up to
 * renaming (by canonical form), TASO's common subgraph and TASO's common
 * supergraph. For the TASO stages the smaller rule the removed one extends
 * is looked up among all input rules by canonical form, so the verdict can
 * name it when it was enumerated. The canonical forms and the TASO checks
 * run on the threads a block of rules at a time (xf_parallel); what they
 * find is applied in index order, so the verdicts are those of one thread.
 */
#include "prune/prune_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t form_key(const pr_tokens *tok)
{
    uint64_t h = xf_hash_u64(0x666F726Du, tok->n);
    return xf_htab_key(xf_hash_bytes(h, tok->v, (size_t)tok->n * sizeof *tok->v));
}

/* The rule in index whose canonical form is `tok` (hashed to `key`), or -1.
 * Each rule the hash names is serialised again into `scratch` and compared
 * token by token, so a hash collision never merges two forms. */
static xf_status find_form(const pr_rules *rs, const xf_htab *index, const pr_tokens *tok,
                           uint64_t key, pr_tokens *scratch, long *found, xf_error *err)
{
    *found = -1;
    size_t pos = XF_HTAB_START;
    for (const uint64_t *v; (v = xf_htab_next(index, key, &pos));) {
        const pr_rule *r = &rs->rules[*v];
        pr_tuple tu = {r->n_out, pr_src_out(rs, r), pr_dst_out(rs, r), NULL, 0};
        xf_status st = pr_canon(&rs->table, &tu, scratch, err);
        if (st != XF_OK) return st;
        if (scratch->n == tok->n &&
            (tok->n == 0 || memcmp(scratch->v, tok->v, (size_t)tok->n * sizeof *tok->v) == 0)) {
            *found = (long)*v;
            return XF_OK;
        }
    }
    return XF_OK;
}

/* Work of one block of the canonical forms (see pr_canon_index). */
typedef struct forms_block {
    const pr_rules *rs;
    size_t lo;
    uint64_t *key;        /* [i - lo]: hash of rule i's canonical form */
    const long *first;    /* the first rule with the same hash (checking) */
    unsigned char *other; /* [i - lo]: its form differs from first[i]'s */
} forms_block;

static xf_status form_of(const pr_rules *rs, size_t i, pr_tokens *tok, xf_error *err)
{
    const pr_rule *r = &rs->rules[i];
    pr_tuple tu = {r->n_out, pr_src_out(rs, r), pr_dst_out(rs, r), NULL, 0};
    return pr_canon(&rs->table, &tu, tok, err);
}

static xf_status hash_forms(void *ctx, int worker, size_t lo, size_t hi, xf_error *err)
{
    (void)worker;
    forms_block *b = ctx;
    pr_tokens tok = {0};
    xf_status st = XF_OK;
    for (size_t i = lo; i < hi && st == XF_OK; i++) {
        st = form_of(b->rs, i, &tok, err);
        if (st == XF_OK) b->key[i - b->lo] = form_key(&tok);
    }
    pr_tokens_free(&tok);
    return st;
}

static xf_status check_forms(void *ctx, int worker, size_t lo, size_t hi, xf_error *err)
{
    (void)worker;
    forms_block *b = ctx;
    pr_tokens tok = {0}, other = {0};
    xf_status st = XF_OK;
    for (size_t i = lo; i < hi && st == XF_OK; i++) {
        b->other[i - b->lo] = 0;
        if (b->first[i] == (long)i) continue;
        st = form_of(b->rs, i, &tok, err);
        if (st == XF_OK) st = form_of(b->rs, (size_t)b->first[i], &other, err);
        if (st == XF_OK)
            b->other[i - b->lo] = tok.n != other.n ||
                                  memcmp(tok.v, other.v, (size_t)tok.n * sizeof *tok.v) != 0;
    }
    pr_tokens_free(&tok);
    pr_tokens_free(&other);
    return st;
}

/* A block at a time: the forms' hashes in parallel; then, in index order,
 * each rule's first[] is the first rule with the same hash (added to the
 * index when there is none); then, in parallel, each rule's form compared
 * with that rule's; the rare rule whose form differs (a hash collision) is
 * looked up among all the index's rules with its hash, in index order, as
 * a whole sequential pass would. */
xf_status pr_canon_index(const pr_rules *rs, xf_htab *index, long *first, xf_error *err)
{
    pr_tokens tok = {0}, scratch = {0};
    forms_block b = {rs, 0, NULL, first, NULL};
    b.key = xf_malloc(PR_BLOCK * sizeof *b.key);
    b.other = xf_malloc(PR_BLOCK);
    xf_status st = b.key && b.other ? XF_OK
                                    : XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (canonical forms)");
    pr_progress_step(rs->progress, "canonical forms", rs->n);
    size_t block = pr_block_size(rs->n, 64, PR_BLOCK);
    for (size_t lo = 0; lo < rs->n && st == XF_OK; lo += block) {
        size_t hi = lo + block < rs->n ? lo + block : rs->n;
        b.lo = lo;
        st = xf_parallel(rs->threads, lo, hi, NULL, hash_forms, &b, err);
        for (size_t i = lo; i < hi && st == XF_OK; i++) {
            long min = -1;
            size_t pos = XF_HTAB_START;
            for (const uint64_t *v; (v = xf_htab_next(index, b.key[i - lo], &pos));)
                if (min < 0 || (long)*v < min) min = (long)*v;
            first[i] = min >= 0 ? min : (long)i;
            if (min < 0) st = xf_htab_add(index, b.key[i - lo], (uint64_t)i, err);
        }
        if (st == XF_OK) st = xf_parallel(rs->threads, lo, hi, NULL, check_forms, &b, err);
        for (size_t i = lo; i < hi && st == XF_OK; i++) {
            if (!b.other[i - lo]) continue;
            long old = -1;
            st = form_of(rs, i, &tok, err);
            if (st == XF_OK) st = find_form(rs, index, &tok, b.key[i - lo], &scratch, &old, err);
            if (st == XF_OK && old < 0) st = xf_htab_add(index, b.key[i - lo], (uint64_t)i, err);
            first[i] = old >= 0 ? old : (long)i;
        }
        pr_progress_tick(rs->progress, hi);
    }
    pr_tokens_free(&tok);
    pr_tokens_free(&scratch);
    xf_free(b.key);
    xf_free(b.other);
    return st;
}

/* Index of the first rule whose canonical form equals that of `tu`, or -1. */
static xf_status lookup(const pr_rules *rs, const xf_htab *index, const pr_tuple *tu, long *found,
                        xf_error *err)
{
    pr_tokens tok = {0}, scratch = {0};
    *found = -1;
    xf_status st = XF_OK;
    if (tu->n_out > 0) {
        st = pr_canon(&rs->table, tu, &tok, err);
        if (st == XF_OK) st = find_form(rs, index, &tok, form_key(&tok), &scratch, found, err);
    }
    pr_tokens_free(&tok);
    pr_tokens_free(&scratch);
    return st;
}

xf_status pr_remove(const pr_rules *rs, unsigned char *alive, xf_prune_verdict *v, size_t i,
                    xf_prune_stage stage, long by, xf_error *err, const char *fmt, ...)
{
    alive[i] = 0;
    v[i].stage = stage;
    v[i].by = by;
    if (!rs->reasons) return XF_OK;
    char buf[320];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    size_t n = strlen(buf) + 1;
    v[i].why = xf_malloc(n);
    if (!v[i].why) return XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory for the reason of rule %zu", i);
    memcpy(v[i].why, buf, n);
    return XF_OK;
}

xf_status pr_stage_renaming(const pr_rules *rs, const long *first, unsigned char *alive,
                            xf_prune_verdict *v, xf_error *err)
{
    xf_status st = XF_OK;
    for (size_t i = 0; i < rs->n && st == XF_OK; i++) {
        if (!alive[i] || first[i] == (long)i) continue;
        st = pr_remove(rs, alive, v, i, XF_PRUNE_RENAMING, first[i], err,
                       "duplicate up to renaming inputs, swapping sides or reordering outputs");
    }
    return st;
}

/* Is node term `n` an operator applied to graph inputs only (or to
 * nothing: a constant generator)? */
static int on_inputs_only(const pr_table *t, int32_t n)
{
    const int32_t *kids = pr_kids(t, n);
    for (int32_t i = 0; i < t->terms[n].n_kids; i++)
        if (t->terms[kids[i]].opkey != PR_LEAF) return 0;
    return 1;
}

/* What the TASO stages found for the rules of one block. */
typedef struct taso_block {
    const pr_rules *rs;
    const xf_htab *index;
    const unsigned char *alive;
    size_t lo;
    int32_t *found; /* [i - lo]: the common term, or the output (supergraph); -1: none */
    int32_t *pos;   /* supergraph: the differing argument, -1: none */
    long *by;       /* the smaller rule, -1 when it was not enumerated */
} taso_block;

/* Runs a TASO stage: `decide` fills the block's arrays in parallel, then
 * `apply` removes the rules found, in index order. */
typedef xf_status (*taso_apply_fn)(const taso_block *b, size_t i, unsigned char *alive,
                                   xf_prune_verdict *v, xf_error *err);

static xf_status taso_stage(const pr_rules *rs, const xf_htab *index, unsigned char *alive,
                            xf_prune_verdict *v, const char *step, xf_range_fn decide,
                            taso_apply_fn apply, xf_error *err)
{
    taso_block b = {rs, index, alive, 0, NULL, NULL, NULL};
    b.found = xf_malloc(PR_BLOCK * sizeof *b.found);
    b.pos = xf_malloc(PR_BLOCK * sizeof *b.pos);
    b.by = xf_malloc(PR_BLOCK * sizeof *b.by);
    xf_status st = b.found && b.pos && b.by
                       ? XF_OK
                       : XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (%s)", step);
    pr_progress_step(rs->progress, step, rs->n);
    size_t block = pr_block_size(rs->n, 64, PR_BLOCK);
    for (size_t lo = 0; lo < rs->n && st == XF_OK; lo += block) {
        size_t hi = lo + block < rs->n ? lo + block : rs->n;
        b.lo = lo;
        st = xf_parallel(rs->threads, lo, hi, NULL, decide, &b, err);
        for (size_t i = lo; i < hi && st == XF_OK; i++)
            if (b.found[i - lo] >= 0) st = apply(&b, i, alive, v, err);
        pr_progress_tick(rs->progress, hi);
    }
    xf_free(b.found);
    xf_free(b.pos);
    xf_free(b.by);
    return st;
}

static xf_status decide_subgraph(void *ctx, int worker, size_t lo, size_t hi, xf_error *err)
{
    (void)worker;
    taso_block *b = ctx;
    const pr_rules *rs = b->rs;
    const pr_table *t = &rs->table;
    for (size_t i = lo; i < hi; i++) {
        int32_t common = -1;
        b->found[i - b->lo] = -1;
        if (!b->alive[i]) continue;
        const pr_rule *r = &rs->rules[i];
        const int32_t *sn = pr_src_nodes(rs, r), *dn = pr_dst_nodes(rs, r);
        for (int a = 0; a < r->n_src_nodes && common < 0; a++) {
            if (!on_inputs_only(t, sn[a])) continue;
            for (int k = 0; k < r->n_dst_nodes; k++)
                if (dn[k] == sn[a]) {
                    common = sn[a];
                    break;
                }
        }
        if (common < 0) continue;
        pr_subst sb = {common, -1};
        pr_tuple tu = {r->n_out, pr_src_out(rs, r), pr_dst_out(rs, r), &sb, 1};
        xf_status st = lookup(rs, b->index, &tu, &b->by[i - b->lo], err);
        if (st != XF_OK) return st;
        b->found[i - b->lo] = common;
    }
    return XF_OK;
}

static xf_status apply_subgraph(const taso_block *b, size_t i, unsigned char *alive,
                                xf_prune_verdict *v, xf_error *err)
{
    const pr_rules *rs = b->rs;
    long by = b->by[i - b->lo];
    char expr[128] = "";
    if (rs->reasons) pr_term_format(&rs->table, b->found[i - b->lo], expr, sizeof expr);
    return pr_remove(rs, alive, v, i, XF_PRUNE_COMMON_SUBGRAPH, by, err, "both sides compute %s%s",
                     expr, by >= 0 ? "; with it as an input the rule was enumerated too" : "");
}

xf_status pr_stage_common_subgraph(const pr_rules *rs, const xf_htab *index,
                                   unsigned char *alive, xf_prune_verdict *v, xf_error *err)
{
    return taso_stage(rs, index, alive, v, "common subgraph", decide_subgraph, apply_subgraph, err);
}

/* Output k of both sides is the same operator with arguments differing in
 * at most one position: *pos gets that position, -1 when none differs. */
static int same_top(const pr_table *t, int32_t s, int32_t d, int *pos)
{
    const pr_term *a = &t->terms[s], *b = &t->terms[d];
    if (a->opkey == PR_LEAF || a->opkey != b->opkey || a->out != b->out || a->n_kids != b->n_kids)
        return 0;
    const int32_t *ka = pr_kids(t, s), *kb = pr_kids(t, d);
    *pos = -1;
    for (int32_t j = 0; j < a->n_kids; j++) {
        if (ka[j] == kb[j]) continue;
        if (*pos >= 0) return 0;
        *pos = j;
    }
    return 1;
}

static xf_status decide_supergraph(void *ctx, int worker, size_t lo, size_t hi, xf_error *err)
{
    (void)worker;
    taso_block *b = ctx;
    const pr_rules *rs = b->rs;
    const pr_table *t = &rs->table;
    int32_t src[65], dst[65];
    for (size_t i = lo; i < hi; i++) {
        b->found[i - b->lo] = -1;
        if (!b->alive[i]) continue;
        const pr_rule *r = &rs->rules[i];
        const int32_t *so = pr_src_out(rs, r), *dout = pr_dst_out(rs, r);
        int k, pos = -1;
        for (k = 0; k < r->n_out; k++)
            if (same_top(t, so[k], dout[k], &pos)) break;
        if (k == r->n_out) continue;
        if (r->n_out - (pos < 0) > 64) /* as pr_canon would say */
            return XF_FAIL(err, XF_ERR_UNSUPPORTED, "prune: a rule with %d outputs (at most 64)",
                           r->n_out - (pos < 0));
        /* The smaller rule: output k replaced by the differing arguments, or
         * dropped when none differs. */
        int n = 0;
        for (int o = 0; o < r->n_out; o++) {
            if (o == k && pos < 0) continue;
            src[n] = o == k ? pr_kids(t, so[k])[pos] : so[o];
            dst[n] = o == k ? pr_kids(t, dout[k])[pos] : dout[o];
            n++;
        }
        pr_tuple tu = {n, src, dst, NULL, 0};
        xf_status st = lookup(rs, b->index, &tu, &b->by[i - b->lo], err);
        if (st != XF_OK) return st;
        b->found[i - b->lo] = k;
        b->pos[i - b->lo] = pos;
    }
    return XF_OK;
}

static xf_status apply_supergraph(const taso_block *b, size_t i, unsigned char *alive,
                                  xf_prune_verdict *v, xf_error *err)
{
    const pr_rules *rs = b->rs;
    const pr_table *t = &rs->table;
    int k = b->found[i - b->lo];
    long by = b->by[i - b->lo];
    const char *opname =
        xf_op_get(t->ops[t->terms[pr_src_out(rs, &rs->rules[i])[k]].opkey])->name;
    return pr_remove(rs, alive, v, i, XF_PRUNE_COMMON_SUPERGRAPH, by, err,
                     "output %d is %s on both sides, arguments differing in %s%s", k, opname,
                     b->pos[i - b->lo] < 0 ? "no position" : "one position",
                     by >= 0 ? "; the smaller rule was enumerated too" : "");
}

xf_status pr_stage_common_supergraph(const pr_rules *rs, const xf_htab *index,
                                     unsigned char *alive, xf_prune_verdict *v, xf_error *err)
{
    return taso_stage(rs, index, alive, v, "common supergraph", decide_supergraph,
                      apply_supergraph, err);
}
