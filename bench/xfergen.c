/*
 * xfergen.c — benchmark of the rule generator as users run it: the xfergen
 * binary in a child process, for TASO's vocabulary at 3 operators and the
 * default vocabulary at 3 (and, with --max4, 4) operators. For each it
 * prints graphs enumerated, distinct fingerprints, candidates, the rules
 * left after each pruning stage (read back from the run's row in the rules
 * database), wall time, the child's CPU time and peak RSS (wait4 rusage;
 * CPU time is the figure to compare on a loaded machine) and the database
 * size. Then graphs and wall time per level, CPU time per phase and, from
 * the largest run, a projection of one more operator: graphs from the last
 * level's growth ratio, time from the measured CPU rate of the last level
 * (on the cores used and on 64 ranks), disk for the last level's spill. Then it compares
 * the databases with TASO's 619 generated and 133 shipped rules (method in
 * xfergen_coverage.c).
 *
 * With --mpi N (a build with MPI, mpirun installed) each configuration also
 * runs as `mpirun --oversubscribe -n N xfergen` into another database, and
 * the bench prints its wall time, the CPU time and peak RSS of every rank
 * (each rank reports them), rank 0's serial share (the time it was not
 * waiting for the workers: merging in order, spilling, pruning, writing),
 * whether the database is the one -j wrote (rules, ids, statuses, reasons,
 * input names, subsuming rules), and a projection to 64 ranks:
 * rank 0's serial time plus the workers' CPU time split 63 ways.
 *
 * usage: bench_xfergen [--max4] [-j N] [--mpi N] [--dir DIR] [--missing N] [--keep-pruned]
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

#define MAX_RANKS 64

typedef struct figures {
    long long graphs, fingerprints, candidates, left[4];
    long long level_graphs[8];
    double level_s[8];
    double wall_s, enum_s, cpu_s;
    double phase_cpu[4]; /* cpu-build, cpu-merge, cpu-confirm, cpu-emit stages */
    double prune_s, write_s;
    long peak_rss_kb;
    long long db_bytes;
    int status;
    /* under MPI, from xfergen's report: per rank CPU s and peak RSS MB
     * (rank 0 first), rank 0's wait while enumerating */
    int ranks;
    double rank_cpu_s[MAX_RANKS], rank_rss_mb[MAX_RANKS];
    double rank0_wait_s, rank0_enum_s, rank0_wall_s; /* the last: xfergen's own wall time */
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
        for (int i = 0; i < 4; i++) {
            double secs = 0;
            f->left[i] = stage_count(&info, st[i], &secs);
            f->prune_s += secs;
        }
        static const char *const ph[4] = {"cpu-build", "cpu-merge", "cpu-confirm", "cpu-emit"};
        for (int i = 0; i < 4; i++) stage_count(&info, ph[i], &f->phase_cpu[i]);
        stage_count(&info, "write", &f->write_s);
        for (int l = 1; l < 8; l++) {
            char name[32];
            snprintf(name, sizeof name, "level-%d", l);
            f->level_graphs[l] = stage_count(&info, name, &f->level_s[l]);
        }
    } else {
        fprintf(stderr, "bench_xfergen: %s: no run recorded\n", db_path);
    }
    xf_rulesdb_run_info_free(&info);
    xf_rulesdb_close(db);
    return ok ? 0 : -1;
}

/* Runs xfergen in a child; fills wall time, peak RSS and exit status. */
static long long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long long)sb.st_size : 0;
}

