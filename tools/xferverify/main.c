/*
 * xferverify — decide every candidate rule of a rules database and store
 * the verdict (docs/cli.md, DESIGN.md §4 "Verification"):
 *
 *   xferverify DB [-j N] [--timeout 60s] [--rlimit N] [--proof-rlimit N] [--recheck]
 *              [--limit N] [--max-shapes N] [--cross-shapes N] [--max-size N] [--no-derive] [--derive-depth N]
 *              [--derive-states N] [--derive-rounds N] [--derive-firsts-up-to N]
 *              [--derive-firsts-depth N] [--check-axioms]
 *   mpirun -n N xferverify DB ...   (rank 0 records, the others decide)
 *
 * The work is xf_derive_verify_db (derive/pipeline.c): sizes in ascending
 * order; at each, the candidates that follow from the rules proved or
 * derived at smaller sizes are derived (a chain of rewrites, replayed and
 * stored as the proof, derive/), and only the rest go to xf_verify_db
 * (verify/schedule.c): each rule in its own forked worker, at most N at a
 * time (default: the online CPUs), so a crash or a hang costs one rule;
 * the verdict combines the axiomatic proof and the bounded check. This file parses the options,
 * calls it and prints its progress lines and summary.
 * A rule the axioms prove but the bounded check refutes at the rule's own
 * shapes is a disagreement (a wrong axiom) and is reported loudly on
 * stderr. Refuted only at other input shapes, it is a shape-specific rule:
 * the proof encodes the rule's own sizes (concat boundaries, 1x1
 * transposes), so the axioms are not contradicted; it is stored refuted
 * (the verdict's detail names the shapes) and counted in the summary.
 *
 * Verdicts are written in short batches, the write lock free in between so
 * another writer waiting on the database gets in; an interrupted run keeps
 * most of its work; a rerun decides only candidates unless --recheck. An
 * error is not a verdict: a rule that cannot be loaded (corrupt blob,
 * missing graph row) is reported with its id and why and keeps its status,
 * and so does a rule already proved or refuted whose worker fails. The file
 * must already be a rules database (xfergen creates them).
 *
 * --check-axioms validates the axioms themselves instead: each axiom's
 * concrete instances (verify/axiom_instances.c) go through the bounded
 * check, and each axiom is tried against the others for redundancy.
 *
 * Exit status: 0 every selected rule got a verdict (or kept its own after
 * an error); 1 a disagreement, a refuted axiom, a rule that cannot be
 * loaded or a database write failed; 2 bad usage or an unreadable database.
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rulesdb/rulesdb.h"
#include "derive/derive.h"
#include "tools/cli/cli.h"
#include "verify/verify.h"
#ifdef XF_HAVE_MPI
#include "cluster/cluster.h"
#endif

typedef struct opts {
    const char *db;
    int check_axioms;
    int jobs_given; /* -j was given: else online CPUs, 1 per rank under MPI */
    xf_derive_verify_options dvo;
} opts;

/* --timeout 10s, 500ms, 2m */
static int parse_timeout(void *user, const char *name, const char *v, char *msg, size_t n)
{
    unsigned *ms = &((opts *)user)->dvo.vopt.vo.timeout_ms;
    char *end;
    double x = v ? strtod(v, &end) : 0;
    if (v && end != v && x > 0 && x <= 86400) {
        unsigned got = 0;
        if (strcmp(end, "ms") == 0) got = (unsigned)x;
        else if (*end == '\0' || strcmp(end, "s") == 0) got = (unsigned)(x * 1000);
        else if (strcmp(end, "m") == 0) got = (unsigned)(x * 60000);
        if (got) {
            *ms = got;
            return 0;
        }
    }
    return xf_cli_needs(msg, n, name, "a duration such as 10s or 500ms", v);
}

/* -j N: the workers, remembered as given (under MPI the default is 1) */
static int parse_jobs(void *user, const char *name, const char *v, char *msg, size_t n)
{
    opts *o = user;
    int64_t x;
    char what[64];
    if (xf_cli_parse_i64(v, 1, XF_VERIFY_MAX_JOBS, &x) == 0) {
        o->dvo.vopt.jobs = (int)x;
        o->jobs_given = 1;
        return 0;
    }
    snprintf(what, sizeof what, "a number from 1 to %d", XF_VERIFY_MAX_JOBS);
    return xf_cli_needs(msg, n, name, what, v);
}

