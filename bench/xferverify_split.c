/*
 * bench/xferverify_split.c — where the verification time of a sample of
 * rules goes: the axiomatic proof against the bounded check, by verdict,
 * and which resource limit would keep which verdicts.
 *
 *   bench_xferverify_split DB [--size N]... [--sample N] [--seed S] [--timeout T_MS]
 *                          [--rlimit N] [--cross-rlimit N] [--no-bounded] [--slowest N]
 *
 * DB is only read. The sample is, for each --size given (default 3 and 4),
 * the N candidates (default 300) whose ids come first under the hash
 * (id * 2654435761 + S) mod 1000003 — the same rules on every run and every
 * machine (docs/log/verify.md "Unknown rules" uses --seed 19). Each rule is
 * decided in this process by one prepared verifier, as an xferverify worker
 * does (no fork): the proof, then the bounded check (refute-only when the
 * proof failed; the full check too, for comparison), each timed in CPU time
 * (which the machine's load does not change). Prints per size the verdicts
 * (proved / refuted / unknown, unknowns by reason), the CPU time of the
 * proofs and of the bounded checks with p50/p90/p99/max, the share spent
 * on rules that end unknown; for the rules the axioms did not prove, the
 * bounded CPU of the refute-only check xferverify runs against the full
 * check and which verdicts differ; and for rlimits from 0.25 M to 3 M
 * units the rules a lower limit may turn unknown (a refuted rule whose
 * bounded check, or a proved rule whose proof, needed more) and the proved
 * rules whose bounded check it would cut short, against the bounded CPU
 * time it would save (a stopped check is charged its time scaled down to
 * the limit). --no-bounded times the proofs alone; --slowest N lists the N
 * rules that took the most CPU with their bounded check's detail.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rulesdb/rulesdb.h"
#include "verify/verify.h"

#define MAX_SIZES 8

typedef struct sample_rule {
    int64_t id;
    uint64_t key;
} sample_rule;

typedef struct outcome {
    double proof_ms, bounded_ms; /* CPU */
    uint64_t proof_units, bounded_units;
    int verdict;                 /* 0 proved, 1 refuted, 2 unknown */
    xf_verify_why why;
    /* not proved: the full bounded check (xf_verify_bounded) next to the
       refute-only one xferverify runs (xf_verify_bounded_refute) */
    int unproved, full_verdict;
    double full_ms;
    int64_t id;
    char full_detail[256], detail[256];
} outcome;

static double cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int by_key(const void *a, const void *b)
{
    const sample_rule *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key ? 1 : (x->id > y->id) - (x->id < y->id);
}

static int by_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The sample of one size: n candidate ids, first under the seeded hash. */
static int pick(xf_rulesdb *db, int size, int n, unsigned seed, sample_rule **out, int *got)
{
    xf_rulesdb_filter f;
    memset(&f, 0, sizeof f);
    f.status = XF_RULE_CANDIDATE;
    f.size = size;
    xf_rulesdb_iter *it = NULL;
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    xf_error err;
    int cap = 1024, k = 0, has = 1;
    sample_rule *all = xf_malloc(sizeof *all * (size_t)cap);
    if (!all || xf_rulesdb_iter_begin(db, &f, &it, &err) != XF_OK) {
        fprintf(stderr, "bench_xferverify_split: %s\n", all ? err.msg : "out of memory");
        xf_free(all);
        return -1;
    }
    while (xf_rulesdb_iter_next(it, &info, &has, &err) == XF_OK && has) {
        if (k == cap) {
            sample_rule *grown = xf_realloc(all, sizeof *all * (size_t)cap * 2);
            if (!grown) break;
            all = grown, cap *= 2;
        }
        all[k].id = info.id;
        all[k++].key = ((uint64_t)info.id * 2654435761u + seed) % 1000003u;
    }
    xf_rulesdb_iter_free(it);
    xf_rulesdb_rule_info_free(&info);
    qsort(all, (size_t)k, sizeof *all, by_key);
    *out = all;
    *got = k < n ? k : n;
    return 0;
}

