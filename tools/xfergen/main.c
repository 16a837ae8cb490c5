/*
 * main.c — xfergen's command line: parses the options, installs the
 * SIGINT/SIGTERM handlers that ask the enumerator to stop cleanly, runs
 * the pipeline (xf_enum_generate, enumerate/pipeline.c) and prints its
 * progress and summary. Under mpirun (a build with MPI), rank 0 does all
 * that and the other ranks serve it (xf_enum_mpi_serve); each rank prints
 * its CPU time and peak memory at the end. Exit status: 0 done, 1
 * interrupted (resumable) or failed while running, 2 bad usage or unusable
 * input.
 */
#include "enumerate/enumerate.h"
#include "tools/cli/cli.h"
#ifdef XF_HAVE_MPI
#include "cluster/cluster.h"
#endif

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#ifndef XF_VERSION
#define XF_VERSION "0.0.0"
#endif

static const char usage[] =
    "usage: xfergen --max-ops N [--vocab default|noviews|taso|FILE] [--inputs SPEC] [-j N]\n"
    "               [--seed S] -o RULES.db [--keep-pruned] [--resume] [--quiet]\n"
    "\n"
    "Enumerates every operator graph of up to N operators over symbolic input\n"
    "tensors, pairs graphs with equal exact fingerprints as candidate rules,\n"
    "prunes redundant ones and writes the rest to the rules database.\n"
    "\n"
    "  --max-ops N     operators per graph, 1..6 (required)\n"
    "  --vocab V       operator vocabulary: default (with the shape and indexing\n"
    "                  operators), noviews (default without them), taso, or a\n"
    "                  vocabulary file\n"
    "                  (default: default)\n"
    "  --inputs SPEC   symbolic inputs, e.g. x0:2x4,w0:4x4,s0:scalar\n"
    "                  (default: the preset's)\n"
    "  -j N            worker threads (default: online CPUs); the result does not\n"
    "                  depend on it\n"
    "  --seed S        seed of fingerprint inputs and keys (default 1)\n"
    "  -o FILE         rules database to create or add to (required)\n"
    "  --keep-pruned   also store the pruned candidates, as rules with status\n"
    "                  pruned, the reason and the rule that subsumes them\n"
    "                  (default: only count them per pruning stage in the run)\n"
    "  --resume        continue the last interrupted run with the same options\n"
    "  --quiet         no progress on stderr and no summary on stdout\n"
    "  --help          this text\n"
    "\n"
    "Under MPI: mpirun -n N xfergen ... (N >= 2): rank 0 keeps the database and\n"
    "the checkpoint, ranks 1..N-1 build and confirm graphs from a dynamic queue;\n"
    "the database is the same as without MPI, and --resume works the same.\n"
    "\n"
    "Ctrl-C or SIGTERM stops at the next checkpoint and leaves the database\n"
    "consistent (exit status 1); rerun with --resume to continue.\n"
    "Exit status: 0 done, 1 interrupted or failed while running, 2 bad usage or\n"
    "unusable input.\n";

/* Set by SIGINT/SIGTERM; the enumerator stops at the next batch boundary. */
static volatile sig_atomic_t stop_flag = 0;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

typedef struct report {
    int quiet, tty;
    int line_open;    /* a TTY progress line waits for its newline */
    double last_line; /* when the last non-TTY progress line was printed */
} report;

static void end_line(report *u)
{
    if (u->line_open) fprintf(stderr, "\n");
    u->line_open = 0;
}