/* --limit N, --rlimit N, --proof-rlimit N, --cross-rlimit N: wider than int */
static int parse_wide(void *user, const char *name, const char *v, char *msg, size_t n)
{
    xf_verify_options *vo = &((opts *)user)->dvo.vopt.vo;
    int limit = !strcmp(name, "--limit");
    int64_t lo = limit ? 1 : 0, hi = limit ? (1LL << 40) : UINT32_MAX, x;
    char what[64];
    if (xf_cli_parse_i64(v, lo, hi, &x) != 0) {
        snprintf(what, sizeof what, "a number from %lld%s to %lld", (long long)lo,
                 limit ? "" : " (none)", (long long)hi);
        return xf_cli_needs(msg, n, name, what, v);
    }
    if (limit) ((opts *)user)->dvo.vopt.limit = x;
    else if (name[2] == 'r') vo->rlimit = (unsigned)x;
    else if (name[2] == 'p') vo->proof_rlimit = (unsigned)x;
    else vo->cross_rlimit = (unsigned)x;
    return 0;
}

/* 0 ok, 1 --help printed, 2 usage error (message printed). */
static int parse_args(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof *o);
    xf_derive_verify_options_init(&o->dvo);
    o->dvo.vopt.jobs = xf_cli_online_cpus(XF_VERIFY_MAX_JOBS);
    char timeout_help[192], rlimit_help[256], proof_help[128], cross_help[256], depth_what[64],
        firsts_what[64];
    snprintf(timeout_help, sizeof timeout_help,
             "per solver query, e.g. 60s, 500ms (default %us: a safety\n"
             "net; the resource limits below stop the queries first)",
             XF_VERIFY_TIMEOUT_MS / 1000);
    snprintf(depth_what, sizeof depth_what, "a number from 1 to %d", XF_DERIVE_MAX_DEPTH);
    snprintf(firsts_what, sizeof firsts_what, "a number from 0 to %d", XF_DERIVE_MAX_DEPTH);
    snprintf(rlimit_help, sizeof rlimit_help,
             "Z3 resource units per proof query and per bounded check\n"
             "(deterministic: the same verdicts on any machine or load;\n"
             "default %u, 0: none)",
             XF_VERIFY_RLIMIT);
    snprintf(proof_help, sizeof proof_help,
             "a lower limit for each proof query alone (default %u,\n0: --rlimit alone)",
             XF_VERIFY_PROOF_RLIMIT);
    snprintf(cross_help, sizeof cross_help,
             "a lower limit for the exact bounded cross-check of a rule the\n"
             "axioms proved (default %u, 0: --rlimit alone); the float probe\n"
             "still runs at every shape",
             XF_VERIFY_CROSS_RLIMIT);
    const xf_cli_opt opts_table[] = {
        {.name = "-j", .type = XF_CLI_CALL, .takes_value = 1, .call = parse_jobs,
         .label = "-j N",
         .help = "worker processes (default: online CPUs; under mpirun, per\n"
                 "worker rank, default 1)"},
        {.name = "--timeout", .type = XF_CLI_CALL, .takes_value = 1, .call = parse_timeout,
         .label = "--timeout T", .help = timeout_help},
        {.name = "--rlimit", .type = XF_CLI_CALL, .takes_value = 1, .call = parse_wide,
         .label = "--rlimit N", .help = rlimit_help},
        {.name = "--proof-rlimit", .type = XF_CLI_CALL, .takes_value = 1, .call = parse_wide,
         .label = "--proof-rlimit N", .help = proof_help},
        {.name = "--cross-rlimit", .type = XF_CLI_CALL, .takes_value = 1, .call = parse_wide,
         .label = "--cross-rlimit N", .help = cross_help},
        {.name = "--cross-shapes", .type = XF_CLI_INT, .off = offsetof(opts, dvo.vopt.vo.cross_shapes), .lo = 1,
         .hi = 4096, .what = "a number from 1 to 4096", .label = "--cross-shapes N",
         .help = "input-shape assignments of a proved rule that get the exact\n"
                 "cross-check, its own first (default 1: the own alone; up to\n"
                 "--max-shapes); the float probe runs at all of them"},
        {.name = "--axioms-first", .type = XF_CLI_FLAG, .off = offsetof(opts, dvo.vopt.vo.probe_first),
         .set = 0, .label = "--axioms-first",
         .help = "try the axioms before the float probe (default: the probe\n"
                 "first, and a rule it refutes at other shapes gets no proof\n"
                 "attempt; this also counts the rules proved at their own\n"
                 "shapes only)"},
        {.name = "--recheck", .type = XF_CLI_FLAG, .off = offsetof(opts, dvo.vopt.recheck), .set = 1,
         .label = "--recheck", .help = "decide again rules that already have a verdict"},
        {.name = "--limit", .type = XF_CLI_CALL, .takes_value = 1, .call = parse_wide,
         .label = "--limit N", .help = "decide at most N rules"},
        {.name = "--max-shapes", .type = XF_CLI_INT, .off = offsetof(opts, dvo.vopt.vo.bounded_max_shapes), .lo = 1,
         .hi = 4096, .what = "a number from 1 to 4096", .label = "--max-shapes N",
         .help = "bounded check: input-shape assignments per rule, the rule's own\n"
                 "included (default 64; 1: only the rule's own shapes)"},
        {.name = "--max-size", .type = XF_CLI_INT, .off = offsetof(opts, dvo.max_size), .lo = 1, .hi = 64,
         .what = "a number from 1 to 64", .label = "--max-size N",
         .help = "decide only rules of at most N operators (a side's count)"},
        {.name = "--no-derive", .type = XF_CLI_FLAG, .off = offsetof(opts, dvo.derive), .set = 0,
         .label = "--no-derive",
         .help = "send every candidate to the solver (default: first derive, size\n"
                 "by size, the candidates that follow from smaller proved rules)"},
        {.name = "--derive-depth", .type = XF_CLI_INT, .off = offsetof(opts, dvo.dopt.d.max_depth), .lo = 1,
         .hi = XF_DERIVE_MAX_DEPTH, .what = depth_what,
         .label = "--derive-depth N",
         .help = "rewrites searched from each side of a candidate (1-4, default 3)"},
        {.name = "--derive-states", .type = XF_CLI_INT, .off = offsetof(opts, dvo.dopt.d.max_states),
         .lo = 1, .hi = 1 << 20, .what = "a number from 1 to 1048576",
         .label = "--derive-states N", .help = "graphs kept per side and candidate (default 256)"},
        {.name = "--derive-rounds", .type = XF_CLI_INT, .off = offsetof(opts, dvo.rounds), .lo = 0, .hi = 16,
         .what = "a number from 0 to 16", .label = "--derive-rounds N",
         .help = "the solver takes one candidate of each form (the others are\n"
                 "the same rule at other shapes) first, in N rounds, each\n"
                 "followed by a derive pass that also uses the rules of the\n"
                 "size just proved (0-16, default 2; 0: no pass between)"},
        {.name = "--derive-firsts-up-to", .type = XF_CLI_INT, .off = offsetof(opts, dvo.firsts_up_to),
         .lo = 0, .hi = 64, .what = "a number from 0 to 64", .label = "--derive-firsts-up-to N",
         .help = "the passes between those rounds search the later rounds' firsts\n"
                 "of their form as deep as the rest at sizes up to N (default 3;\n"
                 "0: every size); at larger sizes --derive-firsts-depth deep"},
        {.name = "--derive-firsts-depth", .type = XF_CLI_INT, .off = offsetof(opts, dvo.firsts_depth),
         .lo = 0, .hi = XF_DERIVE_MAX_DEPTH, .what = firsts_what, .label = "--derive-firsts-depth N",
         .help = "that depth (default 1; 0: those firsts are not searched)"},
        {.name = "--check-axioms", .type = XF_CLI_FLAG, .off = offsetof(opts, check_axioms), .set = 1,
         .label = "--check-axioms",
         .help = "check every axiom on its instances with the bounded check and\n"
                 "report which follow from the others, then exit (DB not read)"},
    };
    xf_cli_spec spec = {
        .tool = "xferverify",
        .head = "usage: xferverify DB [options]\n"
                "\n"
                "Decides every candidate rule of the rules database DB: axiomatic proof and\n"
                "bounded element-wise check with Z3; stores proved / refuted / unknown.\n"
                "\n"
                "options:\n",
        .tail = "  -h, --help         this help\n"
                "\n"
                "exit status: 0 done, 1 a disagreement, a rule that cannot be loaded or a failed\n"
                "             write, 2 bad usage or DB not a rules database (xfergen creates them)\n",
        .opts = opts_table,
        .n_opts = (int)(sizeof opts_table / sizeof opts_table[0]),
        .positional = &o->db,
        .n_positional = 1,
        .base = o,
    };
    int rc = xf_cli_parse(&spec, argc, argv);
    if (rc) return rc < 0 ? 1 : 2;
    if (!o->db && !o->check_axioms) {
        fprintf(stderr, "xferverify: no rules database given (see xferverify --help)\n");
        return 2;
    }
    return 0;
}