static void decide(xf_verifier *v, xf_rulesdb *db, int64_t id, int bounded_on, outcome *o)
{
    xf_rule r;
    xf_rule_init(&r);
    xf_error err;
    memset(o, 0, sizeof *o);
    o->verdict = 2;
    if (xf_rulesdb_load_rule(db, id, &r, &err) != XF_OK) {
        fprintf(stderr, "rule %lld: %s\n", (long long)id, err.msg);
        xf_rule_free(&r);
        return;
    }
    xf_proof p;
    double t0 = cpu_ms();
    xf_status st = xf_verify_prove(v, &r, &p, &err);
    o->proof_ms = cpu_ms() - t0;
    o->proof_units = p.rlimit_used;
    xf_bounded b;
    xf_bounded_init(&b);
    b.result = XF_BOUNDED_VALID;
    o->unproved = st == XF_OK && p.result != XF_PROOF_PROVED;
    if (st == XF_OK && bounded_on && o->unproved) {
        t0 = cpu_ms();
        st = xf_verify_bounded(v, &r, &b, &err);
        o->full_ms = cpu_ms() - t0;
        o->full_verdict = b.result == XF_BOUNDED_REFUTED ? 1 : 2;
        snprintf(o->full_detail, sizeof o->full_detail, "%s", b.detail);
        xf_bounded_free(&b);
    }
    if (st == XF_OK && bounded_on) {
        t0 = cpu_ms();
        st = o->unproved ? xf_verify_bounded_refute(v, &r, &b, &err)
                         : xf_verify_bounded_cross(v, &r, &b, &err);
        o->bounded_ms = cpu_ms() - t0;
        o->bounded_units = b.rlimit_used;
        snprintf(o->detail, sizeof o->detail, "%s", b.detail);
    }
    o->id = id;
    if (st != XF_OK) fprintf(stderr, "rule %lld: %s\n", (long long)id, err.msg);
    else if (b.result == XF_BOUNDED_REFUTED) o->verdict = 1;
    else if (p.result == XF_PROOF_PROVED) o->verdict = 0; /* as xferverify: bounded did not refute */
    if (st == XF_OK && o->verdict == 2)
        o->why = b.result == XF_BOUNDED_UNKNOWN || b.result == XF_BOUNDED_UNSUPPORTED ? b.why : p.why;
    xf_bounded_free(&b);
    xf_rule_free(&r);
}

static void quantiles(const char *what, const outcome *o, int n, int bounded)
{
    double *t = xf_malloc(sizeof *t * (size_t)(n ? n : 1)), sum = 0;
    if (!t) return;
    for (int i = 0; i < n; i++) sum += t[i] = bounded ? o[i].bounded_ms : o[i].proof_ms;
    qsort(t, (size_t)n, sizeof *t, by_double);
    if (n)
        printf("  %-8s CPU %8.1f s  p50 %7.1f  p90 %7.1f  p99 %8.1f  max %8.1f ms\n", what, sum / 1e3,
               t[n / 2], t[n * 9 / 10], t[n * 99 / 100], t[n - 1]);
    xf_free(t);
}

static int by_cost(const void *a, const void *b)
{
    const outcome *x = *(const outcome *const *)a, *y = *(const outcome *const *)b;
    double cx = x->proof_ms + x->bounded_ms, cy = y->proof_ms + y->bounded_ms;
    return (cx < cy) - (cx > cy);
}

/* The `show` rules that took the most CPU, with their bounded check's detail. */
static void slowest(const outcome *o, int n, int show)
{
    const outcome **by = xf_malloc(sizeof *by * (size_t)(n ? n : 1));
    if (!by) return;
    for (int i = 0; i < n; i++) by[i] = &o[i];
    qsort(by, (size_t)n, sizeof *by, by_cost);
    static const char *const verdict[3] = {"proved", "refuted", "unknown"};
    for (int i = 0; i < n && i < show; i++)
        printf("    rule %lld: %s, proof %.0f ms, bounded %.0f ms (%llu units): %s\n",
               (long long)by[i]->id, verdict[by[i]->verdict], by[i]->proof_ms, by[i]->bounded_ms,
               (unsigned long long)by[i]->bounded_units, by[i]->detail);
    xf_free(by);
}

