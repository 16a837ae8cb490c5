/*
 * bench/xferverify.c — how fast xferverify decides rules, single-process
 * and under MPI, and what that projects to at 64 ranks.
 *
 *   bench_xferverify [DB] [--max-ops N] [--vocab V] [-j N] [--timeout T] [--max-shapes N]
 *                    [--rlimit N] [--sample N] [--mpi N] [--project N] [--max-size N]
 *                    [--no-derive]
 *
 * Without DB it runs `xfergen --vocab taso --max-ops 3` (or V, N) into a
 * fresh temporary database. The runs work on copies (DB is never written):
 * with --sample N the copies keep N candidates picked evenly by a hash of
 * their ids (the others are marked pruned in the copies). It then runs
 * `xferverify -j J --recheck` on one copy and, with --mpi N, `mpirun
 * --oversubscribe -n N xferverify --recheck` on the other, and prints:
 *  - proved / refuted / unknown counts, wall time, rules/s, workers' CPU
 *    time, unknowns by reason and hard kills (xferverify's summary);
 *  - per size: candidates, derived, sent to the solver and the derive
 *    pass's time (xferverify's per-size summary lines; --no-derive and
 *    --max-size are passed on), and the statuses each size ends with;
 *  - whether the two runs gave the same verdicts (status and detail);
 *  - the per-candidate time distribution (p50/p90/p99/max of the stored
 *    wall time, and of the Z3 work in units, which load does not change);
 *  - rank 0's write rate: the decided verdicts written again to the copy
 *    in transactions of 64, as rank 0 writes them;
 *  - a projection for 64 ranks (63 deciding) over --project N candidates
 *    (default 137,600, the default vocabulary at 4 operators): compute time
 *    from the mean CPU time per rule, plus the longest rule (the last batch
 *    cannot finish before it), against N over rank 0's write rate.
 */
#define _DEFAULT_SOURCE /* wait4 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rulesdb/rulesdb.h"

typedef struct args {
    const char *db, *max_ops, *jobs, *timeout, *vocab, *shapes, *rlimit, *max_size;
    long long sample, project;
    int mpi, no_derive;
} args;

static int parse(int argc, char **argv, args *a)
{
    *a = (args){NULL, "3", "2", "10s", "taso", NULL, NULL, NULL, 0, 137600, 0, 0};
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(argv[i], "--max-ops") && v) a->max_ops = argv[++i];
        else if (!strcmp(argv[i], "--vocab") && v) a->vocab = argv[++i];
        else if (!strcmp(argv[i], "--max-shapes") && v) a->shapes = argv[++i];
        else if (!strcmp(argv[i], "-j") && v) a->jobs = argv[++i];
        else if (!strcmp(argv[i], "--timeout") && v) a->timeout = argv[++i];
        else if (!strcmp(argv[i], "--rlimit") && v) a->rlimit = argv[++i];
        else if (!strcmp(argv[i], "--sample") && v) a->sample = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--project") && v) a->project = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--mpi") && v) a->mpi = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--max-size") && v) a->max_size = argv[++i];
        else if (!strcmp(argv[i], "--no-derive")) a->no_derive = 1;
        else if (argv[i][0] != '-' && !a->db) a->db = argv[i];
        else return -1;
    }
    return a->mpi == 1 || a->mpi < 0 ? -1 : 0;
}

/* Runs cmd with sh; *wall and *cpu (children's user + system) in seconds. */
static int timed(const char *cmd, double *wall, double *cpu)
{
    double t0 = xf_clock_now();
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    int ws = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    if (pid < 0 || wait4(pid, &ws, 0, &ru) < 0) return -1;
    *wall = xf_clock_now() - t0;
    *cpu = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    return WIFEXITED(ws) ? WEXITSTATUS(ws) : -1;
}

/* Copies src to dst; with sample > 0 keeps only about `sample` candidates
 * (an even pick by a hash of the id), marking the others pruned. */