/* ------------------------------------------------------------- progress */

typedef struct report {
    int tty;
    int size; /* the size being decided; 0: summary over all */
    int64_t unknowns_derived; /* rules the solver left unknown, derived afterwards */
} report;

static void progress(const report *u, const xf_verify_tally *t, int final)
{
    if (!u->tty && !final && t->done % 100 != 0) return;
    double el = t->elapsed_s, rate = el > 0 ? (double)t->done / el : 0.0;
    char where[32] = "", eta[32] = "";
    if (u->size) snprintf(where, sizeof where, "size %d: solver ", u->size);
    if (!final && rate > 0) snprintf(eta, sizeof eta, "  ETA %.0f s", (double)(t->total - t->done) / rate);
    fprintf(stderr,
            "%s%s[%lld/%lld] proved %lld  refuted %lld  unknown %lld  %.1f s  %.1f rules/s%s%s",
            u->tty ? "\r" : "", where, (long long)t->done, (long long)t->total,
            (long long)t->proved, (long long)t->refuted, (long long)t->unknown, el, rate, eta,
            u->tty && !final ? "" : "\n");
}

static void on_progress(void *user, const xf_verify_tally *t)
{
    progress(user, t, 0);
}

static void on_derive_progress(void *user, const xf_derive_tally *t)
{
    const report *u = user;
    if (!u->tty && t->done % 500 != 0 && t->done != t->total) return;
    double el = t->elapsed_s, rate = el > 0 ? (double)t->done / el : 0.0;
    double eta = rate > 0 ? (double)(t->total - t->done) / rate : 0.0;
    fprintf(stderr, "%ssize %d: derive%s [%lld/%lld] derived %lld  %.1f s  %.1f rules/s  "
                    "ETA %.0f s%s",
            u->tty ? "\r" : "", t->size, t->unknowns ? " unknowns" : "", (long long)t->done,
            (long long)t->total,
            (long long)t->derived, el, rate, eta, u->tty && t->done != t->total ? "" : "\n");
}