static void report(int size, const outcome *o, int n, int bounded_on, int show)
{
    int count[3] = {0}, why[XF_WHY_UNSUPPORTED + 1] = {0};
    double unk_ms = 0, all_ms = 0;
    for (int i = 0; i < n; i++) {
        count[o[i].verdict]++;
        if (o[i].verdict == 2) why[o[i].why]++, unk_ms += o[i].proof_ms + o[i].bounded_ms;
        all_ms += o[i].proof_ms + o[i].bounded_ms;
    }
    printf("size %d: %d rules: proved %d, refuted %d, unknown %d (%.1f%%); unknown by reason:", size, n,
           count[0], count[1], count[2], n ? 100.0 * count[2] / n : 0.0);
    for (int w = 0; w <= XF_WHY_UNSUPPORTED; w++)
        if (why[w]) printf(" %s %d", xf_verify_why_name((xf_verify_why)w), why[w]);
    printf("\n  CPU %.1f s (%.1f ms a rule), %.0f%% of it on rules that end unknown\n", all_ms / 1e3,
           n ? all_ms / n : 0.0, all_ms > 0 ? 100.0 * unk_ms / all_ms : 0.0);
    quantiles("proof", o, n, 0);
    if (!bounded_on) return;
    quantiles("bounded", o, n, 1);
    slowest(o, n, show);
    int unproved = 0, changed = 0;
    double full = 0, refute = 0;
    for (int i = 0; i < n; i++) {
        if (!o[i].unproved) continue;
        unproved++, full += o[i].full_ms, refute += o[i].bounded_ms;
        if (o[i].full_verdict != o[i].verdict) {
            changed++;
            printf("    rule %lld: %s refute-only (%s), %s full (%s)\n", (long long)o[i].id,
                   o[i].verdict == 1 ? "refuted" : "unknown", o[i].detail,
                   o[i].full_verdict == 1 ? "refuted" : "unknown", o[i].full_detail);
        }
    }
    printf("  not proved by the axioms: %d rules; bounded CPU %.1f s refute-only (xferverify) against "
           "%.1f s full; %d verdict(s) differ\n", unproved, refute / 1e3, full / 1e3, changed);
    /* Under a lower limit L a refuted rule whose bounded check needed more
       than L, or a proved rule whose proof did (its queries summed: an upper
       bound), may turn unknown; a proved rule whose bounded check needed more
       stays proved with fewer shapes checked. */
    static const double limits[] = {250e3, 500e3, 1e6, 2e6, 3e6};
    for (size_t l = 0; l < sizeof limits / sizeof limits[0]; l++) {
        int lost = 0, shorter = 0;
        double saved = 0;
        for (int i = 0; i < n; i++) {
            int over = (double)o[i].bounded_units > limits[l];
            lost += (o[i].verdict == 1 && over) || (o[i].verdict == 0 && (double)o[i].proof_units > limits[l]);
            shorter += o[i].verdict == 0 && over;
            if (over) saved += o[i].bounded_ms * (1.0 - limits[l] / (double)o[i].bounded_units);
        }
        printf("  rlimit %.2g: at most %d decided rule(s) would turn unknown, %d proved with a shorter "
               "bounded check, %.1f s of bounded CPU saved\n",
               limits[l], lost, shorter, saved / 1e3);
    }
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    int sizes[MAX_SIZES], n_sizes = 0, n = 300, bounded_on = 1, show = 0;
    unsigned seed = 19;
    xf_verify_options vo;
    xf_verify_options_init(&vo);
    for (int i = 1; i < argc; i++) {
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--size") && val && n_sizes < MAX_SIZES) sizes[n_sizes++] = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--sample") && val) n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--seed") && val) seed = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--timeout") && val) vo.timeout_ms = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--rlimit") && val) vo.rlimit = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--cross-rlimit") && val)
            vo.cross_rlimit = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--no-bounded")) bounded_on = 0;
        else if (!strcmp(argv[i], "--slowest") && val) show = atoi(argv[++i]);
        else if (argv[i][0] != '-' && !path) path = argv[i];
        else path = NULL, i = argc;
    }
    if (!path || n < 1) {
        fprintf(stderr, "usage: bench_xferverify_split DB [--size N]... [--sample N] [--seed S] "
                        "[--timeout T_MS] [--rlimit N] [--cross-rlimit N] [--no-bounded] [--slowest N]\n");
        return 2;
    }
    if (!n_sizes) sizes[n_sizes++] = 3, sizes[n_sizes++] = 4;
    xf_rulesdb *db = NULL;
    xf_verifier *v = NULL;
    xf_error err;
    if (xf_rulesdb_open(path, XF_RULESDB_READONLY, &db, &err) != XF_OK ||
        xf_verifier_new(&vo, &v, &err) != XF_OK || xf_verifier_prepare(v, &err) != XF_OK) {
        fprintf(stderr, "bench_xferverify_split: %s\n", err.msg);
        xf_verifier_free(v);
        xf_rulesdb_close(db);
        return 1;
    }
    printf("%s: %d candidates per size, seed %u, timeout %u ms, rlimit %u, cross-check rlimit %u, "
           "%d axioms%s\n", path, n, seed, vo.timeout_ms, vo.rlimit, vo.cross_rlimit,
           xf_verify_axiom_count(), bounded_on ? "" : ", proofs only");
    int rc = 0;
    for (int s = 0; s < n_sizes && rc == 0; s++) {
        sample_rule *rules = NULL;
        int got = 0;
        outcome *o = NULL;
        if (pick(db, sizes[s], n, seed, &rules, &got) || !(o = xf_calloc((size_t)got + 1, sizeof *o))) {
            rc = 1;
        } else {
            for (int i = 0; i < got; i++) decide(v, db, rules[i].id, bounded_on, &o[i]);
            report(sizes[s], o, got, bounded_on, show);
        }
        xf_free(o);
        xf_free(rules);
    }
    xf_verifier_free(v);
    xf_rulesdb_close(db);
    return rc;
}