static void on_progress(void *user, const xf_enum_progress *p)
{
    report *u = user;
    if (u->quiet) return;
    if (!u->tty && p->elapsed_s - u->last_line < 10.0) return;
    u->last_line = p->elapsed_s;
    char eta[32] = "?";
    if (p->eta_s >= 0) snprintf(eta, sizeof eta, "%.0fs", p->eta_s);
    if (p->to_confirm > 0) {
        fprintf(stderr, "%slevel %d: confirming collisions, %" PRIu64 "/%" PRIu64 ", %" PRIu64
                " candidates, ETA %s, %.0fs elapsed%s",
                u->tty ? "\r" : "", p->level, p->confirmed, p->to_confirm, p->candidates, eta,
                p->elapsed_s, u->tty ? "\033[K" : "\n");
        u->line_open = u->tty;
        return;
    }
    if (p->buckets_merged > 0) {
        fprintf(stderr, "%slevel %d: reading back fingerprints, %d/64 buckets, %" PRIu64
                " graphs, %" PRIu64 " candidates, ETA %s, %.0fs elapsed%s",
                u->tty ? "\r" : "", p->level, p->buckets_merged, p->graphs, p->candidates, eta,
                p->elapsed_s, u->tty ? "\033[K" : "\n");
        u->line_open = u->tty;
        return;
    }
    fprintf(stderr,
            "%slevel %d: %" PRIu64 "/%" PRIu64 " parents, %" PRIu64 " graphs (%.0f/s), %" PRIu64
            " fingerprints, %" PRIu64 " candidates, ETA %s, %.0fs elapsed%s",
            u->tty ? "\r" : "", p->level, p->parents_done, p->parents_total, p->graphs,
            p->graphs_per_s, p->classes, p->candidates, eta, p->elapsed_s, u->tty ? "\033[K" : "\n");
    u->line_open = u->tty;
}

static void on_note(void *user, int warning, const char *msg)
{
    report *u = user;
    if (u->quiet && !warning) return;
    end_line(u);
    fprintf(stderr, "xfergen: %s\n", msg);
}

static void print_summary(const xf_enum_generate_options *o, const xf_enum_generate_result *r)
{
    const xf_prune_stats *ps = &r->pruned;
    printf("graphs enumerated   %" PRIu64 "\n", r->enumerated.graphs);
    printf("fingerprints        %" PRIu64 "\n", r->enumerated.classes);
    printf("candidates          %zu\n", r->candidates);
    for (int s = XF_PRUNE_RENAMING; s < XF_PRUNE_STAGE_COUNT; s++)
        printf("after %-17s %zu (-%zu)\n", xf_prune_stage_name((xf_prune_stage)s), ps->left[s],
               ps->removed[s]);
    printf("rules kept          %zu\n", ps->kept);
    printf("rows written        %" PRId64 " (run %" PRId64 " in %s)\n", r->written, r->run_id,
           o->out);
    printf("pruned stored       %" PRId64 "%s\n", r->pruned_stored,
           o->keep_pruned ? "" : " (counted only; --keep-pruned stores them)");
    printf("wall time           %.2f s\n", r->seconds);
    if (r->enumerated.ranks > 0)
        printf("mpi ranks           %d (%" PRIu64 " pieces; rank 0 waited %.2f s of %.2f s "
               "enumerating)\n",
               r->enumerated.ranks, r->enumerated.pieces, r->enumerated.rank0_wait_seconds,
               r->enumerated.seconds);
}

/* Runs the pipeline and reports; the exit status. */
static int run(const xf_enum_generate_options *o, int quiet)
{
    report u = {quiet, isatty(STDERR_FILENO), 0, -1e9};
    xf_enum_generate_options go = *o;
    go.user = &u;
    go.on_progress = on_progress;
    go.on_note = on_note;
    xf_enum_generate_result r;
    xf_error err;
    xf_error_clear(&err);
    xf_status st = xf_enum_generate(&go, &r, &err);
    end_line(&u);
    if (st != XF_OK) {
        fprintf(stderr, "xfergen: %s\n", err.msg);
        return r.bad_input ? 2 : 1;
    }
    if (r.stopped) {
        fprintf(stderr,
                "xfergen: interrupted after %zu candidates (run %" PRId64
                "); continue with the same options and --resume\n",
                r.candidates, r.run_id);
        return 1;
    }
    if (!quiet) print_summary(o, &r);
    return 0;
}

