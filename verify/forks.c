/*
 * forks.c — vf_run_forks: decides a list of rules with one forked worker
 * process per rule (worker.c), at most `jobs` at a time, and hands each
 * outcome to the caller as it arrives: schedule.c records it, an MPI worker
 * rank (mpi.c) sends it to rank 0. Each worker inherits the caller's
 * prepared verifier (Z3's set-up costs more than most rules). A worker that
 * outlives its hard deadline is killed and a crashed one noticed from its
 * pipe, so either costs one rule; the caller decides what that means.
 *
 * Before the first fork the heap's free pages go back to the system
 * (xf_heap_trim): a fork copies the page tables of every resident page and
 * the child's exit unmaps them again, and after a derive pass the parent
 * held 420 MB of freed but resident heap. Forking from it was 41% of all CPU
 * time of a 4-operator run (copy_page_range and unmap_page_range), twice the
 * solver's; trimmed, the parent is 42 MB and the same rules went from 15 to
 * 31 a second. Then what the parent still holds is remapped onto huge
 * pages where it is mostly in use (xf_heap_collapse_huge): the prepared
 * verifier's Z3 contexts and what the derive passes keep, about 65-85 MB
 * at 4 operators, were some 20,000 page-table entries that every fork
 * copied (copy_page_range, 6% of the solver's CPU time), and are a few
 * dozen; a worker that writes into a huge page splits it and copies its
 * 4 KB pages as before (docs/log/verify.md, i42g).
 *
 * Each rule is loaded here, from one read-only handle on the database,
 * just before its worker is forked: a worker that opened the database for
 * itself spent more on that (SQLite's start-up and schema, and the pages of
 * the parent's heap it wrote into) than on loading its rule. What a worker
 * hands back after its verdict, the operator patterns it read off its
 * float kernels (bounded_patterns.c), is kept here for the workers forked
 * after it, and only the verdict goes on to `done`; each time what is
 * kept has grown by 2 MB it is remapped onto huge pages like the rest
 * (some 10 MB after 2,000 size-4 rules, at most 64 MB: otherwise
 * thousands more page-table entries for every fork to copy).
 */
#define _DEFAULT_SOURCE /* wait4 */
#include "worker_internal.h"
#include "patterns_internal.h"
#include "verify_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "rulesdb/rulesdb.h"

typedef struct slot {
    pid_t pid; /* 0: free */
    int fd;
    int64_t id, index;
    double start, deadline;
    uint8_t *buf;
    size_t len, cap;
} slot;

/* Rule `id` loaded from db (NULL: the database did not open, open_err)
 * into *job, as the worker would have loaded it. */
static void load(xf_rulesdb *db, const xf_error *open_err, int64_t id, vf_loaded *job)
{
    memset(job, 0, sizeof *job);
    job->id = id;
    xf_rule_init(&job->rule);
    xf_error_clear(&job->err);
    if (!db) {
        job->st = open_err->code;
        job->err = *open_err;
        return;
    }
    job->st = xf_rulesdb_load_rule(db, id, &job->rule, &job->err);
    job->broken = job->st != XF_OK && job->st != XF_ERR_NOMEM; /* a corrupt blob, a missing graph */
}

static int spawn(vf_loaded *job, xf_verifier *v, unsigned timeout_ms, slot *s, int64_t index)
{
    int p[2];
    if (pipe(p) != 0) return -1;
    fflush(NULL);
    long parent = (long)getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        xf_child_dies_with_parent(parent);
        close(p[0]);
        xf_heap_huge_pages((size_t)256 << 20); /* Z3's fresh tables: see ir.h */
        _exit(vf_worker(job, v, p[1]));
    }
    close(p[1]);
    fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
    s->pid = pid;
    s->fd = p[0];
    s->id = job->id;
    s->index = index;
    s->len = 0;
    s->start = xf_clock_now();
    /* Room for the proof and the bounded query of each output, plus start-up. */
    s->deadline = s->start + 6.0 * timeout_ms / 1e3 + 10.0;
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

/* The length of the verdict part of s's message (an xv_msg and its
 * counterexample, or all of it when that is not complete); the patterns
 * after it, when they came whole, are kept in v for later workers.
 * *collapsed: the size of those when they were last put on huge pages. */
