/*
 * xfergen.c — benchmark of the rule generator as users run it: the xfergen
 * binary in a child process, for TASO's vocabulary at 3 operators and the
 * default vocabulary at 3 (and, with --max4, 4) operators. For each it
 * prints graphs enumerated, distinct fingerprints, candidates, the rules
 * left after each pruning stage (read back from the run's row in the rules
 * database), wall time and the child's peak RSS (wait4 rusage). Then it
 * compares the databases with TASO's 619 generated and 133 shipped rules
 * (method in xfergen_coverage.c).
 *
 * usage: bench_xfergen [--max4] [-j N] [--dir DIR] [--missing N]
 */
#define _DEFAULT_SOURCE /* wait4 */

#include "xfergen_coverage.h"

#include "rulesdb/rulesdb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef XF_XFERGEN_PATH
#define XF_XFERGEN_PATH "xfergen"
#endif
#ifndef XF_SHARED_DEFAULT
#define XF_SHARED_DEFAULT "../shared"
#endif

typedef struct figures {
    long long graphs, fingerprints, candidates, left[4];
    double wall_s, enum_s;
    long peak_rss_kb;
    int status;
} figures;

static long long stage_count(const xf_rulesdb_run_info *info, const char *name, double *secs)
{
    for (int i = 0; i < info->n_stages; i++)
        if (strcmp(info->stages[i].name, name) == 0) {
            if (secs) *secs = info->stages[i].seconds;
            return (long long)info->stages[i].count;
        }
    return -1;
}

static int read_figures(const char *db_path, figures *f)
{
    xf_rulesdb *db;
    xf_error err;
    if (xf_rulesdb_open(db_path, XF_RULESDB_READONLY, &db, &err) != XF_OK) {
        fprintf(stderr, "bench_xfergen: %s\n", err.msg);
        return -1;
    }
    int64_t id;
    int n = 0;
    xf_rulesdb_run_info info;
    xf_rulesdb_run_info_init(&info);
    int ok = xf_rulesdb_run_recent(db, &id, 1, &n, &err) == XF_OK && n == 1 &&
             xf_rulesdb_run_get(db, id, &info, &err) == XF_OK;
    if (ok) {
        f->graphs = stage_count(&info, "enumerate", &f->enum_s);
        f->fingerprints = stage_count(&info, "fingerprints", NULL);
        f->candidates = stage_count(&info, "candidates", NULL);
        static const char *const st[4] = {"prune-renaming", "prune-common-subgraph",
                                          "prune-common-supergraph", "prune-generality"};
        for (int i = 0; i < 4; i++) f->left[i] = stage_count(&info, st[i], NULL);
    } else {
        fprintf(stderr, "bench_xfergen: %s: no run recorded\n", db_path);
    }
    xf_rulesdb_run_info_free(&info);
    xf_rulesdb_close(db);
    return ok ? 0 : -1;
}

/* Runs xfergen in a child; fills wall time, peak RSS and exit status. */
static int run_one(const char *vocab, int max_ops, int threads, const char *db, figures *f)
{
    char ops[16], th[16];
    snprintf(ops, sizeof ops, "%d", max_ops);
    snprintf(th, sizeof th, "%d", threads);
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "rm -f '%s' '%s-wal' '%s-shm' '%s'.run*", db, db, db, db);
    if (system(cmd) != 0) return -1;
    double t0 = xf_clock_now();
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        execl(XF_XFERGEN_PATH, "xfergen", "--max-ops", ops, "--vocab", vocab, "-j", th, "-o", db,
              "--quiet", (char *)NULL);
        perror("bench_xfergen: exec " XF_XFERGEN_PATH);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) return -1;
    f->wall_s = xf_clock_now() - t0;
    f->peak_rss_kb = ru.ru_maxrss;
    f->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (f->status != 0) {
        fprintf(stderr, "bench_xfergen: xfergen --vocab %s --max-ops %d exited with %d\n", vocab,
                max_ops, f->status);
        return -1;
    }
    return read_figures(db, f);
}

int main(int argc, char **argv)
{
    int max4 = 0, threads = 2, missing = 10;
    const char *dir = "/tmp";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--max4") == 0) max4 = 1;
        else if (strcmp(argv[i], "-j") == 0 && i + 1 < argc) threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) dir = argv[++i];
        else if (strcmp(argv[i], "--missing") == 0 && i + 1 < argc) missing = atoi(argv[++i]);
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("usage: bench_xfergen [--max4] [-j N] [--dir DIR] [--missing N]\n"
                   "Runs xfergen for --vocab taso and default at 3 operators (and default at 4\n"
                   "with --max4, up to 15 min), prints the counts per stage, wall time and peak\n"
                   "RSS, then coverage against TASO's rules; --missing N lists N missing ones;\n"
                   "databases go to DIR (default /tmp).\n");
            return 0;
        } else {
            fprintf(stderr, "usage: bench_xfergen [--max4] [-j N] [--dir DIR] [--missing N]\n");
            return 2;
        }
    }
    static const struct {
        const char *vocab;
        int max_ops;
    } configs[] = {{"taso", 3}, {"default", 3}, {"default", 4}};
    int n_configs = max4 ? 3 : 2;
    char dbs[3][4096];
    printf("%-12s %5s %12s %12s %10s %9s %9s %9s %9s %9s %10s\n", "vocab", "ops", "graphs",
           "fingerprnts", "candidates", "renaming", "com-sub", "com-sup", "general", "wall s",
           "peak MiB");
    int failed = 0;
    for (int c = 0; c < n_configs; c++) {
        snprintf(dbs[c], sizeof dbs[c], "%s/bench_xfergen_%s_%d.db", dir, configs[c].vocab,
                 configs[c].max_ops);
        figures f;
        memset(&f, 0, sizeof f);
        if (run_one(configs[c].vocab, configs[c].max_ops, threads, dbs[c], &f) != 0) {
            failed = 1;
            dbs[c][0] = '\0';
            continue;
        }
        printf("%-12s %5d %12lld %12lld %10lld %9lld %9lld %9lld %9lld %9.2f %10.1f\n",
               configs[c].vocab, configs[c].max_ops, f.graphs, f.fingerprints, f.candidates,
               f.left[0], f.left[1], f.left[2], f.left[3], f.wall_s, (double)f.peak_rss_kb / 1024.0);
        fflush(stdout);
    }

    const char *shared = getenv("XF_SHARED_DIR");
    if (!shared) shared = XF_SHARED_DEFAULT;
    static const char *const refs[2][2] = {{"taso_generated_619.txt", "TASO generated (619)"},
                                           {"taso_shipped_133.txt", "TASO shipped (133)"}};
    for (int c = 0; c < n_configs; c++) {
        if (!dbs[c][0]) continue;
        for (int r = 0; r < 2; r++) {
            char ref[4096], label[128];
            snprintf(ref, sizeof ref, "%s/reference/%s", shared, refs[r][0]);
            snprintf(label, sizeof label, "%s vs %s %d ops", refs[r][1], configs[c].vocab,
                     configs[c].max_ops);
            xf_error err;
            if (xfb_coverage(dbs[c], ref, label, c == 0 && r == 0 ? missing : 0, stdout, &err) !=
                XF_OK) {
                fprintf(stderr, "bench_xfergen: coverage: %s\n", err.msg);
                failed = 1;
            }
        }
    }
    return failed;
}
