/*
 * xferverify — decide every candidate rule of a rules database and store
 * the verdict (docs/cli.md, DESIGN.md §4 "Verification"):
 *
 *   xferverify DB [-j N] [--timeout 10s] [--recheck] [--limit N] [--max-shapes N]
 *              [--check-axioms]
 *
 * Each rule runs in its own forked worker (worker.c), at most N at a time,
 * so a crash or a hang costs one rule: a worker that outlives its hard
 * deadline is killed and the rule recorded unknown with the reason. The
 * verifier is created and prepared once, before the first fork, and every
 * worker inherits a copy (Z3's set-up costs more than most rules). The
 * verdict combines the two checks: proved only when the axiomatic proof
 * succeeds and the bounded check does not refute; refuted when the bounded
 * check finds a counterexample (stored in the database); unknown otherwise.
 * A rule the axioms prove but the bounded check refutes at the rule's own
 * shapes is a disagreement (a wrong axiom) and is reported loudly on
 * stderr. Refuted only at other input shapes, it is a shape-specific rule:
 * the proof encodes the rule's own sizes (concat boundaries, 1x1
 * transposes), so the axioms are not contradicted; it is stored refuted
 * (the verdict's detail names the shapes) and counted in the summary.
 *
 * Verdicts are committed in batches, so an interrupted run keeps most of
 * its work; a rerun decides only candidates unless --recheck.
 *
 * --check-axioms validates the axioms themselves instead: each axiom's
 * concrete instances (verify/axiom_instances.c) go through the bounded
 * check, and each axiom is tried against the others for redundancy.
 *
 * Exit status: 0 every selected rule got a verdict; 1 a disagreement, a
 * refuted axiom or a database write failed; 2 bad usage or an unreadable
 * database.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rulesdb/rulesdb.h"
#include "xferverify.h"

#define XV_MAX_JOBS 64

static void usage(FILE *f)
{
    fprintf(f,
            "usage: xferverify DB [options]\n"
            "Decides every candidate rule of the rules database DB: axiomatic proof and\n"
            "bounded element-wise check with Z3; stores proved / refuted / unknown.\n"
            "  -j N            worker processes (default 1)\n"
            "  --timeout T     per solver query, e.g. 10s, 500ms (default 10s)\n"
            "  --recheck       decide again rules that already have a verdict\n"
            "  --limit N       decide at most N rules\n"
            "  --max-shapes N  bounded check: input-shape assignments per rule, the rule's own\n"
            "                  included (default 64; 1: only the rule's own shapes)\n"
            "  --check-axioms  check every axiom on its instances with the bounded check and\n"
            "                  report which follow from the others, then exit (DB not read)\n"
            "  -h, --help      this text\n"
            "Exit status: 0 done, 1 a disagreement or a failed write, 2 bad usage.\n");
}

typedef struct opts {
    const char *db;
    int jobs, recheck, check_axioms;
    long long limit;
    xf_verify_options vo;
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

static int parse_int(const char *s, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

/* 0 ok, 1 --help printed, 2 usage error (message printed). */
static int parse_args(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof *o);
    o->jobs = 1;
    xf_verify_options_init(&o->vo);
    o->vo.timeout_ms = 10000;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
        long long n;
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 1;
        } else if (!strcmp(a, "--recheck")) {
            o->recheck = 1;
        } else if (!strcmp(a, "--check-axioms")) {
            o->check_axioms = 1;
        } else if (!strcmp(a, "-j") || !strcmp(a, "--limit") || !strcmp(a, "--max-shapes")) {
            long long hi = a[1] == 'j' ? XV_MAX_JOBS : a[2] == 'm' ? 4096 : (1LL << 40);
            if (!val || parse_int(val, 1, hi, &n)) {
                fprintf(stderr, "xferverify: %s needs a number from 1 to %lld\n", a, hi);
                return 2;
            }
            if (a[1] == 'j') o->jobs = (int)n;
            else if (a[2] == 'm') o->vo.bounded_max_shapes = (int)n;
            else o->limit = n;
            i++;
        } else if (!strcmp(a, "--timeout")) {
            if (!val || parse_timeout(val, &o->vo.timeout_ms)) {
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

/* ------------------------------------------------------------ selection */

static xf_status select_rules(xf_rulesdb *db, const opts *o, int64_t **ids, int64_t *n,
                              xf_error *err)
{
    xf_rulesdb_filter f;
    memset(&f, 0, sizeof f);
    f.any_status = o->recheck;
    f.status = XF_RULE_CANDIDATE;
    xf_rulesdb_iter *it = NULL;
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    *ids = NULL;
    *n = 0;
    int64_t cap = 0;
    int has = 1;
    xf_status st = xf_rulesdb_iter_begin(db, &f, &it, err);
    while (st == XF_OK && (o->limit == 0 || *n < o->limit)) {
        st = xf_rulesdb_iter_next(it, &info, &has, err);
        if (st != XF_OK || !has) break;
        if (info.status == XF_RULE_PRUNED) continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 256;
            int64_t *p = realloc(*ids, (size_t)cap * sizeof *p);
            if (!p) {
                st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory listing rules");
                break;
            }
            *ids = p;
        }
        (*ids)[(*n)++] = info.id;
    }
    xf_rulesdb_rule_info_free(&info);
    xf_rulesdb_iter_free(it);
    return st;
}

/* ------------------------------------------------------------- workers */

typedef struct slot {
    pid_t pid; /* 0: free */
    int fd;
    int64_t id;
    double start, deadline;
    uint8_t *buf;
    size_t len, cap;
} slot;

typedef struct tally {
    int64_t done, total, proved, refuted, unknown, disagree, shape_specific;
    double t0;
    int tty;
} tally;

static void progress(tally *t, int final)
{
    if (!t->tty && !final && t->done % 100 != 0) return;
    double el = xf_clock_now() - t->t0;
    fprintf(stderr, "%s[%lld/%lld] proved %lld  refuted %lld  unknown %lld  %.1f s  %.1f rules/s%s",
            t->tty ? "\r" : "", (long long)t->done, (long long)t->total, (long long)t->proved,
            (long long)t->refuted, (long long)t->unknown, el, el > 0 ? (double)t->done / el : 0.0,
            t->tty && !final ? "" : "\n");
}

static xf_status record(xf_rulesdb *db, const slot *s, int wstatus, int killed, tally *t,
                        xf_error *err)
{
    xv_msg m;
    char detail[1024];
    const uint8_t *cex = NULL;
    xf_rulesdb_verdict v;
    memset(&v, 0, sizeof v);
    v.status = XF_RULE_UNKNOWN;
    v.time_ms = (xf_clock_now() - s->start) * 1e3;
    int full = s->len >= sizeof m;
    if (full) {
        memcpy(&m, s->buf, sizeof m);
        full = s->len == sizeof m + m.cex_len;
        cex = s->buf + sizeof m;
    }
    if (killed) {
        snprintf(detail, sizeof detail, "worker killed after the hard deadline (%.0f s)",
                 s->deadline - s->start);
    } else if (!full) {
        if (WIFSIGNALED(wstatus))
            snprintf(detail, sizeof detail, "worker crashed (signal %d)", WTERMSIG(wstatus));
        else
            snprintf(detail, sizeof detail, "worker exited (%d) without a verdict",
                     WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
    } else if (m.failed) {
        snprintf(detail, sizeof detail, "error: %s", m.errmsg);
    } else {
        snprintf(detail, sizeof detail, "axioms: %s (%s); bounded: %s (%s)",
                 xf_proof_result_name(m.proof), m.proof_detail[0] ? m.proof_detail : "-",
                 xf_bounded_result_name(m.bounded), m.bounded_detail);
        if (m.bounded == XF_BOUNDED_REFUTED) {
            v.status = XF_RULE_REFUTED;
            v.counterexample = m.cex_len ? cex : NULL;
            v.counterexample_len = m.cex_len;
            if (m.proof == XF_PROOF_PROVED && m.bounded_shape == 0) {
                t->disagree++;
                fprintf(stderr,
                        "\nxferverify: DISAGREEMENT on rule %lld: the axioms prove it (core: %s) "
                        "but the bounded check refutes it at its own shapes; one of these axioms "
                        "is wrong\n",
                        (long long)s->id, m.core);
            } else if (m.proof == XF_PROOF_PROVED) {
                t->shape_specific++; /* the detail stored with the verdict says where */
            }
        } else if (m.proof == XF_PROOF_PROVED) {
            v.status = XF_RULE_PROVED;
            v.axioms = m.core;
        }
    }
    v.detail = detail;
    if (v.status == XF_RULE_PROVED) t->proved++;
    else if (v.status == XF_RULE_REFUTED) t->refuted++;
    else t->unknown++;
    t->done++;
    xf_status st = xf_rulesdb_set_verdict(db, s->id, &v, err);
    if (st == XF_OK && xf_rulesdb_batch_writes(db) >= 64) {
        st = xf_rulesdb_commit(db, err);
        if (st == XF_OK) st = xf_rulesdb_begin(db, err);
    }
    progress(t, 0);
    return st;
}

static int spawn(slot *s, const opts *o, xf_verifier *v, int64_t id)
{
    int p[2];
    if (pipe(p) != 0) return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        close(p[0]);
        _exit(xv_worker(o->db, id, v, p[1]));
    }
    close(p[1]);
    fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
    s->pid = pid;
    s->fd = p[0];
    s->id = id;
    s->len = 0;
    s->start = xf_clock_now();
    /* Room for the proof and the bounded query of each output, plus start-up. */
    s->deadline = s->start + 6.0 * o->vo.timeout_ms / 1e3 + 10.0;
    return 0;
}

/* Reads what is available; 1 at end of file. */
static int drain(slot *s)
{
    for (;;) {
        if (s->cap - s->len < 4096) {
            size_t cap = s->cap ? 2 * s->cap : 8192;
            uint8_t *b = realloc(s->buf, cap);
            if (!b) return 1;
            s->buf = b, s->cap = cap;
        }
        ssize_t r = read(s->fd, s->buf + s->len, s->cap - s->len);
        if (r > 0) {
            s->len += (size_t)r;
            continue;
        }
        if (r < 0 && errno == EINTR) continue;
        return r == 0 || errno != EAGAIN;
    }
}

static xf_status run_all(xf_rulesdb *db, const opts *o, xf_verifier *v, const int64_t *ids,
                         tally *t, xf_error *err)
{
    slot slots[XV_MAX_JOBS];
    memset(slots, 0, sizeof slots);
    int64_t next = 0;
    int busy = 0;
    xf_status st = XF_OK;
    while (st == XF_OK && (next < t->total || busy > 0)) {
        for (int k = 0; k < o->jobs && next < t->total; k++) {
            if (slots[k].pid) continue;
            if (spawn(&slots[k], o, v, ids[next]) != 0) {
                st = XF_FAIL(err, XF_ERR_INTERNAL, "cannot start a worker: %s", strerror(errno));
                break;
            }
            next++, busy++;
        }
        struct pollfd pf[XV_MAX_JOBS];
        int map[XV_MAX_JOBS], n = 0;
        for (int k = 0; k < o->jobs; k++)
            if (slots[k].pid) pf[n].fd = slots[k].fd, pf[n].events = POLLIN, map[n++] = k;
        if (n == 0) continue;
        if (poll(pf, (nfds_t)n, 200) < 0 && errno != EINTR) {
            st = XF_FAIL(err, XF_ERR_INTERNAL, "poll failed: %s", strerror(errno));
            break;
        }
        for (int i = 0; i < n && st == XF_OK; i++) {
            slot *s = &slots[map[i]];
            int eof = (pf[i].revents & (POLLIN | POLLHUP | POLLERR)) ? drain(s) : 0;
            int killed = !eof && xf_clock_now() > s->deadline;
            if (!eof && !killed) continue;
            if (killed) kill(s->pid, SIGKILL);
            int ws = 0;
            while (waitpid(s->pid, &ws, 0) < 0 && errno == EINTR) {
            }
            close(s->fd);
            st = record(db, s, ws, killed, t, err);
            s->pid = 0;
            busy--;
        }
    }
    for (int k = 0; k < XV_MAX_JOBS; k++) {
        if (slots[k].pid) {
            kill(slots[k].pid, SIGKILL);
            waitpid(slots[k].pid, NULL, 0);
            close(slots[k].fd);
        }
        free(slots[k].buf);
    }
    return st;
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
    if (xf_verifier_new(&o->vo, &v, &err) != XF_OK) {
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

int main(int argc, char **argv)
{
    opts o;
    int pr = parse_args(argc, argv, &o);
    if (pr) return pr == 1 ? 0 : 2;
    signal(SIGPIPE, SIG_IGN);
    if (o.check_axioms) return check_axioms(&o);

    xf_error err;
    xf_rulesdb *db = NULL;
    if (xf_rulesdb_open(o.db, 0, &db, &err) != XF_OK) {
        fprintf(stderr, "xferverify: %s\n", err.msg);
        return 2;
    }
    xf_verifier *v = NULL;
    int64_t *ids = NULL;
    tally t;
    memset(&t, 0, sizeof t);
    t.tty = isatty(2);
    t.t0 = xf_clock_now();
    int64_t run_id = 0;
    char options[128];
    snprintf(options, sizeof options, "-j %d --timeout %ums --max-shapes %d%s", o.jobs,
             o.vo.timeout_ms, o.vo.bounded_max_shapes, o.recheck ? " --recheck" : "");
    xf_rulesdb_run_desc d = {"xferverify", "0.1.0", options, NULL, NULL, o.vo.seed};
    xf_status st = select_rules(db, &o, &ids, &t.total, &err);
    if (st == XF_OK) st = xf_verifier_new(&o.vo, &v, &err);
    if (st == XF_OK) st = xf_verifier_prepare(v, &err);
    if (st == XF_OK) st = xf_rulesdb_run_start(db, &d, &run_id, &err);
    if (st == XF_OK) st = xf_rulesdb_begin(db, &err);
    if (st == XF_OK) st = run_all(db, &o, v, ids, &t, &err);
    if (st == XF_OK) st = xf_rulesdb_commit(db, &err);
    else if (xf_rulesdb_in_batch(db)) xf_rulesdb_commit(db, NULL); /* keep what was decided */
    if (st == XF_OK) st = xf_rulesdb_run_stage(db, run_id, "verify", xf_clock_now() - t.t0, t.done, &err);
    if (run_id)
        xf_rulesdb_run_set_state(db, run_id, st == XF_OK ? XF_RUN_DONE : XF_RUN_INTERRUPTED,
                                 NULL);
    progress(&t, 1);
    if (t.shape_specific)
        fprintf(stderr, "xferverify: %lld rule(s) hold at their own shapes but are refuted at "
                        "other input shapes (stored refuted)\n",
                (long long)t.shape_specific);
    free(ids);
    xf_verifier_free(v);
    xf_rulesdb_close(db);
    if (st != XF_OK) {
        fprintf(stderr, "xferverify: %s\n", err.msg);
        return 1;
    }
    if (t.disagree) {
        fprintf(stderr, "xferverify: %lld disagreement(s) between axioms and bounded check\n",
                (long long)t.disagree);
        return 1;
    }
    return 0;
}