static void on_start(void *user, int size)
{
    ((report *)user)->size = size;
}

/* One line per size: what was derived and what the solver decided. */
static void on_size(void *user, int size, const xf_derive_tally *d, const xf_verify_tally *v)
{
    report *u = user;
    if ((!d || (d->total == 0 && d->after == 0)) && !v) return;
    fprintf(stderr, "size %d:", size);
    if (d) {
        fprintf(stderr,
                " %lld candidates, %lld derived (%lld of them between the solver's rounds, "
                "%lld unknowns after them) in %.1f s (%d rules, %lld graphs searched);",
                (long long)d->total, (long long)d->derived, (long long)d->later,
                (long long)d->after, d->elapsed_s, d->rules, (long long)d->states);
        u->unknowns_derived += d->after;
    }
    if (v)
        fprintf(stderr, " %lld to the solver: proved %lld, refuted %lld, unknown %lld in %.1f s",
                (long long)v->total, (long long)v->proved, (long long)v->refuted,
                (long long)v->unknown, v->elapsed_s);
    else
        fprintf(stderr, " none left for the solver");
    fprintf(stderr, "\n");
}

static void on_disagreement(void *user, int64_t id, const char *core)
{
    (void)user;
    fprintf(stderr,
            "\nxferverify: DISAGREEMENT on rule %lld: the axioms prove it (core: %s) "
            "but the bounded check refutes it at its own shapes; one of these axioms "
            "is wrong\n",
            (long long)id, core);
}

