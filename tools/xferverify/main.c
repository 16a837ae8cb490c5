/*
 * xferverify — decide every candidate rule of a rules database and store
 * the verdict (docs/cli.md, DESIGN.md §4 "Verification"):
 *
 *   xferverify DB [-j N] [--timeout 10s] [--rlimit N] [--proof-rlimit N] [--recheck]
 *              [--limit N] [--max-shapes N] [--cross-shapes N] [--max-size N] [--no-derive] [--derive-depth N]
 *              [--derive-states N] [--derive-rounds N] [--check-axioms]
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

static void usage(FILE *f)
{
    fprintf(f,
            "usage: xferverify DB [options]\n"
            "Decides every candidate rule of the rules database DB: axiomatic proof and\n"
            "bounded element-wise check with Z3; stores proved / refuted / unknown.\n"
            "  -j N            worker processes (default: online CPUs; under mpirun, per\n"
            "                  worker rank, default 1)\n"
            "  --timeout T     per solver query, e.g. 10s, 500ms (default 10s)\n"
            "  --rlimit N      Z3 resource units per proof query and per bounded check\n"
            "                  (deterministic: the same verdicts on any machine or load;\n"
            "                  default %u, 0: none)\n"
            "  --proof-rlimit N  a lower limit for each proof query alone (default %u,\n"
            "                  0: --rlimit alone)\n"
            "  --cross-rlimit N  a lower limit for the exact bounded cross-check of a rule the\n"
            "                  axioms proved (default %u, 0: --rlimit alone); the float probe\n"
            "                  still runs at every shape\n"
            "  --cross-shapes N  input-shape assignments of a proved rule that get the exact\n"
            "                  cross-check, its own first (default 1: the own alone; up to\n"
            "                  --max-shapes); the float probe runs at all of them\n"
            "  --recheck       decide again rules that already have a verdict\n"
            "  --limit N       decide at most N rules\n"
            "  --max-shapes N  bounded check: input-shape assignments per rule, the rule's own\n"
            "                  included (default 64; 1: only the rule's own shapes)\n"
            "  --max-size N    decide only rules of at most N operators (a side's count)\n"
            "  --no-derive     send every candidate to the solver (default: first derive, size by\n"
            "                  size, the candidates that follow from smaller proved rules)\n"
            "  --derive-depth N   rewrites searched from each side of a candidate\n"
            "                     (1-4, default 3)\n"
            "  --derive-states N  graphs kept per side and candidate (default 256)\n"
            "  --derive-rounds N  the solver takes one candidate of each form (the others are\n"
            "                     the same rule at other shapes) first, in N rounds, each\n"
            "                     followed by a derive pass that also uses the rules of the\n"
            "                     size just proved (0-16, default 2; 0: no pass between)\n"
            "  --check-axioms  check every axiom on its instances with the bounded check and\n"
            "                  report which follow from the others, then exit (DB not read)\n"
            "  -h, --help      this text\n"
            "Exit status: 0 done, 1 a disagreement, a rule that cannot be loaded or a failed\n"
            "write, 2 bad usage or DB not a rules database (xfergen creates them).\n",
            XF_VERIFY_RLIMIT, XF_VERIFY_PROOF_RLIMIT, XF_VERIFY_CROSS_RLIMIT);
}

typedef struct opts {
    const char *db;
    int check_axioms;
    int jobs_given; /* -j was given: else online CPUs, 1 per rank under MPI */
    xf_derive_verify_options dvo;
} opts;

static int parse_timeout(const char *s, unsigned *ms)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || v <= 0 || v > 86400) return -1;
    if (strcmp(end, "ms") == 0) *ms = (unsigned)v;
    else if (*end == '\0' || strcmp(end, "s") == 0) *ms = (unsigned)(v * 1000);
    else if (strcmp(end, "m") == 0) *ms = (unsigned)(v * 60000);
    else return -1;
    return *ms ? 0 : -1;
}

