/*
 * bench/derive_rounds.c — what deriving between the solver's rounds saves
 * at one size, simulated without a solver call on a database whose rules
 * of that size the solver has decided (a finished xferverify run, or the
 * decided part of a running one). Read-only.
 *
 *   bench_derive_rounds DB SIZE [--chunks K] [--by-min] [--depth N] [--states N]
 *                       [--sample N] [--with-derived]
 *
 * The rules of SIZE that carry a solver verdict (proved, refuted, unknown)
 * play the solver with their stored verdicts. The solver's first round is
 * the first rule (lowest id) of each compiled form among them
 * (xf_rule_form_hash: the others are the same rule at other tensor
 * shapes), in K chunks in id order (default 1); the second round is the
 * rest. Before each round after the first, the deriver — the rules proved
 * or derived below SIZE, as the derive pass holds them, plus the rules of
 * SIZE proved in the rounds before — searches every rule not decided yet;
 * a rule it joins is a solver call saved. Per pass it prints the rules
 * searched, joined (by their stored verdict: proved, unknown — a verdict
 * the solver did not find — and refuted, which must be 0: a chain for a
 * false rule would be a wrong proof), joined in one step (a shape variant)
 * and the search's CPU time; at the end the solver calls saved out of the
 * decided rules, and the CPU of grouping them by form. Joined rules are
 * counted apart as firsts of their form (a later chunk's) and others, and
 * the firsts' search CPU apart. --with-derived lets the rules of SIZE
 * stored derived with a step of their own size play proved too: those
 * are what the passes between a real run's rounds joined, which a
 * finished database no longer holds as solver verdicts.
 * --sample N searches only the rules whose id hashes into one N-th
 * ((id * 2654435761) mod 2^32 < 2^32 / N): a slice of a whole size's
 * passes; every decided rule still steps once its chunk is decided, so the
 * savings it prints are a little optimistic (a rule out of the sample that
 * a pass would join is proved there and steps) and scale by N.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "match/match.h"
#include "derive/derive.h"

typedef struct brule {
    int64_t id;
    xf_rule_status verdict;
    uint64_t form;
    int usable, round, chunk, joined; /* round: 0 first, 1 second; joined: by a pass */
    xf_rule r;
} brule;

typedef struct rules {
    xf_rule *r;
    int64_t *id;
    int n, cap;
} rules;

static int push(rules *s, const xf_rule *r, int64_t id)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 1024;
        xf_rule *p = xf_realloc(s->r, sizeof *p * (size_t)cap);
        int64_t *q = p ? xf_realloc(s->id, sizeof *q * (size_t)cap) : NULL;
        if (p) s->r = p;
        if (!q) return -1;
        s->id = q;
        s->cap = cap;
    }
    s->r[s->n] = *r; /* shallow: the graphs stay owned by their loader */
    s->id[s->n++] = id;
    return 0;
}

/* Loads the rules of db matching f into *out (xf_rule owned by the caller). */
static xf_status load(xf_rulesdb *db, const xf_rulesdb_filter *f, brule **out, int *n,
                      xf_error *err)
{
    xf_rulesdb_iter *it = NULL;
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    int cap = 0;
    xf_status st = xf_rulesdb_iter_begin(db, f, &it, err);
    for (int has = 1; st == XF_OK;) {
        st = xf_rulesdb_iter_next(it, &info, &has, err);
        if (st != XF_OK || !has) break;
        if (info.broken) continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 1024;
            brule *p = xf_realloc(*out, sizeof *p * (size_t)cap);
            if (!p) {
                st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
                break;
            }
            *out = p;
        }
        brule *b = &(*out)[*n];
        memset(b, 0, sizeof *b);
        b->id = info.id;
        b->verdict = info.status;
        st = xf_rulesdb_load_rule(db, info.id, &b->r, err);
        if (st == XF_OK) (*n)++;
    }
    xf_rulesdb_rule_info_free(&info);
    xf_rulesdb_iter_free(it);
    return st;
}