static void on_kept(void *user, int64_t id, int broken, xf_rule_status stored, const char *what)
{
    const report *u = user;
    fprintf(stderr, "%sxferverify: rule %lld %s; its status (%s) is kept: %s\n", u->tty ? "\n" : "",
            (long long)id, broken ? "cannot be loaded" : "got no verdict",
            xf_rulesdb_status_name(stored), what);
}

/* ---------------------------------------------------------- check-axioms */

/* The table's rows, under its heading before the first. */
static void axiom_row(void *user, const xf_axiom_check *c)
{
    int *rows = user;
    if ((*rows)++ == 0)
        printf("%-24s %4s %-11s %-11s %9s  %s\n", "axiom", "inst", "bounded", "redundancy",
               "time", "derived from");
    printf("%-24s %4d %-11s %-11s %6.0f ms  %s\n", c->name, c->instances, c->bounded,
           c->redundancy, c->seconds * 1e3, c->derived_from);
    fflush(stdout);
}

static void axiom_problem(void *user, const char *msg)
{
    (void)user;
    fprintf(stderr, "xferverify: %s\n", msg);
}

/* The axioms' self-check (xf_verify_check_axioms); exit 1 when an axiom is
 * refuted or a check failed. */
static int check_axioms(const opts *o)
{
    int rows = 0;
    xf_axiom_check_options ao = {o->dvo.vopt.vo, axiom_row, axiom_problem, &rows};
    xf_axiom_check_summary s;
    xf_error err;
    if (xf_verify_check_axioms(&ao, &s, &err) != XF_OK) {
        fprintf(stderr, "xferverify: %s\n", err.msg);
        return 1;
    }
    printf("%d axioms: %d with instances, %d valid on all of them, %d refuted, %d not checked; "
           "%d redundant\n",
           s.axioms, s.with_instances, s.valid, s.refuted, s.axioms - s.with_instances,
           s.redundant);
    return s.refuted || s.errors ? 1 : 0;
}

/* Derives and decides the rules of o->db (xf_derive_verify_db) and prints
 * the summary; the exit status. */