#ifdef XF_HAVE_MPI
/* This process's CPU seconds and peak resident memory (MB). */
static void usage_now(double *cpu_s, double *peak_mb)
{
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    getrusage(RUSAGE_SELF, &ru);
    *cpu_s = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
             (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    *peak_mb = (double)ru.ru_maxrss / 1024.0;
}

/* Under mpirun: rank 0 runs the pipeline, the others serve it; one rank
 * alone runs as without MPI. */
static int run_mpi(int *argc, char ***argv, xf_enum_generate_options *o, int quiet)
{
    xf_error err;
    int rank = 0, size = 1, rc = 0;
    if (xf_cluster_init(argc, argv, &rank, &size, &err) != XF_OK) {
        fprintf(stderr, "xfergen: %s\n", err.msg);
        return 1;
    }
    if (rank != 0) {
        xf_enum_mpi_figures f;
        if (xf_enum_mpi_serve(o, &f, &err) != XF_OK) {
            fprintf(stderr, "xfergen: rank %d: %s\n", rank, err.msg);
            rc = 1;
        }
        double cpu, mb;
        usage_now(&cpu, &mb);
        if (!quiet)
            fprintf(stderr,
                    "xfergen: rank %d: %" PRIu64 " pieces, busy %.2f s of %.2f s, CPU %.2f s, "
                    "peak RSS %.0f MB\n",
                    rank, f.pieces, f.seconds - f.wait_seconds, f.seconds, cpu, mb);
    } else {
        o->mpi = size > 1;
        rc = run(o, quiet);
        double cpu, mb;
        usage_now(&cpu, &mb);
        if (!quiet) fprintf(stderr, "xfergen: rank 0: CPU %.2f s, peak RSS %.0f MB\n", cpu, mb);
    }
    xf_cluster_finish();
    return rc;
}
#endif

static int bad_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "xfergen: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see xfergen --help)\n");
    return 2;
}

int main(int argc, char **argv)
{
    xf_enum_generate_options o;
    xf_enum_generate_options_init(&o);
    o.version = XF_VERSION;
    o.stop = &stop_flag;
    int quiet = 0;
    o.threads = xf_cli_online_cpus(255);
    int have_max_ops = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *next = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t v;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        } else if (strcmp(a, "--resume") == 0) {
            o.resume = 1;
        } else if (strcmp(a, "--keep-pruned") == 0) {
            o.keep_pruned = 1;
        } else if (strcmp(a, "--quiet") == 0) {
            quiet = 1;
        } else if (strcmp(a, "--max-ops") == 0 || strcmp(a, "--vocab") == 0 ||
                   strcmp(a, "--inputs") == 0 || strcmp(a, "-j") == 0 ||
                   strcmp(a, "--seed") == 0 || strcmp(a, "-o") == 0) {
            if (!next) return bad_usage("%s needs a value", a);
            i++;
            if (strcmp(a, "--max-ops") == 0) {
                if (xf_cli_parse_i64(next, 1, XF_ENUM_MAX_OPS, &v))
                    return bad_usage("--max-ops wants a number from 1 to 6, not '%s'", next);
                o.max_ops = (int)v;
                have_max_ops = 1;
            } else if (strcmp(a, "--vocab") == 0) {
                o.vocab = next;
            } else if (strcmp(a, "--inputs") == 0) {
                o.inputs = next;
            } else if (strcmp(a, "-j") == 0) {
                if (xf_cli_parse_i64(next, 1, 256, &v))
                    return bad_usage("-j wants a number of threads from 1 to 256, not '%s'", next);
                o.threads = (int)v;
            } else if (strcmp(a, "--seed") == 0) {
                char *end;
                errno = 0;
                unsigned long long s = strtoull(next, &end, 10);
                if (errno || end == next || *end || next[0] == '-')
                    return bad_usage("--seed wants a non-negative integer, not '%s'", next);
                o.seed = (uint64_t)s;
            } else {
                o.out = next;
            }
        } else {
            return bad_usage("unknown argument '%s'", a);
        }
    }
    if (!have_max_ops) return bad_usage("%s", "--max-ops N is required");
    if (!o.out) return bad_usage("%s", "-o RULES.db is required");
    const char *hook = getenv("XF_XFERGEN_STOP_AFTER");
    int64_t stop_after;
    if (hook && *hook) {
        if (xf_cli_parse_i64(hook, 0, LONG_MAX, &stop_after))
            return bad_usage("XF_XFERGEN_STOP_AFTER wants a count, not '%s'", hook);
        o.stop_after = (long)stop_after;
    }

    /* Fix the tensor memory limit now: its default asks the kernel for the
     * physical memory (sysinfo) on every tensor the float checks allocate,
     * 6% of a run. */
    xf_mem_limit_set(xf_mem_limit());

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
#ifdef XF_HAVE_MPI
    if (xf_cluster_launched()) return run_mpi(&argc, &argv, &o, quiet);
#endif
    return run(&o, quiet);
}