/* The ranks' own report (xfergen's stdout and stderr under MPI, in `log`). */
static int read_rank_report(const char *log, figures *f)
{
    FILE *in = fopen(log, "r");
    if (!in) return -1;
    char line[1024];
    while (fgets(line, sizeof line, in)) {
        int r, n;
        double cpu, mb, busy, total;
        unsigned long long pieces;
        if (sscanf(line, "xfergen: rank 0: CPU %lf s, peak RSS %lf MB", &cpu, &mb) == 2) {
            f->rank_cpu_s[0] = cpu, f->rank_rss_mb[0] = mb;
        } else if (sscanf(line, "xfergen: rank %d: %llu pieces, busy %lf s of %lf s, CPU %lf s, "
                                "peak RSS %lf MB",
                          &r, &pieces, &busy, &total, &cpu, &mb) == 6 &&
                   r > 0 && r < MAX_RANKS) {
            f->rank_cpu_s[r] = cpu, f->rank_rss_mb[r] = mb;
        } else if (sscanf(line, "mpi ranks %d (%llu pieces; rank 0 waited %lf s of %lf s", &n,
                          &pieces, &f->rank0_wait_s, &f->rank0_enum_s) == 4) {
            f->ranks = n;
        } else if (sscanf(line, "wall time %lf s", &busy) == 1) {
            f->rank0_wall_s = busy;
        }
    }
    fclose(in);
    return f->ranks > 1 && f->ranks <= MAX_RANKS ? 0 : -1;
}

/* Runs xfergen in a child (under `mpirun -n mpi` when mpi > 0); fills wall
 * time, CPU time and peak RSS of the child (of mpirun and its ranks), exit
 * status, and under MPI the ranks' report. */
static int run_one(const char *vocab, int max_ops, int threads, int mpi, int keep_pruned,
                   const char *db, figures *f)
{
    char ops[16], th[16], np[16];
    snprintf(ops, sizeof ops, "%d", max_ops);
    snprintf(th, sizeof th, "%d", threads);
    snprintf(np, sizeof np, "%d", mpi);
    char cmd[8192], log[4200];
    snprintf(log, sizeof log, "%s.log", db);
    snprintf(cmd, sizeof cmd, "rm -f '%s' '%s-wal' '%s-shm' '%s'.run*", db, db, db, db);
    if (system(cmd) != 0) return -1;
    fflush(stdout); /* the child's freopen would write what is buffered a second time */
    double t0 = xf_clock_now();
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0 && mpi > 0) { /* not --quiet: each rank reports its CPU time and memory */
        if (!freopen(log, "w", stdout) || dup2(fileno(stdout), 2) < 0) _exit(127);
        setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
        setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
        execlp("mpirun", "mpirun", "--oversubscribe", "-n", np, XF_XFERGEN_PATH, "--max-ops", ops,
               "--vocab", vocab, "-o", db, keep_pruned ? "--keep-pruned" : (char *)NULL,
               (char *)NULL);
        perror("bench_xfergen: exec mpirun");
        _exit(127);
    }
    if (pid == 0) {
        execl(XF_XFERGEN_PATH, "xfergen", "--max-ops", ops, "--vocab", vocab, "-j", th, "-o", db,
              "--quiet", keep_pruned ? "--keep-pruned" : (char *)NULL, (char *)NULL);
        perror("bench_xfergen: exec " XF_XFERGEN_PATH);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) return -1;
    f->wall_s = xf_clock_now() - t0;
    f->peak_rss_kb = ru.ru_maxrss;
    f->cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
               (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    char wal[4200];
    snprintf(wal, sizeof wal, "%s-wal", db);
    f->db_bytes = file_size(db) + file_size(wal);
    f->status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    if (f->status != 0) {
        fprintf(stderr, "bench_xfergen: xfergen --vocab %s --max-ops %d exited with %d\n", vocab,
                max_ops, f->status);
        return -1;
    }
    if (mpi > 0 && read_rank_report(log, f) != 0) {
        fprintf(stderr, "bench_xfergen: %s: no per-rank report from xfergen under mpirun\n", log);
        return -1;
    }
    return read_figures(db, f);
}

/* Hash of every rule's (src, dst, status, why, input names, subsumed by) in
 * id order: equal for equal databases. 0 when the database cannot be read. */
