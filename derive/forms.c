/*
 * forms.c — the solver's first round at a size (pipeline.c): xfergen
 * stores one rule at several tensor shapes as separate candidates (the
 * same rewrite on 4-D activations, on kernels and on matrices), and once
 * one of them is proved the others follow from it in one step. So the
 * candidates are grouped by their compiled form (xf_rule_form_hash, the
 * key of the rule set's dedupe) and only the first of each group goes to
 * the solver before the derive pass runs again; the rest wait for it. A
 * hash collision only puts a candidate in the later round: whether it is
 * derived is still decided by the search and the replay. The groups are
 * formed over every rule of the size that is not pruned, decided or not,
 * so the plan is a function of the database's rules alone: a run killed
 * and resumed makes the same plan as a clean one (pipeline.c). The plan
 * also lists the other rules of each form with the form's first, so the
 * pass after a round can search just the other shapes of the forms the
 * solver has decided (pipeline.c, xf_derive_verify_options.firsts_up_to).
 */
#include <stdlib.h>
#include <string.h>

#include "derive_internal.h"

typedef struct form_id {
    uint64_t h;
    int64_t id;
    int small; /* the smaller side's operators */
} form_id;

static int cmp_form_id(const void *a, const void *b)
{
    const form_id *x = a, *y = b;
    if (x->h != y->h) return x->h < y->h ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_id_of(const void *a, const void *b)
{
    const form_id *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static int cmp_small_id(const void *a, const void *b)
{
    const form_id *x = a, *y = b;
    if (x->small != y->small) return x->small - y->small;
    return (x->id > y->id) - (x->id < y->id);
}

/* Form hashes of the n rules in ids; a rule the matcher cannot use (or
 * that does not load) is its own group: usable[i] 0. */
static xf_status hash_all(xf_rulesdb *db, const int64_t *ids, int64_t n, form_id *f,
                          uint8_t *usable, xf_error *err)
{
    xf_status st = XF_OK;
    for (int64_t i = 0; i < n && st == XF_OK; i++) {
        xf_rule r;
        xf_rule_init(&r);
        xf_error local;
        int ok = 0;
        f[i] = (form_id){0, ids[i], 0};
        st = xf_rulesdb_load_rule(db, ids[i], &r, &local);
        if (st == XF_OK) {
            f[i].small = r.src.n_nodes < r.dst.n_nodes ? r.src.n_nodes : r.dst.n_nodes;
            st = xf_rule_form_hash(&r, &f[i].h, &ok, err);
        } else if (st == XF_ERR_NOMEM || st == XF_ERR_IO) {
            if (err) *err = local;
        } else {
            st = XF_OK; /* does not load: the solver reports it */
        }
        usable[i] = (uint8_t)ok;
        xf_rule_free(&r);
    }
    return st;
}

void derive_plan_free(derive_plan *p)
{
    xf_free(p->firsts);
    xf_free(p->others);
    xf_free(p->first_of);
    memset(p, 0, sizeof *p);
}

xf_status derive_plan_forms(xf_rulesdb *db, int size, derive_plan *p, xf_error *err)
{
    int64_t cap = 0, all = 0;
    memset(p, 0, sizeof *p);
    /* every rule of the size that is not pruned, whatever its status: the
     * plan is the same in a run killed and resumed as in a clean one */
    static const xf_rule_status any[] = {XF_RULE_CANDIDATE, XF_RULE_PROVED, XF_RULE_REFUTED,
                                         XF_RULE_UNKNOWN, XF_RULE_DERIVED};
    xf_status st = XF_OK;
    for (size_t k = 0; k < sizeof any / sizeof *any && st == XF_OK; k++)
        st = derive_list_ids(db, any[k], 0, size, &p->firsts, &all, &cap, err);
    if (st == XF_OK && all > 1) qsort(p->firsts, (size_t)all, sizeof *p->firsts, cmp_i64);
    form_id *f = NULL, *g = NULL, *o = NULL;
    uint8_t *usable = NULL;
    if (st == XF_OK && all > 0 &&
        (!(f = xf_malloc(sizeof *f * (size_t)all)) || !(g = xf_malloc(sizeof *g * (size_t)all)) ||
         !(o = xf_malloc(sizeof *o * (size_t)all)) || !(usable = xf_malloc((size_t)all)) ||
         !(p->others = xf_malloc(sizeof *p->others * (size_t)all)) ||
         !(p->first_of = xf_malloc(sizeof *p->first_of * (size_t)all))))
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory grouping %lld rules", (long long)all);
    if (st == XF_OK && all > 0) st = hash_all(db, p->firsts, all, f, usable, err);
    if (st == XF_OK && all > 0) {
        /* g: the usable ones, then the others; of the usable, each form's
         * first goes to f, the rest to o (h: the id of their form's first) */
        int64_t m = 0, k = 0, u = all, n_o = 0, first = 0;
        for (int64_t i = 0; i < all; i++) {
            if (usable[i]) g[m++] = f[i];
            else g[--u] = f[i];
        }
        qsort(g, (size_t)m, sizeof *g, cmp_form_id);
        for (int64_t i = 0; i < m; i++) {
            if (i == 0 || g[i].h != g[i - 1].h) {
                f[k++] = g[i];
                first = g[i].id;
            } else {
                o[n_o++] = (form_id){(uint64_t)first, g[i].id, 0};
            }
        }
        for (int64_t i = m; i < all; i++) f[k++] = g[i];
        qsort(f, (size_t)k, sizeof *f, cmp_small_id);
        for (int64_t i = 0; i < k; i++) p->firsts[i] = f[i].id;
        p->n_firsts = k;
        qsort(o, (size_t)n_o, sizeof *o, cmp_id_of);
        for (int64_t i = 0; i < n_o; i++) p->others[i] = o[i].id, p->first_of[i] = (int64_t)o[i].h;
        p->n_others = n_o;
    }
    xf_free(o);
    xf_free(g);
    xf_free(f);
    xf_free(usable);
    if (st != XF_OK) derive_plan_free(p);
    return st;
}