static uint32_t take_patterns(slot *s, xf_verifier *v, size_t *collapsed)
{
    xv_msg m;
    if (s->len < sizeof m) return (uint32_t)s->len;
    memcpy(&m, s->buf, sizeof m);
    size_t verdict = sizeof m + m.cex_len;
    if (s->len < verdict) return (uint32_t)s->len;
    if (s->len == verdict + m.patterns_len && m.patterns_len) {
        vf_patterns_merge(v->patterns, s->buf + verdict, m.patterns_len); /* best effort */
        size_t kept = vf_patterns_kept_bytes(v->patterns);
        if (kept >= *collapsed + ((size_t)2 << 20)) {
            xf_heap_collapse_huge(); /* see the top of this file */
            *collapsed = kept;
        }
    }
    return (uint32_t)verdict;
}

/* Reaps the worker of s (killing it first when `killed`) and reports it. */
static xf_status finish(slot *s, xf_verifier *v, size_t *collapsed, int killed, xv_done_fn done,
                        void *user, xf_error *err)
{
    if (killed) kill(s->pid, SIGKILL);
    int ws = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(s->pid, &ws, 0, &ru) < 0 && errno == EINTR) {
    }
    close(s->fd);
    s->pid = 0;
    xv_outcome oc;
    memset(&oc, 0, sizeof oc);
    oc.id = s->id;
    oc.index = s->index;
    oc.wstatus = ws;
    oc.killed = killed;
    oc.time_ms = (xf_clock_now() - s->start) * 1e3;
    oc.cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
                (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
    oc.limit_s = s->deadline - s->start;
    oc.len = take_patterns(s, v, collapsed);
    return done(user, &oc, s->buf, err);
}

xf_status vf_run_forks(const char *db_path, xf_verifier *v, unsigned timeout_ms, int jobs,
                       const int64_t *ids, int64_t n, xv_done_fn done, xv_tick_fn tick,
                       void *user, xf_error *err)
{
    slot slots[XF_VERIFY_MAX_JOBS];
    memset(slots, 0, sizeof slots);
    if (jobs > XF_VERIFY_MAX_JOBS) jobs = XF_VERIFY_MAX_JOBS;
    int64_t next = 0;
    int busy = 0;
    xf_status st = XF_OK;
    xf_rulesdb *db = NULL;
    xf_error open_err;
    xf_error_clear(&open_err);
    if (n > 0) xf_rulesdb_open(db_path, XF_RULESDB_READONLY, &db, &open_err); /* see the top */
    xf_heap_trim(); /* see the top of this file */
    xf_heap_collapse_huge(); /* and what is left onto huge pages, the same */
    size_t collapsed = vf_patterns_kept_bytes(v->patterns);
    while (st == XF_OK && (next < n || busy > 0)) {
        for (int k = 0; k < jobs && next < n; k++) {
            if (slots[k].pid) continue;
            vf_loaded job;
            load(db, &open_err, ids[next], &job);
            int failed = spawn(&job, v, timeout_ms, &slots[k], next) != 0;
            xf_rule_free(&job.rule);
            if (failed) {
                st = XF_FAIL(err, XF_ERR_INTERNAL, "cannot start a worker: %s", strerror(errno));
                break;
            }
            next++, busy++;
        }
        struct pollfd pf[XF_VERIFY_MAX_JOBS];
        int map[XF_VERIFY_MAX_JOBS], m = 0;
        for (int k = 0; k < jobs; k++)
            if (slots[k].pid) pf[m].fd = slots[k].fd, pf[m].events = POLLIN, map[m++] = k;
        if (m == 0) continue;
        if (poll(pf, (nfds_t)m, 200) < 0 && errno != EINTR) {
            st = XF_FAIL(err, XF_ERR_INTERNAL, "poll failed: %s", strerror(errno));
            break;
        }
        for (int i = 0; i < m && st == XF_OK; i++) {
            slot *s = &slots[map[i]];
            int eof = (pf[i].revents & (POLLIN | POLLHUP | POLLERR)) ? drain(s) : 0;
            if (eof < 0) {
                st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory reading the verdict of rule %lld",
                             (long long)s->id);
                break;
            }
            int killed = !eof && xf_clock_now() > s->deadline;
            if (!eof && !killed) continue;
            st = finish(s, v, &collapsed, killed, done, user, err);
            busy--;
        }
        if (st == XF_OK && tick) st = tick(user, err);
    }
    for (int k = 0; k < XF_VERIFY_MAX_JOBS; k++) {
        if (slots[k].pid) {
            kill(slots[k].pid, SIGKILL);
            waitpid(slots[k].pid, NULL, 0);
            close(slots[k].fd);
        }
        xf_free(slots[k].buf);
    }
    xf_rulesdb_close(db);
    return st;
}
