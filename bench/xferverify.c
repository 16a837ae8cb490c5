/*
 * bench/xferverify.c — how fast xferverify decides rules, against TASO's
 * Python verifier (619 rules in 332 s, 1.9 rules/s).
 *
 *   bench_xferverify [DB] [--max-ops N] [--vocab V] [-j N] [--timeout T] [--max-shapes N]
 *                    [--max-size N] [--no-derive] [--recheck]
 *
 * Without DB it runs `xfergen --vocab taso --max-ops 3` (or V, N) into a
 * fresh temporary database; then `xferverify -j 2` on it (with --max-shapes
 * when given: input shapes per rule in the bounded check; --max-size,
 * --no-derive and --recheck passed on), and prints the proved / refuted /
 * unknown / derived counts from the database, the wall time and the rate,
 * and per size: candidates, derived, sent to the solver and the derive
 * pass's time (from xferverify's per-size summary lines, which are printed
 * as they are) and the statuses each size ends with.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rulesdb/rulesdb.h"

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
    const char *db = NULL, *max_ops = "3", *jobs = "2", *timeout = "10s", *vocab = "taso",
               *shapes = NULL, *max_size = NULL;
    int derive = 1, recheck = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--max-ops") && i + 1 < argc) max_ops = argv[++i];
        else if (!strcmp(argv[i], "--vocab") && i + 1 < argc) vocab = argv[++i];
        else if (!strcmp(argv[i], "--max-shapes") && i + 1 < argc) shapes = argv[++i];
        else if (!strcmp(argv[i], "-j") && i + 1 < argc) jobs = argv[++i];
        else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) timeout = argv[++i];
        else if (!strcmp(argv[i], "--max-size") && i + 1 < argc) max_size = argv[++i];
        else if (!strcmp(argv[i], "--no-derive")) derive = 0;
        else if (!strcmp(argv[i], "--recheck")) recheck = 1;
        else if (argv[i][0] != '-' && !db) db = argv[i];
        else {
            fprintf(stderr, "usage: bench_xferverify [DB] [--max-ops N] [--vocab V] [-j N] "
                            "[--timeout T] [--max-shapes N] [--max-size N] [--no-derive] "
                            "[--recheck]\n");
            return 2;
        }
    }
    char tmp[256], cmd[1024];
    if (!db) {
        snprintf(tmp, sizeof tmp, "/tmp/bench_xferverify_%d.db", (int)getpid());
        remove(tmp);
        snprintf(cmd, sizeof cmd, "%s/xfergen --vocab %s --max-ops %s -o %s >/dev/null",
                 XF_BIN_PATH, vocab, max_ops, tmp);
        if (system(cmd) != 0) {
            fprintf(stderr, "bench_xferverify: xfergen failed: %s\n", cmd);
            return 1;
        }
        db = tmp;
    }
    char shape_opt[64] = "", size_opt[64] = "", log[300];
    if (shapes) snprintf(shape_opt, sizeof shape_opt, " --max-shapes %s", shapes);
    if (max_size) snprintf(size_opt, sizeof size_opt, " --max-size %s", max_size);
    snprintf(log, sizeof log, "/tmp/bench_xferverify_%d.log", (int)getpid());
    snprintf(cmd, sizeof cmd, "%s/xferverify %s -j %s --timeout %s%s%s%s%s 2>%s", XF_BIN_PATH, db,
             jobs, timeout, recheck ? " --recheck" : "", derive ? "" : " --no-derive", shape_opt,
             size_opt, log);
    double t0 = xf_clock_now();
    int rc = system(cmd);
    double wall = xf_clock_now() - t0;
    FILE *lf = fopen(log, "r");
    char line[512];
    while (lf && fgets(line, sizeof line, lf))
        if (!strncmp(line, "size ", 5) && !strstr(line, "derive [") && !strstr(line, "solver ["))
            printf("  %s", line);
    if (lf) fclose(lf);
    remove(log);
    xf_rulesdb *h;
    xf_error err;
    if (xf_rulesdb_open(db, XF_RULESDB_READONLY, &h, &err) != XF_OK) {
        fprintf(stderr, "bench_xferverify: %s\n", err.msg);
        return 1;
    }
    xf_rulesdb_count *rows;
    int n;
    int64_t decided = 0;
    if (xf_rulesdb_count_by(h, XF_RULESDB_BY_STATUS, &rows, &n, &err) != XF_OK) {
        fprintf(stderr, "bench_xferverify: %s\n", err.msg);
        xf_rulesdb_close(h);
        return 1;
    }
    printf("xferverify on %s (-j %s, timeout %s, max-shapes %s), exit %d\n", db, jobs, timeout,
           shapes ? shapes : "default", rc);
    for (int i = 0; i < n; i++) {
        printf("  %-10s %lld\n", rows[i].key, (long long)rows[i].n);
        if (!strcmp(rows[i].key, "proved") || !strcmp(rows[i].key, "refuted") ||
            !strcmp(rows[i].key, "unknown") || !strcmp(rows[i].key, "derived"))
            decided += rows[i].n;
    }
    if (print_sizes(h) != 0) rc = 1;
    printf("  wall %.1f s, %.2f rules/s decided or derived (TASO: 619 rules in 332 s = 1.86 "
           "rules/s, x%.1f)\n",
           wall,
           (double)decided / wall, (double)decided / wall / (619.0 / 332.0));
    xf_free(rows);
    xf_rulesdb_close(h);
    return 0;
}