static int cmp_form(const void *a, const void *b)
{
    const brule *x = *(const brule *const *)a, *y = *(const brule *const *)b;
    if (x->form != y->form) return x->form < y->form ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

static int min_ops(const xf_rule *r)
{
    return r->src.n_nodes < r->dst.n_nodes ? r->src.n_nodes : r->dst.n_nodes;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* *found 1 when the chain of derived rule id steps by a rule of the n ids
 * (ascending: the rules of its size). */
static xf_status by_own_size(xf_rulesdb *db, int64_t id, const int64_t *ids, int n, int *found,
                             xf_error *err)
{
    xf_rulesdb_step *steps = NULL;
    int k = 0;
    *found = 0;
    xf_status st = xf_rulesdb_get_derivation(db, id, &steps, &k, err);
    for (int i = 0; st == XF_OK && i < k && !*found; i++)
        *found = bsearch(&steps[i].by_rule, ids, (size_t)n, sizeof *ids, cmp_i64) != NULL;
    xf_free(steps);
    return st;
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_derive_rounds DB SIZE [--chunks K] [--by-min] [--depth N] "
                    "[--states N] [--sample N] [--with-derived]\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 3) return usage();
    const char *path = argv[1];
    int size = atoi(argv[2]), chunks = 1, by_min = 0, sample = 1, with_derived = 0;
    xf_derive_options o;
    xf_derive_options_init(&o);
    for (int i = 3; i < argc; i += 2) {
        if (!strcmp(argv[i], "--by-min") || !strcmp(argv[i], "--with-derived")) {
            *(argv[i][2] == 'b' ? &by_min : &with_derived) = 1;
            i--;
            continue;
        }
        if (i + 1 >= argc) return usage();
        int v = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--chunks") && v >= 1) chunks = v;
        else if (!strcmp(argv[i], "--depth")) o.max_depth = v;
        else if (!strcmp(argv[i], "--states")) o.max_states = v;
        else if (!strcmp(argv[i], "--sample") && v >= 1) sample = v;
        else return usage();
    }
    if (size < 1) return usage();
    xf_error err;
    xf_rulesdb *db = NULL;
    brule *small = NULL, *dec = NULL;
    int n_small = 0, n_dec = 0;
    xf_rulesdb_filter f;
    memset(&f, 0, sizeof f);
    f.any_status = 1;
    f.max_size = size - 1;
    xf_status st = xf_rulesdb_open(path, XF_RULESDB_READONLY, &db, &err);
    if (st == XF_OK && size > 1) st = load(db, &f, &small, &n_small, &err);
    f.max_size = 0;
    f.size = size;
    if (st == XF_OK) st = load(db, &f, &dec, &n_dec, &err);
    rules base = {NULL, NULL, 0, 0};
    for (int i = 0; i < n_small && st == XF_OK; i++)
        if ((small[i].verdict == XF_RULE_PROVED || small[i].verdict == XF_RULE_DERIVED) &&
            push(&base, &small[i].r, small[i].id))
            st = XF_FAIL(&err, XF_ERR_NOMEM, "out of memory");
    /* the decided rules of SIZE; the first of each form is round 0 */
    int m = 0;
    int64_t *size_ids = xf_malloc(sizeof *size_ids * ((size_t)n_dec + 1));
    for (int i = 0; i < n_dec && size_ids; i++) size_ids[i] = dec[i].id; /* ascending */
    int n_with = 0;
    for (int i = 0; i < n_dec && st == XF_OK; i++) {
        xf_rule_status v = dec[i].verdict;
        int own = 0;
        if (v == XF_RULE_DERIVED && with_derived && size_ids)
            st = by_own_size(db, dec[i].id, size_ids, n_dec, &own, &err);
        if (own) {
            dec[i].verdict = XF_RULE_PROVED; /* joined by a pass between rounds: true */
            n_with++;
            dec[m++] = dec[i];
        } else if (v == XF_RULE_PROVED || v == XF_RULE_REFUTED || v == XF_RULE_UNKNOWN) {
            dec[m++] = dec[i];
        } else {
            xf_rule_free(&dec[i].r);
        }
    }
    xf_free(size_ids);
    if (with_derived) printf("%d rules derived with a step of their size play proved\n", n_with);
    n_dec = m;
    brule **by_form = xf_malloc(sizeof *by_form * ((size_t)n_dec + 1));
    double c0 = xf_clock_thread_cpu();
    for (int i = 0; i < n_dec && st == XF_OK; i++)
        st = xf_rule_form_hash(&dec[i].r, &dec[i].form, &dec[i].usable, &err);
    double form_cpu = xf_clock_thread_cpu() - c0;
    int n_first = 0;
    if (st == XF_OK && by_form) {
        for (int i = 0; i < n_dec; i++) by_form[i] = &dec[i];
        qsort(by_form, (size_t)n_dec, sizeof *by_form, cmp_form);
        for (int i = 0; i < n_dec; i++) {
            brule *b = by_form[i];
            b->round = b->usable && i > 0 && by_form[i - 1]->form == b->form;
            n_first += !b->round;
        }
    }
    printf("size %d: %d decided by the solver, %d first of their form, %d rules below; forms "
           "hashed in %.2f s cpu\n",
           size, n_dec, n_first, base.n, form_cpu);
    /* chunk c < chunks: the solver's first round, in id order (--by-min: by
     * the smaller side's operators, then id); chunks: the second round */
    int pos = 0;
    for (int lo = by_min ? 0 : -1; lo <= (by_min ? size : -1); lo++)
        for (int i = 0; i < n_dec; i++)
            if (!dec[i].round && (lo < 0 || min_ops(&dec[i].r) == lo))
                dec[i].chunk = (int)((long long)pos++ * chunks / n_first);
    for (int i = 0; i < n_dec; i++)
        if (dec[i].round) dec[i].chunk = chunks;
    int saved = 0, saved_unknown = 0;
    double derive_cpu = 0;
    for (int k = 1; k <= chunks && st == XF_OK; k++) {
        for (int i = 0; i < n_dec && st == XF_OK; i++) /* chunk k-1 decided: its proved join */
            if (dec[i].chunk == k - 1 && !dec[i].joined && dec[i].verdict == XF_RULE_PROVED &&
                push(&base, &dec[i].r, dec[i].id))
                st = XF_FAIL(&err, XF_ERR_NOMEM, "out of memory");
        xf_deriver *d = NULL;
        if (st == XF_OK) st = xf_deriver_new(base.r, base.id, base.n, &o, &d, &err);
        int searched = 0, joined[XF_RULE_STATUS_COUNT] = {0}, one_step = 0, firsts = 0;
        int searched_firsts = 0;
        double firsts_cpu = 0;
        double p0 = xf_clock_thread_cpu();
        for (int i = 0; i < n_dec && st == XF_OK; i++) {
            if (dec[i].joined || dec[i].chunk < k) continue;
            if (sample > 1 && (uint32_t)((uint64_t)dec[i].id * 2654435761u) >= UINT32_MAX / sample)
                continue;
            xf_derivation dv;
            double c1 = xf_clock_thread_cpu();
            st = xf_derive_rule(d, &dec[i].r, &dv, &err);
            searched++;
            if (!dec[i].round) searched_firsts++, firsts_cpu += xf_clock_thread_cpu() - c1;
            if (st != XF_OK || !dv.found) continue;
            dec[i].joined = 1;
            joined[dec[i].verdict]++;
            if (dec[i].verdict == XF_RULE_REFUTED) {
                printf("  joined but refuted: rule %lld by", (long long)dec[i].id);
                for (int j = 0; j < dv.n_steps; j++)
                    printf(" %s%lld", dv.steps[j].backward ? "-" : "", (long long)dv.steps[j].by_rule);
                printf("\n");
            }
            one_step += dv.n_steps == 1;
            firsts += !dec[i].round;
        }
        double cpu = xf_clock_thread_cpu() - p0;
        derive_cpu += cpu;
        saved += joined[XF_RULE_PROVED] + joined[XF_RULE_REFUTED];
        saved_unknown += joined[XF_RULE_UNKNOWN];
        printf("pass %d (%d rules): searched %d, joined %d (proved %d, unknown %d, refuted %d), "
               "%d in one step, %d first of their form; %.2f s cpu (%.2f ms a rule; firsts %d in "
               "%.2f s)\n",
               k, xf_deriver_rules(d), searched,
               joined[XF_RULE_PROVED] + joined[XF_RULE_UNKNOWN] + joined[XF_RULE_REFUTED],
               joined[XF_RULE_PROVED], joined[XF_RULE_UNKNOWN], joined[XF_RULE_REFUTED], one_step,
               firsts, cpu, searched ? cpu * 1e3 / searched : 0.0, searched_firsts, firsts_cpu);
        xf_deriver_free(d);
    }
    if (st == XF_OK)
        printf("solver calls saved: %d of %d (%.1f%%; %d of them unknown to the solver); derive "
               "passes %.2f s cpu\n",
               saved + saved_unknown, n_dec,
               n_dec ? 100.0 * (saved + saved_unknown) / n_dec : 0.0, saved_unknown, derive_cpu);
    else fprintf(stderr, "bench_derive_rounds: %s\n", err.msg);
    for (int i = 0; i < n_small; i++) xf_rule_free(&small[i].r);
    for (int i = 0; i < n_dec; i++) xf_rule_free(&dec[i].r);
    xf_free(small);
    xf_free(dec);
    xf_free(by_form);
    xf_free(base.r);
    xf_free(base.id);
    xf_rulesdb_close(db);
    return st == XF_OK ? 0 : 1;
}