static uint64_t rules_hash(const char *path, long long *n)
{
    xf_rulesdb *db;
    xf_error err;
    *n = 0;
    if (xf_rulesdb_open(path, XF_RULESDB_READONLY, &db, &err) != XF_OK) return 0;
    xf_rulesdb_filter flt;
    memset(&flt, 0, sizeof flt);
    flt.any_status = 1;
    xf_rulesdb_iter *it = NULL;
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    uint64_t h = 1469598103934665603ull;
    int has = 1;
    if (xf_rulesdb_iter_begin(db, &flt, &it, &err) != XF_OK) h = 0;
    while (h && xf_rulesdb_iter_next(it, &info, &has, &err) == XF_OK && has) {
        const char *fields[5] = {info.src_text, info.dst_text, xf_rulesdb_status_name(info.status),
                                 info.why ? info.why : "", info.input_names};
        for (int i = 0; i < 5; i++) h = xf_hash_bytes(h, fields[i], strlen(fields[i]) + 1);
        h = xf_hash_u64(xf_hash_u64(h, (uint64_t)info.id), (uint64_t)info.subsumed_by);
        ++*n;
    }
    xf_rulesdb_rule_info_free(&info);
    xf_rulesdb_iter_free(it);
    xf_rulesdb_close(db);
    return h;
}

/* The MPI run m of a configuration beside the -j run f: times, per-rank
 * CPU and memory, rank 0's serial share, same database or not, and the
 * projection to 64 ranks (and, from the level growth, one more operator). */
static void print_mpi(const char *vocab, int max_ops, int threads, const figures *f,
                      const figures *m, const char *db_j, const char *db_m)
{
    long long nj, nm;
    uint64_t hj = rules_hash(db_j, &nj), hm = rules_hash(db_m, &nm);
    double workers_cpu = 0;
    for (int r = 1; r < m->ranks; r++) workers_cpu += m->rank_cpu_s[r];
    /* rank 0 busy: enumerating but not waiting, then pruning and writing;
     * the rest of mpirun's wall time is starting and stopping the job */
    double post = m->rank0_wall_s - m->rank0_enum_s;
    double serial = m->rank0_enum_s - m->rank0_wait_s + post;
    printf("%s %d ops: -j %d %.1f s wall, %.1f CPU s | mpirun -n %d %.1f s wall, %.1f CPU s "
           "(all ranks and mpirun); same database: %s (%lld rules)\n",
           vocab, max_ops, threads, f->wall_s, f->cpu_s, m->ranks, m->wall_s, m->cpu_s,
           hj && hj == hm && nj == nm ? "yes" : "NO", nm);
    printf("  ranks: 0 CPU %.1f s, %.0f MB peak;", m->rank_cpu_s[0], m->rank_rss_mb[0]);
    for (int r = 1; r < m->ranks; r++)
        printf(" %d CPU %.1f s, %.0f MB;", r, m->rank_cpu_s[r], m->rank_rss_mb[r]);
    printf("\n  rank 0 serial %.1f s of its %.1f s (%.0f%%: %.1f s merging while enumerating, "
           "%.1f s pruning and writing); mpirun start and stop %.1f s\n",
           serial, m->rank0_wall_s, 100.0 * serial / m->rank0_wall_s,
           m->rank0_enum_s - m->rank0_wait_s, post, m->wall_s - m->rank0_wall_s);
    double t64 = serial + workers_cpu / 63.0;
    printf("  projection, 64 ranks: %.1f s serial + %.1f worker CPU s / 63 = %.1f s (speed-up "
           "%.1fx over -j %d; rank 0 merges %.2g graphs/s)\n",
           serial, workers_cpu, t64, f->wall_s / t64, threads,
           (double)m->graphs / (m->rank0_enum_s - m->rank0_wait_s));
    const long long *g = m->level_graphs;
    if (max_ops >= 3 && g[max_ops] > 0 && g[max_ops - 1] > 0) {
        /* Everything scales with the graphs of the last level; each worker
         * then receives every stored level (24 bytes a graph), which at
         * max_ops + 1 includes this run's last level. */
        double grow = (double)g[max_ops] / (double)g[max_ops - 1];
        double stored = 0;
        for (int l = 1; l <= max_ops; l++) stored += (double)g[l];
        printf("  projection, --max-ops %d (graphs x%.1f): %.0f s serial + %.0f worker CPU s = "
               "%.1f min on 64 ranks, %.1f min with -j %d on as many cores; each worker gets "
               "%.0f MB of stored levels (%.1f GB from rank 0 to 63 ranks)\n",
               max_ops + 1, grow, serial * grow, workers_cpu * grow,
               (serial * grow + workers_cpu * grow / 63.0) / 60.0,
               (serial * grow + workers_cpu * grow / threads) / 60.0, threads,
               stored * 24 / 1e6, stored * 24 * 63 / 1e9);
    }
}

