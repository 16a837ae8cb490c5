/*
 * stage_common.c — the first three pruning stages: duplicates up to
 * renaming (by canonical form), TASO's common subgraph and TASO's common
 * supergraph. For the TASO stages the smaller rule the removed one extends
 * is looked up among all input rules by canonical form, so the verdict can
 * name it when it was enumerated.
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

xf_status pr_canon_index(const pr_rules *rs, xf_htab *index, long *first, xf_error *err)
{
    pr_tokens tok = {0}, scratch = {0};
    xf_status st = XF_OK;
    for (size_t i = 0; i < rs->n && st == XF_OK; i++) {
        const pr_rule *r = &rs->rules[i];
        pr_tuple tu = {r->n_out, pr_src_out(rs, r), pr_dst_out(rs, r), NULL, 0};
        st = pr_canon(&rs->table, &tu, &tok, err);
        uint64_t key = st == XF_OK ? form_key(&tok) : 0;
        long old = -1;
        if (st == XF_OK) st = find_form(rs, index, &tok, key, &scratch, &old, err);
        if (st == XF_OK && old < 0) st = xf_htab_add(index, key, (uint64_t)i, err);
        first[i] = old >= 0 ? old : (long)i;
    }
    pr_tokens_free(&tok);
    pr_tokens_free(&scratch);
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

xf_status pr_stage_common_subgraph(const pr_rules *rs, const xf_htab *index,
                                   unsigned char *alive, xf_prune_verdict *v, xf_error *err)
{
    const pr_table *t = &rs->table;
    for (size_t i = 0; i < rs->n; i++) {
        if (!alive[i]) continue;
        const pr_rule *r = &rs->rules[i];
        int32_t common = -1;
        const int32_t *sn = pr_src_nodes(rs, r), *dn = pr_dst_nodes(rs, r);
        for (int a = 0; a < r->n_src_nodes && common < 0; a++) {
            if (!on_inputs_only(t, sn[a])) continue;
            for (int b = 0; b < r->n_dst_nodes; b++)
                if (dn[b] == sn[a]) {
                    common = sn[a];
                    break;
                }
        }
        if (common < 0) continue;
        pr_subst sb = {common, -1};
        pr_tuple tu = {r->n_out, pr_src_out(rs, r), pr_dst_out(rs, r), &sb, 1};
        long by;
        xf_status st = lookup(rs, index, &tu, &by, err);
        if (st != XF_OK) return st;
        char expr[128] = "";
        if (rs->reasons) pr_term_format(t, common, expr, sizeof expr);
        st = pr_remove(rs, alive, v, i, XF_PRUNE_COMMON_SUBGRAPH, by, err, "both sides compute %s%s",
                       expr, by >= 0 ? "; with it as an input the rule was enumerated too" : "");
        if (st != XF_OK) return st;
    }
    return XF_OK;
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

xf_status pr_stage_common_supergraph(const pr_rules *rs, const xf_htab *index,
                                     unsigned char *alive, xf_prune_verdict *v, xf_error *err)
{
    const pr_table *t = &rs->table;
    int32_t *src = NULL, *dst = NULL;
    size_t cap = 0;
    xf_status st = XF_OK;
    for (size_t i = 0; i < rs->n && st == XF_OK; i++) {
        if (!alive[i]) continue;
        const pr_rule *r = &rs->rules[i];
        int k, pos = -1;
        for (k = 0; k < r->n_out; k++)
            if (same_top(t, pr_src_out(rs, r)[k], pr_dst_out(rs, r)[k], &pos)) break;
        if (k == r->n_out) continue;
        if ((size_t)r->n_out > cap) {
            xf_free(src);
            xf_free(dst);
            cap = (size_t)r->n_out;
            src = xf_malloc(cap * sizeof *src);
            dst = xf_malloc(cap * sizeof *dst);
            if (!src || !dst) {
                st = XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (rule %zu)", i);
                break;
            }
        }
        /* The smaller rule: output k replaced by the differing arguments, or
         * dropped when none differs. */
        int n = 0;
        for (int o = 0; o < r->n_out; o++) {
            if (o == k && pos < 0) continue;
            const int32_t *so = pr_src_out(rs, r), *dout = pr_dst_out(rs, r);
            src[n] = o == k ? pr_kids(t, so[k])[pos] : so[o];
            dst[n] = o == k ? pr_kids(t, dout[k])[pos] : dout[o];
            n++;
        }
        pr_tuple tu = {n, src, dst, NULL, 0};
        long by;
        st = lookup(rs, index, &tu, &by, err);
        if (st != XF_OK) break;
        const char *opname = xf_op_get(t->ops[t->terms[pr_src_out(rs, r)[k]].opkey])->name;
        st = pr_remove(rs, alive, v, i, XF_PRUNE_COMMON_SUPERGRAPH, by, err,
                       "output %d is %s on both sides, arguments differing in %s%s", k, opname,
                       pos < 0 ? "no position" : "one position",
                       by >= 0 ? "; the smaller rule was enumerated too" : "");
        if (st != XF_OK) break;
    }
    xf_free(src);
    xf_free(dst);
    return st;
}