static int copy_db(const char *src, const char *dst, long long sample)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s' && rm -f '%s-wal' '%s-shm'", src, dst, dst, dst);
    if (system(cmd) != 0) return -1;
    if (sample <= 0) return 0;
    xf_rulesdb *h;
    xf_error err;
    if (xf_rulesdb_open(dst, 0, &h, &err) != XF_OK) {
        fprintf(stderr, "bench_xferverify: %s\n", err.msg);
        return -1;
    }
    int64_t total = 0;
    xf_rulesdb_filter f;
    memset(&f, 0, sizeof f);
    f.status = XF_RULE_CANDIDATE;
    xf_status st = xf_rulesdb_count_rules(h, &f, &total, &err);
    int64_t *drop = xf_malloc(sizeof *drop * (size_t)(total + 1)), n_drop = 0;
    xf_rulesdb_iter *it = NULL;
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    int has = 1;
    if (st == XF_OK && !drop) st = XF_FAIL(&err, XF_ERR_NOMEM, "out of memory");
    if (st == XF_OK) st = xf_rulesdb_iter_begin(h, &f, &it, &err);
    while (st == XF_OK && (st = xf_rulesdb_iter_next(it, &info, &has, &err)) == XF_OK && has)
        if ((uint64_t)info.id * 2654435761u % 1000003u >= (uint64_t)(1000003.0 * (double)sample / (double)total))
            drop[n_drop++] = info.id;
    xf_rulesdb_iter_free(it);
    xf_rulesdb_rule_info_free(&info);
    if (st == XF_OK) st = xf_rulesdb_begin(h, &err);
    for (int64_t i = 0; i < n_drop && st == XF_OK; i++)
        st = xf_rulesdb_set_status(h, drop[i], XF_RULE_PRUNED, "bench sample", 0, &err);
    if (st == XF_OK) st = xf_rulesdb_commit(h, &err);
    if (st != XF_OK) fprintf(stderr, "bench_xferverify: sampling %s: %s\n", dst, err.msg);
    xf_free(drop);
    xf_rulesdb_close(h);
    return st == XF_OK ? 0 : -1;
}

/* The line of the summary that starts with `key` in file path, or "". */
static void summary_line(const char *path, const char *key, char *out, size_t len)
{
    out[0] = 0;
    FILE *f = fopen(path, "r");
    char line[512];
    while (f && fgets(line, sizeof line, f)) {
        char *p = strrchr(line, '\r');
        p = p ? p + 1 : line;
        if (!strncmp(p, key, strlen(key))) {
            p[strcspn(p, "\n")] = 0;
            snprintf(out, len, "%s", p);
        }
    }
    if (f) fclose(f);
}

typedef struct run {
    double wall, cpu_self, cpu_workers;
    int rc;
    char counts[256], reasons[256], kills[256];
} run;

static void run_verify(const char *cmd_prefix, const char *db, const args *a, const char *what,
                       run *r)
{
    char cmd[2048], err_path[1024];
    snprintf(err_path, sizeof err_path, "%s.err", db);
    snprintf(cmd, sizeof cmd,
             "%s %s/xferverify '%s' -j %s --timeout %s --recheck%s%s%s%s%s%s%s 2>'%s'", cmd_prefix,
             XF_BIN_PATH, db, a->mpi && cmd_prefix[0] ? "1" : a->jobs, a->timeout,
             a->shapes ? " --max-shapes " : "", a->shapes ? a->shapes : "",
             a->rlimit ? " --rlimit " : "", a->rlimit ? a->rlimit : "",
             a->max_size ? " --max-size " : "", a->max_size ? a->max_size : "",
             a->no_derive ? " --no-derive" : "", err_path);
    r->rc = timed(cmd, &r->wall, &r->cpu_self);
    summary_line(err_path, "[", r->counts, sizeof r->counts);
    summary_line(err_path, "xferverify: unknown by reason", r->reasons, sizeof r->reasons);
    summary_line(err_path, "xferverify: ", r->kills, sizeof r->kills);
    const char *c = strstr(r->kills, "CPU time ");
    r->cpu_workers = c ? atof(c + 9) : 0;
    printf("%s: exit %d, wall %.1f s, CPU %.1f s (workers %.1f s)\n  %s\n  %s\n  %s\n", what,
           r->rc, r->wall, r->cpu_self, r->cpu_workers, r->counts, r->reasons[0] ? r->reasons : "-",
           r->kills);
    FILE *lf = fopen(err_path, "r");
    char line[512];
    while (lf && fgets(line, sizeof line, lf))
        if (!strncmp(line, "size ", 5) && !strstr(line, "derive [") && !strstr(line, "solver ["))
            printf("  %s", line);
    if (lf) fclose(lf);
}