/* Graphs and wall time per level of each run. */
static void print_levels(const char *vocab, int max_ops, const figures *f)
{
    printf("%s %d ops:", vocab, max_ops);
    for (int l = 1; l <= max_ops; l++)
        printf("  L%d %lld graphs %.1f s", l, f->level_graphs[l], f->level_s[l]);
    printf("\n");
}

/* Where the time of each run went: CPU seconds (all threads) of the
 * enumerator's phases, then pruning and writing (one thread, wall). */
static void print_phases(const char *vocab, int max_ops, const figures *f)
{
    printf("%s %d ops: CPU s build %.1f, merge %.1f, confirm %.1f, emit %.1f; prune %.1f s, "
           "write %.1f s\n",
           vocab, max_ops, f->phase_cpu[0], f->phase_cpu[1], f->phase_cpu[2], f->phase_cpu[3],
           f->prune_s, f->write_s);
}

/* One more operator, projected from run f (max_ops levels, `threads`
 * cores): graphs and candidates grow by the last level's ratio (checked:
 * from 3 operators this predicts 84 M graphs and 2.2 M candidates at the
 * fourth level, measured 93 M and 2.5 M; letting the ratio keep falling as
 * it did predicted a third of that), time at the last level's CPU rate (CPU time scaled by the last level's share of the
 * wall time), spill at 24 bytes a graph, the class table at 16 bytes and
 * the records at 24 bytes a stored graph (the last level becomes stored). */
static void print_projection(const char *vocab, int max_ops, int threads, const figures *f)
{
    const long long *g = f->level_graphs;
    if (max_ops < 3 || g[max_ops] <= 0 || g[max_ops - 1] <= 0 || g[max_ops - 2] <= 0) return;
    double r1 = (double)g[max_ops - 1] / (double)g[max_ops - 2];
    double r2 = (double)g[max_ops] / (double)g[max_ops - 1];
    double next = (double)g[max_ops] * r2;
    double wall_enum = 0;
    for (int l = 1; l <= max_ops; l++) wall_enum += f->level_s[l];
    double share = wall_enum > 0 ? f->level_s[max_ops] / f->wall_s : 1;
    double cpu_last = f->cpu_s * share; /* CPU seconds of the last level, roughly */
    double per_graph = cpu_last / (double)g[max_ops];
    double cpu_next = next * per_graph;
    double cand_next = (double)f->candidates * r2;
    printf("projection for --vocab %s --max-ops %d: level ratios %.1f, %.1f (kept); %.3g graphs, "
           "~%.3g candidates; %.0f CPU s = %.1f h on %d cores, %.1f min on 64 ranks (perfect "
           "split); spill %.1f GB on disk; records and class table of level %d in memory "
           "%.1f GB\n",
           vocab, max_ops + 1, r1, r2, next, cand_next, cpu_next,
           cpu_next / threads / 3600.0, threads, cpu_next / 64 / 60.0, next * 24 / 1e9, max_ops,
           (double)g[max_ops] * (24 + 16 / 0.56) / 1e9);
}

