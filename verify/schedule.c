/*
 * schedule.c — xf_verify_db: decides the rules of a rules database with one
 * forked worker process per rule (worker.c), at most `jobs` at a time, and
 * records each verdict as it arrives. The verifier is created and prepared
 * once, before the first fork (Z3's set-up costs more than most rules), and
 * every worker inherits a copy. A worker that outlives its hard deadline is
 * killed and a crashed one noticed from its pipe, so either costs one rule,
 * recorded unknown with the reason, as is a worker's error (out of memory
 * included): an error never becomes proved or refuted, and never replaces a
 * stored proved or refuted verdict either (--recheck). A rule that does not
 * load is reported and left as it is. Running out of memory here, reading a
 * worker's message, stops the run with XF_ERR_NOMEM. Verdicts wait in memory
 * and are written in short batches (pending.c), so the write lock is free
 * for other writers between them and an interrupted or failed call keeps
 * most of its work.
 */
#include "pending.h"
#include "worker.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void xf_verify_db_options_init(xf_verify_db_options *o)
{
    memset(o, 0, sizeof *o);
    o->jobs = 1;
    xf_verify_options_init(&o->vo);
}

/* ------------------------------------------------------------ selection */

/* The rules to decide, in id order, with the status each has now. */
static xf_status select_rules(xf_rulesdb *db, const xf_verify_db_options *o, int64_t **ids,
                              xf_rule_status **was, int64_t *n, xf_error *err)
{
    xf_rulesdb_filter f;
    memset(&f, 0, sizeof f);
    f.any_status = o->recheck;
    f.status = XF_RULE_CANDIDATE;
    f.size = o->size;
    xf_rulesdb_iter *it = NULL;
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    *ids = NULL;
    *was = NULL;
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
            int64_t *p = xf_realloc(*ids, (size_t)cap * sizeof *p);
            if (p) *ids = p;
            xf_rule_status *w = xf_realloc(*was, (size_t)cap * sizeof *w);
            if (w) *was = w;
            if (!p || !w) {
                st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory listing rules");
                break;
            }
        }
        (*was)[*n] = info.status;
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
    xf_rule_status was; /* its status before this run */
    double start, deadline;
    uint8_t *buf;
    size_t len, cap;
} slot;

typedef struct sched {
    xf_rulesdb *db;
    const char *path;
    const xf_verify_db_options *o;
    xf_verifier *v;
    xf_verify_tally *t;
    double t0;
    xv_pending q; /* verdicts not yet written */
} sched;

static xf_status record(sched *c, const slot *s, int wstatus, int killed, xf_error *err)
{
    xf_verify_tally *t = c->t;
    xv_msg m;
    memset(&m, 0, sizeof m);
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
                if (c->o->on_disagreement) c->o->on_disagreement(c->o->user, s->id, m.core);
            } else if (m.proof == XF_PROOF_PROVED) {
                t->shape_specific++; /* the detail stored with the verdict says where */
            }
        } else if (m.proof == XF_PROOF_PROVED) {
            v.status = XF_RULE_PROVED;
            v.axioms = m.core;
        }
    }
    v.detail = detail;
    /* Not a verdict: a rule that does not load, or an error on one that has
     * a verdict already. Reported; what is stored stays. */
    int broken = full && m.failed && m.broken;
    int error = killed || !full || m.failed;
    xf_status st = XF_OK;
    t->done++;
    if (broken || (error && (s->was == XF_RULE_PROVED || s->was == XF_RULE_REFUTED))) {
        if (broken) t->broken++;
        else t->kept++;
        if (c->o->on_kept)
            c->o->on_kept(c->o->user, s->id, broken, s->was, broken ? m.errmsg : detail);
    } else {
        if (v.status == XF_RULE_PROVED) t->proved++;
        else if (v.status == XF_RULE_REFUTED) t->refuted++;
        else t->unknown++;
        st = xv_pending_add(&c->q, s->id, &v, err);
    }
    t->elapsed_s = xf_clock_now() - c->t0;
    if (c->o->on_progress) c->o->on_progress(c->o->user, t);
    return st;
}

static int spawn(sched *c, slot *s, int64_t id, xf_rule_status was)
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
        _exit(xv_worker(c->path, id, c->v, p[1]));
    }
    close(p[1]);
    fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
    s->pid = pid;
    s->fd = p[0];
    s->id = id;
    s->was = was;
    s->len = 0;
    s->start = xf_clock_now();
    /* Room for the proof and the bounded query of each output, plus start-up. */
    s->deadline = s->start + 6.0 * c->o->vo.timeout_ms / 1e3 + 10.0;
    return 0;
}

/* Reads what is available; 1 at end of file, -1 out of memory (the message
 * could not be kept, so the rule gets no verdict from it). */