static int verify_db(opts *o)
{
    xf_error err;
    xf_rulesdb *db = NULL;
    if (xf_rulesdb_open(o->db, 0, &db, &err) != XF_OK) {
        fprintf(stderr, "xferverify: %s\n", err.msg);
        return 2;
    }
    report u = {isatty(2), 0, 0};
    o->dvo.vopt.version = "0.1.0";
    o->dvo.vopt.user = &u;
    o->dvo.vopt.on_progress = on_progress;
    o->dvo.vopt.on_disagreement = on_disagreement;
    o->dvo.vopt.on_kept = on_kept;
    o->dvo.dopt.user = &u;
    o->dvo.dopt.on_progress = on_derive_progress;
    o->dvo.user = &u;
    o->dvo.on_start = on_start;
    o->dvo.on_size = on_size;
    xf_verify_tally t;
    int64_t derived = 0;
    xf_status st = xf_derive_verify_db(db, o->db, &o->dvo, &t, &derived, &err);
    u.size = 0;
    progress(&u, &t, 1);
    if (o->dvo.derive)
        fprintf(stderr, "xferverify: %lld rule(s) derived from smaller ones (stored as derived "
                        "with their chain; xferdb explain ID prints it)\n",
                (long long)derived);
    if (u.unknowns_derived) {
        int64_t left = 0;
        xf_rulesdb_filter f;
        memset(&f, 0, sizeof f);
        f.status = XF_RULE_UNKNOWN;
        xf_error cerr;
        fprintf(stderr, "xferverify: %lld of them the solver had left unknown: they follow from "
                        "rules of their size it proved later",
                (long long)u.unknowns_derived);
        if (xf_rulesdb_count_rules(db, &f, &left, &cerr) == XF_OK)
            fprintf(stderr, "; the database holds %lld unknown rule(s)", (long long)left);
        fprintf(stderr, "\n");
    }
    if (t.by_shapes)
        fprintf(stderr, "xferverify: %lld of the proved rule(s) proved by the exact check at "
                        "their own shapes (and, for dims read near their ends, at every size "
                        "up to a bound), which stand for every shape they apply to "
                        "(docs/verify.md); the axioms did not prove them\n",
                (long long)t.by_shapes);
    if (t.shape_specific)
        fprintf(stderr, "xferverify: %lld rule(s) hold at their own shapes but are refuted at "
                        "other input shapes (stored refuted)\n",
                (long long)t.shape_specific);
    if (t.unknown) {
        fprintf(stderr, "xferverify: unknown by reason:");
        for (int w = 0; w <= XF_WHY_UNSUPPORTED; w++)
            if (t.unknown_why[w])
                fprintf(stderr, " %s %lld", w == XF_WHY_NONE ? "error" : xf_verify_why_name(w),
                        (long long)t.unknown_why[w]);
        fprintf(stderr, "\n");
        if (t.unknown_why[XF_WHY_TIMEOUT])
            fprintf(stderr,
                    "xferverify: %lld rule(s) stopped at the wall-clock timeout, which depends "
                    "on the machine and its load; with a longer --timeout the resource limit "
                    "(--rlimit) stops them, the same everywhere\n",
                    (long long)t.unknown_why[XF_WHY_TIMEOUT]);
    }
    fprintf(stderr,
            "xferverify: %lld hard kill(s); workers' CPU time %.1f s; %lld operator pattern(s) "
            "taken from earlier workers\n",
            (long long)t.killed, t.cpu_s, (long long)t.patterns_reused);
    xf_rulesdb_close(db);
    if (st != XF_OK) {
        fprintf(stderr, "xferverify: %s\n", err.msg);
        return 1;
    }
    if (t.kept)
        fprintf(stderr, "xferverify: %lld rule(s) already decided got an error instead of a "
                        "verdict and keep the stored one\n",
                (long long)t.kept);
    if (t.broken)
        fprintf(stderr, "xferverify: %lld rule(s) cannot be loaded (see above); nothing was "
                        "written for them\n",
                (long long)t.broken);
    if (t.disagree) {
        fprintf(stderr, "xferverify: %lld disagreement(s) between axioms and bounded check\n",
                (long long)t.disagree);
        return 1;
    }
    return t.broken ? 1 : 0;
}

#ifdef XF_HAVE_MPI
/* Under mpirun: rank 0 owns the database and records, the others decide
 * (verify/mpi.c); one rank alone runs as without MPI. */
static int run_mpi(int *argc, char ***argv, opts *o)
{
    xf_error err;
    int rank = 0, size = 1, rc = 0;
    if (xf_cluster_init(argc, argv, &rank, &size, &err) != XF_OK) {
        fprintf(stderr, "xferverify: %s\n", err.msg);
        return 1;
    }
    if (rank != 0) {
        if (xf_verify_mpi_serve(&err) != XF_OK) {
            fprintf(stderr, "xferverify: rank %d: %s\n", rank, err.msg);
            rc = 1;
        }
    } else {
        o->dvo.vopt.mpi = size > 1;
        if (o->dvo.vopt.mpi && !o->jobs_given) o->dvo.vopt.jobs = 1; /* a rank per core */
        rc = o->check_axioms ? check_axioms(o) : verify_db(o);
    }
    xf_cluster_finish();
    return rc;
}
#endif

int main(int argc, char **argv)
{
    opts o;
    int pr = parse_args(argc, argv, &o);
    if (pr) return pr == 1 ? 0 : 2;
    signal(SIGPIPE, SIG_IGN);
#ifdef XF_HAVE_MPI
    if (xf_cluster_launched()) return run_mpi(&argc, &argv, &o);
#endif
    return o.check_axioms ? check_axioms(&o) : verify_db(&o);
}
