/*
 * main.c — xfergen's command line: parses the options, installs the
 * SIGINT/SIGTERM handlers that ask the enumerator to stop cleanly, runs
 * the pipeline (xf_enum_generate, enumerate/pipeline.c) and prints its
 * progress (the enumeration's levels, then each step of pruning and the
 * write, with rate and ETA) and summary. Under mpirun (a build with MPI),
 * rank 0 does all that and the other ranks serve it (xf_enum_mpi_serve);
 * each rank prints its CPU time and peak memory at the end. Exit status: 0 done, 1
 * interrupted (resumable) or failed while running, 2 bad usage or unusable
 * input.
 */
#include "enumerate/enumerate.h"
#include "tools/cli/cli.h"
#ifdef XF_HAVE_MPI
#include "cluster/cluster.h"
#endif

#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#ifndef XF_VERSION
#define XF_VERSION "0.0.0"
#endif

/* The command line: the pipeline's options and --quiet. */
typedef struct args {
    xf_enum_generate_options g;
    int quiet;
} args;

#define OFF(f) offsetof(args, f)
static const xf_cli_opt opts[] = {
    {.name = "--max-ops", .type = XF_CLI_INT, .off = OFF(g.max_ops), .lo = 1,
     .hi = XF_ENUM_MAX_OPS, .what = "a number from 1 to 6", .label = "--max-ops N",
     .help = "operators per graph, 1..6 (required)"},
    {.name = "--max-outputs", .type = XF_CLI_INT, .off = OFF(g.max_outputs), .lo = 1,
     .hi = XF_ENUM_MAX_OUTPUTS, .what = "a number from 1 to 4", .label = "--max-outputs N",
     .help = "outputs of a rule side, 1..4 (default 2; 3 for rules over\n"
             "a three-way split, `split parts=3`)"},
    {.name = "--max-dim", .type = XF_CLI_INT, .off = OFF(g.max_dim), .lo = 1, .hi = 64,
     .what = "a number from 1 to 64", .label = "--max-dim N",
     .help = "largest dim of any tensor, 1..64 (default 8; 12 for a\n"
             "three-way split of two heads of 2: c0:2x2x12)"},
    {.name = "--vocab", .type = XF_CLI_STR, .off = OFF(g.vocab), .what = "a vocabulary",
     .label = "--vocab V",
     .help = "operator vocabulary: default (with the shape and indexing\n"
             "operators), noviews (default without them), taso,\n"
             "unbatched (GPT's heads as ONNX Runtime folds them, over\n"
             "u0:1x4x4), or a vocabulary file\n(default: default)"},
    {.name = "--inputs", .type = XF_CLI_STR, .off = OFF(g.inputs), .what = "an input spec",
     .label = "--inputs SPEC",
     .help = "symbolic inputs, e.g. x0:2x4,w0:4x4,s0:scalar\n(default: the preset's)"},
    {.name = "-j", .type = XF_CLI_INT, .off = OFF(g.threads), .lo = 1, .hi = 256,
     .what = "a number of threads from 1 to 256", .label = "-j N",
     .help = "worker threads (default: online CPUs); the result does not\ndepend on it"},
    {.name = "--seed", .type = XF_CLI_U64, .off = OFF(g.seed), .what = "a non-negative integer",
     .label = "--seed S", .help = "seed of fingerprint inputs and keys (default 1)"},
    {.name = "-o", .type = XF_CLI_STR, .off = OFF(g.out), .what = "a file name",
     .label = "-o FILE", .help = "rules database to create or add to (required)"},
    {.name = "--keep-pruned", .type = XF_CLI_FLAG, .off = OFF(g.keep_pruned), .set = 1,
     .label = "--keep-pruned",
     .help = "also store the pruned candidates, as rules with status\n"
             "pruned, the reason and the rule that subsumes them\n"
             "(default: only count them per pruning stage in the run)"},
    {.name = "--resume", .type = XF_CLI_FLAG, .off = OFF(g.resume), .set = 1,
     .label = "--resume", .help = "continue the last interrupted run with the same options"},
    {.name = "--quiet", .type = XF_CLI_FLAG, .off = OFF(quiet), .set = 1, .label = "--quiet",
     .help = "no progress on stderr and no summary on stdout"},
};

static const char help_head[] =
    "usage: xfergen --max-ops N [--max-outputs N] [--max-dim N]\n"
    "               [--vocab default|noviews|taso|unbatched|FILE] [--inputs SPEC] [-j N]\n"
    "               [--seed S] -o RULES.db [--keep-pruned] [--resume] [--quiet]\n"
    "\n"
    "Enumerates every operator graph of up to N operators over symbolic input\n"
    "tensors, pairs graphs with equal exact fingerprints as candidate rules,\n"
    "prunes redundant ones and writes the rest to the rules database.\n"
    "\n";
static const char help_tail[] =
    "  -h, --help         this text\n"
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
    char step[64];    /* the step after the enumeration last printed */
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
    int new_step = p->step && strcmp(p->step, u->step) != 0; /* shown at once */
    if (!u->tty && !new_step && p->elapsed_s - u->last_line < 10.0) return;
    u->last_line = p->elapsed_s;
    char eta[32] = "?";
    if (p->eta_s >= 0) snprintf(eta, sizeof eta, "%.0fs", p->eta_s);
    if (p->step) {
        if (new_step) end_line(u);
        snprintf(u->step, sizeof u->step, "%s", p->step);
        fprintf(stderr, "%s%s, %" PRIu64 "/%" PRIu64 " rules (%.0f/s), ETA %s, %.0fs elapsed%s",
                u->tty ? "\r" : "", p->step, p->done, p->total, p->per_s, eta, p->elapsed_s,
                u->tty ? "\033[K" : "\n");
        u->line_open = u->tty;
        return;
    }
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
    report u = {quiet, isatty(STDERR_FILENO), 0, -1e9, ""};
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
    args a;
    memset(&a, 0, sizeof a);
    xf_enum_generate_options_init(&a.g);
    a.g.version = XF_VERSION;
    a.g.stop = &stop_flag;
    a.g.threads = xf_cli_online_cpus(255);
    xf_cli_spec spec = {"xfergen", help_head, help_tail, opts, (int)(sizeof opts / sizeof opts[0]),
                        NULL, 0, &a, NULL};
    int rc = xf_cli_parse(&spec, argc, argv);
    if (rc) return rc < 0 ? 0 : rc;
    xf_enum_generate_options o = a.g;
    int quiet = a.quiet;
    if (!o.max_ops) return bad_usage("%s", "--max-ops N is required");
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