static int drain(slot *s)
{
    for (;;) {
        if (s->cap - s->len < 4096) {
            size_t cap = s->cap ? 2 * s->cap : 8192;
            uint8_t *b = xf_realloc(s->buf, cap);
            if (!b) return -1;
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

static xf_status run_all(sched *c, const int64_t *ids, const xf_rule_status *was, xf_error *err)
{
    slot slots[XF_VERIFY_MAX_JOBS];
    memset(slots, 0, sizeof slots);
    int jobs = c->o->jobs;
    int64_t next = 0, total = c->t->total;
    int busy = 0;
    xf_status st = XF_OK;
    while (st == XF_OK && (next < total || busy > 0)) {
        for (int k = 0; k < jobs && next < total; k++) {
            if (slots[k].pid) continue;
            if (spawn(c, &slots[k], ids[next], was[next]) != 0) {
                st = XF_FAIL(err, XF_ERR_INTERNAL, "cannot start a worker: %s", strerror(errno));
                break;
            }
            next++, busy++;
        }
        struct pollfd pf[XF_VERIFY_MAX_JOBS];
        int map[XF_VERIFY_MAX_JOBS], n = 0;
        for (int k = 0; k < jobs; k++)
            if (slots[k].pid) pf[n].fd = slots[k].fd, pf[n].events = POLLIN, map[n++] = k;
        if (n == 0) continue;
        if (poll(pf, (nfds_t)n, 200) < 0 && errno != EINTR) {
            st = XF_FAIL(err, XF_ERR_INTERNAL, "poll failed: %s", strerror(errno));
            break;
        }
        for (int i = 0; i < n && st == XF_OK; i++) {
            slot *s = &slots[map[i]];
            int eof = (pf[i].revents & (POLLIN | POLLHUP | POLLERR)) ? drain(s) : 0;
            if (eof < 0) {
                st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory reading the verdict of rule %lld",
                             (long long)s->id);
                break;
            }
            int killed = !eof && xf_clock_now() > s->deadline;
            if (!eof && !killed) continue;
            if (killed) kill(s->pid, SIGKILL);
            int ws = 0;
            while (waitpid(s->pid, &ws, 0) < 0 && errno == EINTR) {
            }
            close(s->fd);
            st = record(c, s, ws, killed, err);
            s->pid = 0;
            busy--;
        }
        if (st == XF_OK && xv_pending_due(&c->q, xf_clock_now()))
            st = xv_pending_flush(&c->q, c->db, err);
    }
    for (int k = 0; k < XF_VERIFY_MAX_JOBS; k++) {
        if (slots[k].pid) {
            kill(slots[k].pid, SIGKILL);
            waitpid(slots[k].pid, NULL, 0);
            close(slots[k].fd);
        }
        xf_free(slots[k].buf);
    }
    return st;
}

xf_status xf_verify_db(xf_rulesdb *db, const char *path, const xf_verify_db_options *o,
                       xf_verify_tally *t, xf_error *err)
{
    memset(t, 0, sizeof *t);
    if (o->jobs < 1 || o->jobs > XF_VERIFY_MAX_JOBS)
        return XF_FAIL(err, XF_ERR_INVALID, "%d worker processes (1 to %d)", o->jobs,
                       XF_VERIFY_MAX_JOBS);
    sched c = {db, path, o, NULL, t, xf_clock_now(), {NULL, 0, 0, 0}};
    int64_t *ids = NULL;
    xf_rule_status *was = NULL;
    int64_t run_id = 0;
    char options[128];
    snprintf(options, sizeof options, "-j %d --timeout %ums --max-shapes %d%s", o->jobs,
             o->vo.timeout_ms, o->vo.bounded_max_shapes, o->recheck ? " --recheck" : "");
    xf_rulesdb_run_desc d = {"xferverify", o->version, options, NULL, NULL, o->vo.seed};
    xf_status st = select_rules(db, o, &ids, &was, &t->total, err);
    if (st == XF_OK) st = xf_verifier_new(&o->vo, &c.v, err);
    if (st == XF_OK) st = xf_verifier_prepare(c.v, err);
    if (st == XF_OK) st = xf_rulesdb_run_start(db, &d, &run_id, err);
    if (st == XF_OK) st = run_all(&c, ids, was, err);
    if (st == XF_OK) st = xv_pending_flush(&c.q, db, err);
    else xv_pending_flush(&c.q, db, NULL); /* keep what was decided */
    if (st == XF_OK) st = xf_rulesdb_run_stage(db, run_id, "verify", xf_clock_now() - c.t0, t->done, err);
    if (run_id)
        xf_rulesdb_run_set_state(db, run_id, st == XF_OK ? XF_RUN_DONE : XF_RUN_INTERRUPTED,
                                 NULL);
    t->elapsed_s = xf_clock_now() - c.t0;
    xf_free(ids);
    xf_free(was);
    xv_pending_free(&c.q);
    xf_verifier_free(c.v);
    return st;
}