static int cmp_d(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

static double pct(const double *v, int64_t n, double p)
{
    int64_t i = (int64_t)(p * (double)n);
    return n ? v[i < n ? i : n - 1] : 0;
}

/* Reads the decided rules of db: wall ms, work units; and compares with
 * db2 (NULL: no comparison). Writes the verdicts again to db to time rank
 * 0's writes. */
static int analyse(const char *db, const char *db2, const run *local, const args *a)
{
    xf_rulesdb *h = NULL, *h2 = NULL;
    xf_error err;
    if (xf_rulesdb_open(db, 0, &h, &err) != XF_OK ||
        (db2 && xf_rulesdb_open(db2, XF_RULESDB_READONLY, &h2, &err) != XF_OK)) {
        fprintf(stderr, "bench_xferverify: %s\n", err.msg);
        xf_rulesdb_close(h);
        return 1;
    }
    xf_rulesdb_filter f;
    memset(&f, 0, sizeof f);
    f.any_status = 1;
    xf_rulesdb_iter *it = NULL;
    xf_rulesdb_rule_info info, other;
    xf_rulesdb_rule_info_init(&info);
    xf_rulesdb_rule_info_init(&other);
    int64_t n = 0, cap = 1024, same = 0, same_detail = 0, differ = 0;
    double *ms = xf_malloc(sizeof *ms * (size_t)cap), *units = xf_malloc(sizeof *units * (size_t)cap);
    int64_t *ids = xf_malloc(sizeof *ids * (size_t)cap);
    int has = 1;
    xf_status st = ms && units && ids ? xf_rulesdb_iter_begin(h, &f, &it, &err)
                                      : XF_FAIL(&err, XF_ERR_NOMEM, "out of memory");
    while (st == XF_OK && (st = xf_rulesdb_iter_next(it, &info, &has, &err)) == XF_OK && has) {
        if (!info.has_verdict || info.status == XF_RULE_PRUNED) continue;
        if (n == cap) {
            cap *= 2;
            ms = xf_realloc(ms, sizeof *ms * (size_t)cap);
            units = xf_realloc(units, sizeof *units * (size_t)cap);
            ids = xf_realloc(ids, sizeof *ids * (size_t)cap);
            if (!ms || !units || !ids) {
                st = XF_FAIL(&err, XF_ERR_NOMEM, "out of memory");
                break;
            }
        }
        const char *w = info.detail ? strstr(info.detail, "; work ") : NULL;
        units[n] = w ? atof(w + 7) : 0;
        ms[n] = info.time_ms;
        ids[n++] = info.id;
        if (h2 && xf_rulesdb_get_rule(h2, info.id, &other, &err) == XF_OK) {
            int s = other.status == info.status;
            same += s;
            differ += !s;
            same_detail += s && info.detail && other.detail && !strcmp(info.detail, other.detail);
        }
    }
    xf_rulesdb_iter_free(it);
    xf_rulesdb_close(h2);
    if (st != XF_OK) {
        fprintf(stderr, "bench_xferverify: %s\n", err.msg);
        xf_rulesdb_close(h);
        return 1;
    }
    if (db2)
        printf("verdicts: %lld of %lld the same (%lld with the same detail, word for word), %lld "
               "differ\n",
               (long long)same, (long long)n, (long long)same_detail, (long long)differ);
    /* Rank 0's writes: the same verdicts again, 64 per transaction (the
     * time of reading them back is not counted). */
    double write_s = 0, t0 = xf_clock_now();
    int64_t written = 0;
    for (int64_t i = 0; i < n && st == XF_OK; i += 64) {
        st = xf_rulesdb_begin(h, &err);
        for (int64_t k = i; k < n && k < i + 64 && st == XF_OK; k++) {
            write_s += xf_clock_now() - t0;
            st = xf_rulesdb_get_rule(h, ids[k], &info, &err);
            t0 = xf_clock_now();
            xf_rulesdb_verdict v = {info.status,         info.time_ms,
                                    info.axioms,         info.detail,
                                    info.counterexample, info.counterexample_len,
                                    info.domain};
            if (st == XF_OK) st = xf_rulesdb_set_verdict(h, ids[k], &v, &err);
            written += st == XF_OK;
        }
        if (st == XF_OK) st = xf_rulesdb_commit(h, &err);
    }
    write_s += xf_clock_now() - t0;
    double rate = write_s > 0 ? (double)written / write_s : 0;
    xf_rulesdb_rule_info_free(&info);
    xf_rulesdb_rule_info_free(&other);
    xf_rulesdb_close(h);
    if (st != XF_OK) fprintf(stderr, "bench_xferverify: rewriting verdicts: %s\n", err.msg);
    qsort(ms, (size_t)n, sizeof *ms, cmp_d);
    qsort(units, (size_t)n, sizeof *units, cmp_d);
    double sum = 0;
    for (int64_t i = 0; i < n; i++) sum += ms[i];
    printf("per candidate (%lld), wall ms: mean %.0f p50 %.0f p90 %.0f p99 %.0f max %.0f\n",
           (long long)n, n ? sum / (double)n : 0, pct(ms, n, .5), pct(ms, n, .9), pct(ms, n, .99),
           n ? ms[n - 1] : 0);
    printf("per candidate, Z3 work units: p50 %.0f p90 %.0f p99 %.0f max %.0f\n", pct(units, n, .5),
           pct(units, n, .9), pct(units, n, .99), n ? units[n - 1] : 0);
    printf("rank 0 write rate: %lld verdicts rewritten in %.2f s = %.0f verdicts/s (64 per "
           "transaction)\n",
           (long long)written, write_s, rate);
    /* Projection: 63 deciding ranks, one rule per rank at a time. */
    double cpu_per_rule = n && local->cpu_workers > 0 ? local->cpu_workers / (double)n : 0;
    double compute = (double)a->project * cpu_per_rule / 63.0 + (n ? ms[n - 1] / 1e3 : 0);
    double writes = rate > 0 ? (double)a->project / rate : 0;
    double t64 = compute > writes ? compute : writes;
    double idle2 = cpu_per_rule > 0 ? 2.0 / cpu_per_rule : 0; /* rules/s on 2 idle cores */
    printf("projection, %lld candidates on 64 ranks (63 deciding, a core each): mean CPU %.3f s "
           "per rule -> %.0f s of work per rank + the longest rule %.1f s = %.0f s (load "
           "balance %.0f%%); rank 0 writes them in %.0f s (busy %.0f%% of the run) -> about "
           "%.0f s, %.0f rules/s; 2 idle cores at the same CPU per rule: %.1f rules/s, %.0f s "
           "(x%.1f)\n",
           a->project, cpu_per_rule, (double)a->project * cpu_per_rule / 63.0,
           n ? ms[n - 1] / 1e3 : 0, compute,
           compute > 0 ? 100 * ((double)a->project * cpu_per_rule / 63.0) / compute : 0, writes,
           t64 > 0 ? 100 * writes / t64 : 0, t64, t64 > 0 ? (double)a->project / t64 : 0, idle2,
           idle2 > 0 ? (double)a->project / idle2 : 0,
           t64 > 0 && idle2 > 0 ? ((double)a->project / t64) / idle2 : 0);
    xf_free(ms);
    xf_free(units);
    xf_free(ids);
    return 0;
}

/* Prints each size's statuses: one line per size, status=count. */
static int print_sizes(xf_rulesdb *h)
{
    xf_rulesdb_count *sizes = NULL;
    int n_sizes = 0;
    xf_error err;
    if (xf_rulesdb_count_by(h, XF_RULESDB_BY_SIZE, &sizes, &n_sizes, &err) != XF_OK) {
        fprintf(stderr, "bench_xferverify: %s\n", err.msg);
        return 1;
    }
    for (int i = 0; i < n_sizes; i++) {
        printf("  size %-3s", sizes[i].key);
        for (int s = 0; s < XF_RULE_STATUS_COUNT; s++) {
            xf_rulesdb_filter f;
            memset(&f, 0, sizeof f);
            f.status = (xf_rule_status)s;
            f.size = atoi(sizes[i].key);
            int64_t c = 0;
            if (xf_rulesdb_count_rules(h, &f, &c, &err) != XF_OK) {
                fprintf(stderr, "bench_xferverify: %s\n", err.msg);
                xf_free(sizes);
                return 1;
            }
            if (s != XF_RULE_PRUNED)
                printf(" %s %lld", xf_rulesdb_status_name(f.status), (long long)c);
        }
        printf("\n");
    }
    xf_free(sizes);
    return 0;
}

int main(int argc, char **argv)
{
    args a;
    if (parse(argc, argv, &a)) {
        fprintf(stderr, "usage: bench_xferverify [DB] [--max-ops N] [--vocab V] [-j N] "
                        "[--timeout T] [--max-shapes N] [--rlimit N] [--sample N] [--mpi N] "
                        "[--project N] [--max-size N] [--no-derive]\n");
        return 2;
    }
    char src[256], one[256], many[256], cmd[1024];
    if (!a.db) {
        snprintf(src, sizeof src, "/tmp/bench_xferverify_%d.db", (int)getpid());
        remove(src);
        snprintf(cmd, sizeof cmd, "%s/xfergen --vocab %s --max-ops %s -o %s >/dev/null",
                 XF_BIN_PATH, a.vocab, a.max_ops, src);
        if (system(cmd) != 0) {
            fprintf(stderr, "bench_xferverify: xfergen failed: %s\n", cmd);
            return 1;
        }
        a.db = src;
    }
    snprintf(one, sizeof one, "/tmp/bench_xferverify_%d_j.db", (int)getpid());
    snprintf(many, sizeof many, "/tmp/bench_xferverify_%d_mpi.db", (int)getpid());
    if (copy_db(a.db, one, a.sample) || (a.mpi && copy_db(a.db, many, a.sample))) return 1;
    printf("xferverify on %s%s (timeout %s, rlimit %s, max-shapes %s)\n", a.db,
           a.sample ? " (sample)" : "", a.timeout, a.rlimit ? a.rlimit : "default",
           a.shapes ? a.shapes : "default");
    run local, mpi;
    char what[64];
    snprintf(what, sizeof what, "-j %s", a.jobs);
    run_verify("", one, &a, what, &local);
    if (a.mpi) {
        char prefix[128];
        snprintf(prefix, sizeof prefix,
                 "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun "
                 "--oversubscribe -n %d",
                 a.mpi);
        snprintf(what, sizeof what, "mpirun -n %d (%d deciding ranks)", a.mpi, a.mpi - 1);
        run_verify(prefix, many, &a, what, &mpi);
        printf("speed-up of mpirun -n %d over -j %s: %.2f x (wall)\n", a.mpi, a.jobs,
               mpi.wall > 0 ? local.wall / mpi.wall : 0);
    }
    int rc = analyse(one, a.mpi ? many : NULL, &local, &a);
    xf_rulesdb *h;
    xf_error err;
    if (xf_rulesdb_open(one, XF_RULESDB_READONLY, &h, &err) != XF_OK) {
        fprintf(stderr, "bench_xferverify: %s\n", err.msg);
        rc = 1;
    } else {
        printf("statuses by size (-j %s run):\n", a.jobs);
        if (print_sizes(h) != 0) rc = 1;
        xf_rulesdb_close(h);
    }
    const char *suffix[] = {"", ".err", "-wal", "-shm"};
    for (int i = 0; i < 4; i++) {
        snprintf(cmd, sizeof cmd, "%s%s", one, suffix[i]);
        remove(cmd);
        snprintf(cmd, sizeof cmd, "%s%s", many, suffix[i]);
        remove(cmd);
    }
    return rc || local.rc || (a.mpi && mpi.rc);
}