int main(int argc, char **argv)
{
    int max4 = 0, threads = 2, missing = 10, keep_pruned = 0, mpi = 0;
    const char *dir = "/tmp";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--max4") == 0) max4 = 1;
        else if (strcmp(argv[i], "-j") == 0 && i + 1 < argc) threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--mpi") == 0 && i + 1 < argc) mpi = atoi(argv[++i]);
        else if (strcmp(argv[i], "--dir") == 0 && i + 1 < argc) dir = argv[++i];
        else if (strcmp(argv[i], "--missing") == 0 && i + 1 < argc) missing = atoi(argv[++i]);
        else if (strcmp(argv[i], "--keep-pruned") == 0) keep_pruned = 1;
        else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            printf("usage: bench_xfergen [--max4] [-j N] [--mpi N] [--dir DIR] [--missing N]\n"
                   "                     [--keep-pruned]\n"
                   "Runs xfergen for --vocab taso and default at 3 operators (and default at 4\n"
                   "with --max4, about 5 min on 2 cores), prints the counts per stage, wall and\n"
                   "CPU time, peak RSS and database size, graphs per level, a projection of one\n"
                   "more operator, then coverage against TASO's rules; --missing N lists N\n"
                   "missing ones; --keep-pruned passes that option on; databases go to DIR\n"
                   "(default /tmp); --mpi N also runs each under mpirun -n N and compares.\n");
            return 0;
        } else {
            fprintf(stderr,
                    "usage: bench_xfergen [--max4] [-j N] [--mpi N] [--dir DIR] [--missing N] "
                    "[--keep-pruned]\n");
            return 2;
        }
    }
    static const struct {
        const char *vocab;
        int max_ops;
    } configs[] = {{"taso", 3}, {"default", 3}, {"default", 4}};
    int n_configs = max4 ? 3 : 2;
    char dbs[3][4096];
    figures all[3];
    memset(all, 0, sizeof all);
    printf("%-8s %4s %11s %11s %10s %9s %8s %8s %8s %8s %8s %9s %8s\n", "vocab", "ops", "graphs",
           "fingerprnts", "candidates", "renaming", "com-sub", "com-sup", "kept", "wall s",
           "CPU s", "peak MiB", "DB MiB");
    int failed = 0;
    for (int c = 0; c < n_configs; c++) {
        snprintf(dbs[c], sizeof dbs[c], "%s/bench_xfergen_%s_%d.db", dir, configs[c].vocab,
                 configs[c].max_ops);
        figures *f = &all[c];
        if (run_one(configs[c].vocab, configs[c].max_ops, threads, 0, keep_pruned, dbs[c], f) != 0) {
            failed = 1;
            dbs[c][0] = '\0';
            continue;
        }
        printf("%-8s %4d %11lld %11lld %10lld %9lld %8lld %8lld %8lld %8.1f %8.1f %9.1f %8.1f\n",
               configs[c].vocab, configs[c].max_ops, f->graphs, f->fingerprints, f->candidates,
               f->left[0], f->left[1], f->left[2], f->left[3], f->wall_s, f->cpu_s,
               (double)f->peak_rss_kb / 1024.0, (double)f->db_bytes / 1048576.0);
        fflush(stdout);
    }
    for (int c = 0; c < n_configs; c++)
        if (dbs[c][0]) print_levels(configs[c].vocab, configs[c].max_ops, &all[c]);
    for (int c = 0; c < n_configs; c++)
        if (dbs[c][0]) print_phases(configs[c].vocab, configs[c].max_ops, &all[c]);
    for (int c = 0; c < n_configs; c++)
        if (dbs[c][0]) print_projection(configs[c].vocab, configs[c].max_ops, threads, &all[c]);
    if (mpi < 2 || mpi > MAX_RANKS) mpi = 0;
    for (int c = 0; c < n_configs && mpi; c++) {
        if (!dbs[c][0]) continue;
        char db[4200];
        snprintf(db, sizeof db, "%s/bench_xfergen_%s_%d_mpi.db", dir, configs[c].vocab,
                 configs[c].max_ops);
        figures m;
        memset(&m, 0, sizeof m);
        if (run_one(configs[c].vocab, configs[c].max_ops, threads, mpi, keep_pruned, db, &m) != 0) {
            failed = 1;
            continue;
        }
        print_mpi(configs[c].vocab, configs[c].max_ops, threads, &all[c], &m, dbs[c], db);
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
