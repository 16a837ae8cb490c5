/*
 * bench/xferverify.c — how fast xferverify decides rules, against TASO's
 * Python verifier (619 rules in 332 s, 1.9 rules/s).
 *
 *   bench_xferverify [DB] [--max-ops N] [--vocab V] [-j N] [--timeout T] [--max-shapes N]
 *
 * Without DB it runs `xfergen --vocab taso --max-ops 3` (or V, N) into a
 * fresh temporary database; then `xferverify -j 2 --recheck` on it (with
 * --max-shapes when given: input shapes per rule in the bounded check), and
 * prints the proved / refuted / unknown counts from the database, the wall
 * time and the rate.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rulesdb/rulesdb.h"

int main(int argc, char **argv)
{
    const char *db = NULL, *max_ops = "3", *jobs = "2", *timeout = "10s", *vocab = "taso",
               *shapes = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--max-ops") && i + 1 < argc) max_ops = argv[++i];
        else if (!strcmp(argv[i], "--vocab") && i + 1 < argc) vocab = argv[++i];
        else if (!strcmp(argv[i], "--max-shapes") && i + 1 < argc) shapes = argv[++i];
        else if (!strcmp(argv[i], "-j") && i + 1 < argc) jobs = argv[++i];
        else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) timeout = argv[++i];
        else if (argv[i][0] != '-' && !db) db = argv[i];
        else {
            fprintf(stderr, "usage: bench_xferverify [DB] [--max-ops N] [--vocab V] [-j N] "
                            "[--timeout T] [--max-shapes N]\n");
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
    char shape_opt[64] = "";
    if (shapes) snprintf(shape_opt, sizeof shape_opt, " --max-shapes %s", shapes);
    snprintf(cmd, sizeof cmd, "%s/xferverify %s -j %s --timeout %s --recheck%s", XF_BIN_PATH, db,
             jobs, timeout, shape_opt);
    double t0 = xf_clock_now();
    int rc = system(cmd);
    double wall = xf_clock_now() - t0;
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
            !strcmp(rows[i].key, "unknown"))
            decided += rows[i].n;
    }
    printf("  wall %.1f s, %.2f rules/s (TASO: 619 rules in 332 s = 1.86 rules/s, x%.1f)\n", wall,
           (double)decided / wall, (double)decided / wall / (619.0 / 332.0));
    xf_free(rows);
    xf_rulesdb_close(h);
    return 0;
}
