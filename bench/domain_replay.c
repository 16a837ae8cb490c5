/*
 * bench/domain_replay.c — do this build's derived domains agree with a
 * database's stored ones?
 *
 *   bench_domain_replay DB [--show N]
 *
 * Every derived rule's stored chain is replayed and its validity domain
 * composed again (xf_derive_domain, derive/replay.c), read-only, and
 * compared with the domain stored for it (both normalised). Prints how many
 * derived rules there are, how many chains fail to replay, how many domains
 * are written otherwise and, of those, how many say the same (each implies
 * the other: the normal form is no decision procedure), how many the new
 * one is narrower than (it implies the stored one: a fix that closes a
 * hole), wider than, or not comparable with, and the first N changes
 * (default 10) and failures with their rules. Nothing is written.
 *
 * It also counts the chains with a step that holds a generator at its own
 * shape (xf_domain_held_add over each step rule's two sides), by the
 * generator's operator, and those where some graph of the chain, or the
 * rule's own sides, reads such a generator by an operator that sizes it:
 * where xf_domain_add_own_size pins a dim (the pin may follow from the
 * other conditions already). The figure a change to the domain composition reports
 * (docs/log/verify.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "derive/derive.h"
#include "rulesdb/rulesdb.h"

typedef struct tally {
    long derived, failed, changed, same, narrower, wider, shown;
    long holding, sized, by_op[XF_OP_COUNT];
} tally;

/* Whether g reads a generator of h by an operator that sizes it: pinning
 * those dims says more than g's operators do. */
static xf_status pins(const xf_graph *g, const xf_domain_held *h, int *yes, xf_error *err)
{
    xf_domain a, b;
    xf_domain_init(&a);
    xf_domain_init(&b);
    xf_domain_clear(&a);
    xf_domain_clear(&b);
    xf_status st = xf_domain_add_graph(&a, g, err);
    if (st == XF_OK) st = xf_domain_add_own_size(&b, g, h, err);
    if (st == XF_OK) st = xf_domain_normalize(&a, err);
    if (st == XF_OK) st = xf_domain_normalize(&b, err);
    if (st == XF_OK && !xf_domain_equal(&a, &b)) *yes = 1;
    xf_domain_free(&a);
    xf_domain_free(&b);
    return st;
}

typedef struct seen {
    const xf_domain_held *held;
    int sized;
    xf_status st;
    xf_error *err;
} seen;

static void after_step(void *user, int i, const xf_rulesdb_step *s,
                       const xf_rulesdb_rule_info *by, const xf_graph *after)
{
    (void)i, (void)s, (void)by;
    seen *p = user;
    if (p->st == XF_OK) p->st = pins(after, p->held, &p->sized, p->err);
}

/* The generators rule id's steps hold; where a graph of its chain sizes one. */
static xf_status held_of(xf_rulesdb *db, int64_t id, const xf_rule *r,
                         const xf_rulesdb_step *steps, int n, tally *t, xf_error *err)
{
    xf_domain_held h;
    xf_domain_held_init(&h);
    xf_status st = XF_OK;
    for (int i = 0; st == XF_OK && i < n; i++) {
        xf_rule by;
        st = xf_rulesdb_load_rule(db, steps[i].by_rule, &by, err);
        if (st == XF_OK) st = xf_domain_held_add(&h, &by.src, err);
        if (st == XF_OK) st = xf_domain_held_add(&h, &by.dst, err);
        xf_rule_free(&by);
    }
    seen p = {&h, 0, XF_OK, err};
    if (st == XF_OK && h.n > 0) {
        t->holding++;
        for (int k = 0; k < h.n; k++) t->by_op[h.op[k]]++;
        st = pins(&r->src, &h, &p.sized, err);
        if (st == XF_OK) st = pins(&r->dst, &h, &p.sized, err);
        if (st == XF_OK) st = xf_derive_replay(db, id, r, steps, n, after_step, &p, err);
        if (st == XF_OK) st = p.st;
        t->sized += p.sized;
    }
    xf_domain_held_free(&h);
    return st;
}

/* The ids of the derived rules of db, into *ids (xf_malloc'd), *n. */
static xf_status derived_ids(xf_rulesdb *db, int64_t **ids, long *n, xf_error *err)
{
    xf_rulesdb_filter f;
    memset(&f, 0, sizeof f);
    f.status = XF_RULE_DERIVED;
    xf_rulesdb_iter *it = NULL;
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    long cap = 0;
    *ids = NULL;
    *n = 0;
    xf_status st = xf_rulesdb_iter_begin(db, &f, &it, err);
    for (int has = 1; st == XF_OK;) {
        st = xf_rulesdb_iter_next(it, &info, &has, err);
        if (st != XF_OK || !has) break;
        if (*n == cap) {
            cap = cap ? 2 * cap : 1024;
            int64_t *p = xf_realloc(*ids, sizeof *p * (size_t)cap);
            if (!p) {
                st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory listing derived rules");
                break;
            }
            *ids = p;
        }
        (*ids)[(*n)++] = info.id;
    }
    xf_rulesdb_rule_info_free(&info);
    xf_rulesdb_iter_free(it);
    return st;
}