/* 0 ok, 1 --help printed, 2 usage error (message printed). */
static int parse_args(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof *o);
    xf_derive_verify_options_init(&o->dvo);
    o->dvo.vopt.vo.timeout_ms = 10000;
    o->dvo.vopt.jobs = xf_cli_online_cpus(XF_VERIFY_MAX_JOBS);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        int64_t n;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 1;
        } else if (!strcmp(a, "--recheck")) {
            o->dvo.vopt.recheck = 1;
        } else if (!strcmp(a, "--check-axioms")) {
            o->check_axioms = 1;
        } else if (!strcmp(a, "--max-size")) {
            if (!val || xf_cli_parse_i64(val, 1, 64, &n)) {
                fprintf(stderr, "xferverify: --max-size needs a number from 1 to 64\n");
                return 2;
            }
            o->dvo.max_size = (int)n;
            i++;
        } else if (!strcmp(a, "--no-derive")) {
            o->dvo.derive = 0;
        } else if (!strcmp(a, "--derive-rounds")) {
            if (!val || xf_cli_parse_i64(val, 0, 16, &n)) {
                fprintf(stderr, "xferverify: --derive-rounds needs a number from 0 to 16\n");
                return 2;
            }
            o->dvo.rounds = (int)n;
            i++;
        } else if (!strcmp(a, "--derive-depth") || !strcmp(a, "--derive-states")) {
            int depth = a[9] == 'd';
            long long hi = depth ? XF_DERIVE_MAX_DEPTH : 1 << 20;
            if (!val || xf_cli_parse_i64(val, 1, hi, &n)) {
                fprintf(stderr, "xferverify: %s needs a number from 1 to %lld\n", a, hi);
                return 2;
            }
            if (depth) o->dvo.dopt.d.max_depth = (int)n;
            else o->dvo.dopt.d.max_states = (int)n;
            i++;
        } else if (!strcmp(a, "-j") || !strcmp(a, "--limit") || !strcmp(a, "--max-shapes") ||
                   !strcmp(a, "--cross-shapes")) {
            long long hi = a[1] == 'j' ? XF_VERIFY_MAX_JOBS : a[2] == 'm' || a[2] == 'c' ? 4096
                                                                                    : (1LL << 40);
            if (!val || xf_cli_parse_i64(val, 1, hi, &n)) {
                fprintf(stderr, "xferverify: %s needs a number from 1 to %lld\n", a, hi);
                return 2;
            }
            if (a[1] == 'j') o->dvo.vopt.jobs = (int)n, o->jobs_given = 1;
            else if (a[2] == 'm') o->dvo.vopt.vo.bounded_max_shapes = (int)n;
            else if (a[2] == 'c') o->dvo.vopt.vo.cross_shapes = (int)n;
            else o->dvo.vopt.limit = n;
            i++;
        } else if (!strcmp(a, "--rlimit") || !strcmp(a, "--proof-rlimit") ||
                   !strcmp(a, "--cross-rlimit")) {
            if (!val || xf_cli_parse_i64(val, 0, UINT32_MAX, &n)) {
                fprintf(stderr, "xferverify: %s needs a number from 0 (none) to %u\n", a,
                        UINT32_MAX);
                return 2;
            }
            if (a[2] == 'r') o->dvo.vopt.vo.rlimit = (unsigned)n;
            else if (a[2] == 'p') o->dvo.vopt.vo.proof_rlimit = (unsigned)n;
            else o->dvo.vopt.vo.cross_rlimit = (unsigned)n;
            i++;
        } else if (!strcmp(a, "--timeout")) {
            if (!val || parse_timeout(val, &o->dvo.vopt.vo.timeout_ms)) {
                fprintf(stderr, "xferverify: --timeout needs a duration such as 10s or 500ms\n");
                return 2;
            }
            i++;
        } else if (a[0] == '-') {
            fprintf(stderr, "xferverify: unknown option '%s' (see --help)\n", a);
            return 2;
        } else if (o->db) {
            fprintf(stderr, "xferverify: more than one database given ('%s', '%s')\n", o->db, a);
            return 2;
        } else {
            o->db = a;
        }
    }
    if (!o->db && !o->check_axioms) {
        fprintf(stderr, "xferverify: no rules database given (see --help)\n");
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

/* Bounded check of every instance of axiom i: "valid" when all are, else the
 * worst verdict ("refuted" first); "not checked" when it has none. */
static const char *check_instances(xf_verifier *v, int i, int *n_inst, int *refuted, int *errors)
{
    const char *name = xf_verify_axiom(i)->name, *verdict = "valid";
    *n_inst = 0;
    for (int k = 0; k < xf_verify_axiom_instance_count(); k++) {
        const xf_axiom_instance *in = xf_verify_axiom_instance(k);
        if (strcmp(in->axiom, name) != 0) continue;
        (*n_inst)++;
        xf_rule r;
        xf_error err;
        xf_bounded b;
        xf_bounded_init(&b);
        xf_status st = xf_verify_axiom_instance_rule(in, &r, &err);
        if (st == XF_OK) st = xf_verify_bounded(v, &r, &b, &err);
        xf_rule_free(&r);
        if (st != XF_OK) {
            fprintf(stderr, "xferverify: axiom %s: %s\n", name, err.msg);
            (*errors)++;
            verdict = "error";
        } else if (b.result == XF_BOUNDED_REFUTED) {
            fprintf(stderr,
                    "xferverify: WRONG AXIOM %s: the bounded check refutes its instance %s => %s "
                    "(%s)\n",
                    name, in->src, in->dst, b.detail);
            (*refuted)++;
            verdict = "REFUTED";
        } else if (b.result != XF_BOUNDED_VALID && strcmp(verdict, "valid") == 0) {
            fprintf(stderr, "xferverify: axiom %s: instance %s => %s is %s (%s)\n", name, in->src,
                    in->dst, xf_bounded_result_name(b.result), b.detail);
            verdict = xf_bounded_result_name(b.result);
        }
        xf_bounded_free(&b);
    }
    return *n_inst ? verdict : "not checked";
}

/* Validates each axiom on its instances with the bounded check and reports
 * whether it follows from the others (TASO's redundancy check). Exit 1 when
 * an axiom is refuted or a check failed. */
static int check_axioms(const opts *o)
{
    xf_error err;
    xf_verifier *v = NULL;
    if (xf_verifier_new(&o->dvo.vopt.vo, &v, &err) != XF_OK) {
        fprintf(stderr, "xferverify: %s\n", err.msg);
        return 1;
    }
    int n = xf_verify_axiom_count(), redundant = 0, with_inst = 0, valid = 0, refuted = 0,
        errors = 0;
    for (int k = 0; k < xf_verify_axiom_instance_count(); k++)
        if (xf_verify_axiom_find(xf_verify_axiom_instance(k)->axiom) < 0) {
            fprintf(stderr, "xferverify: instance %d names no axiom ('%s')\n", k,
                    xf_verify_axiom_instance(k)->axiom);
            errors++;
        }
    printf("%-24s %4s %-11s %-11s %9s  %s\n", "axiom", "inst", "bounded", "redundancy", "time",
           "derived from");
    for (int i = 0; i < n; i++) {
        double t0 = xf_clock_now();
        int n_inst = 0;
        const char *bounded = check_instances(v, i, &n_inst, &refuted, &errors);
        with_inst += n_inst > 0;
        valid += strcmp(bounded, "valid") == 0;
        xf_proof p;
        memset(&p, 0, sizeof p);
        p.result = XF_PROOF_UNKNOWN;
        const char *what = "error";
        if (xf_verify_axiom_redundant(v, i, &p, &err) != XF_OK) {
            fprintf(stderr, "xferverify: axiom %s: %s\n", xf_verify_axiom(i)->name, err.msg);
            errors++;
        } else {
            what = p.result == XF_PROOF_PROVED ? "redundant"
                   : p.result == XF_PROOF_UNKNOWN ? "not derived"
                                                  : "independent";
            redundant += p.result == XF_PROOF_PROVED;
        }
        printf("%-24s %4d %-11s %-11s %6.0f ms  %s\n", xf_verify_axiom(i)->name, n_inst, bounded,
               what, (xf_clock_now() - t0) * 1e3, p.result == XF_PROOF_PROVED ? p.core_names : "");
    }
    printf("%d axioms: %d with instances, %d valid on all of them, %d refuted, %d not checked; "
           "%d redundant\n",
           n, with_inst, valid, refuted, n - with_inst, redundant);
    xf_verifier_free(v);
    return refuted || errors ? 1 : 0;
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
                        "their own shapes, which stand for every shape they apply to "
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
    fprintf(stderr, "xferverify: %lld hard kill(s); workers' CPU time %.1f s\n",
            (long long)t.killed, t.cpu_s);
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