/* Replays rule id's chain and compares its domain with the stored one. */
static xf_status one(xf_rulesdb *db, int64_t id, int show, tally *t, xf_error *err)
{
    xf_rule r;
    xf_rulesdb_step *steps = NULL;
    int n = 0;
    xf_domain now, was;
    xf_domain_init(&now);
    xf_domain_init(&was);
    xf_status st = xf_rulesdb_load_rule(db, id, &r, err);
    if (st == XF_OK) st = xf_rulesdb_get_derivation(db, id, &steps, &n, err);
    if (st == XF_OK) st = xf_domain_copy(&r.domain, &was, err);
    if (st == XF_OK) st = xf_domain_normalize(&was, err);
    if (st != XF_OK) goto out;
    t->derived++;
    xf_error why;
    if (xf_derive_domain(db, id, &r, steps, n, &now, &why) != XF_OK) {
        t->failed++;
        if (t->shown++ < show) printf("rule %lld: chain fails: %s\n", (long long)id, why.msg);
        goto out;
    }
    st = held_of(db, id, &r, steps, n, t, err);
    if (st != XF_OK || xf_domain_equal(&now, &was)) goto out;
    int narrower = 0, wider = 0;
    st = xf_domain_implies(&now, &was, &narrower, err);
    if (st == XF_OK) st = xf_domain_implies(&was, &now, &wider, err);
    if (st != XF_OK) goto out;
    t->changed++;
    t->same += narrower && wider;
    t->narrower += narrower && !wider;
    t->wider += wider && !narrower;
    const char *how = narrower && wider ? "the same" : narrower ? "narrower"
                      : wider           ? "wider"
                                        : "not comparable";
    if (t->shown++ < show) {
        const char *names[64];
        int k = r.src.n_inputs < 64 ? r.src.n_inputs : 64;
        for (int i = 0; i < k; i++) names[i] = r.src.values[r.src.inputs[i]].name;
        char a[1024], b[1024], s[256], d[256];
        if (xf_domain_format(&was, names, k, a, sizeof a, NULL) != XF_OK) snprintf(a, sizeof a, "?");
        if (xf_domain_format(&now, names, k, b, sizeof b, NULL) != XF_OK) snprintf(b, sizeof b, "?");
        if (xf_graph_format(&r.src, s, sizeof s, NULL) != XF_OK) snprintf(s, sizeof s, "?");
        if (xf_graph_format(&r.dst, d, sizeof d, NULL) != XF_OK) snprintf(d, sizeof d, "?");
        printf("rule %lld: %s => %s\n  stored: %s\n  now:    %s (%s)\n", (long long)id, s, d, a,
               b, how);
    }
out:
    xf_free(steps);
    xf_domain_free(&now);
    xf_domain_free(&was);
    xf_rule_free(&r);
    return st;
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    int show = 10;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--show") && i + 1 < argc) {
            show = atoi(argv[++i]);
        } else if (argv[i][0] != '-' && !path) {
            path = argv[i];
        } else {
            fprintf(stderr, "usage: bench_domain_replay DB [--show N]\n");
            return 2;
        }
    }
    if (!path) {
        fprintf(stderr, "usage: bench_domain_replay DB [--show N]\n");
        return 2;
    }
    xf_error err;
    xf_rulesdb *db = NULL;
    if (xf_rulesdb_open(path, XF_RULESDB_READONLY, &db, &err) != XF_OK) {
        fprintf(stderr, "bench_domain_replay: %s\n", err.msg);
        return 2;
    }
    int64_t *ids = NULL;
    long n = 0;
    tally t;
    memset(&t, 0, sizeof t);
    double t0 = xf_clock_now();
    xf_status st = derived_ids(db, &ids, &n, &err);
    for (long i = 0; st == XF_OK && i < n; i++) st = one(db, ids[i], show, &t, &err);
    if (st != XF_OK) fprintf(stderr, "bench_domain_replay: %s\n", err.msg);
    printf("domain replay: %ld derived rules, %ld chains fail, %ld domains written otherwise (%ld "
           "the same, %ld narrower, %ld wider, %ld not comparable), %.1f s\n",
           t.derived, t.failed, t.changed, t.same, t.narrower, t.wider,
           t.changed - t.same - t.narrower - t.wider, xf_clock_now() - t0);
    printf("chains with a step that holds a generator: %ld (", t.holding);
    for (int op = 0, first = 1; op < XF_OP_COUNT; op++) {
        if (!t.by_op[op]) continue;
        printf("%s%s %ld", first ? "" : ", ", xf_op_get((xf_op)op)->name, t.by_op[op]);
        first = 0;
    }
    printf("); a graph of the chain or a side sizes one: %ld\n", t.sized);
    xf_free(ids);
    xf_rulesdb_close(db);
    return st == XF_OK ? 0 : 2;
}
