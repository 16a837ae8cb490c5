/*
 * workers.c — the derive pass's searches spread over forked worker
 * processes, so a pass takes the machine's cores as the solver does
 * (xferverify -j). The deriver is built once, before the forks, and each
 * worker inherits it; worker j searches the candidates j, j + jobs, ... of
 * the list with its own read-only database handle (SQLite handles do not
 * survive fork) and writes one fixed-size message per candidate to its
 * pipe. The parent reads them as they come and hands each to the caller,
 * which replays a chain found and stores it (derive_db.c): the database
 * is written by the parent alone, and what is derived does not depend on
 * the number of workers (each search sees only the deriver). A worker that
 * fails or dies fails the pass, as an error of the search does when it
 * runs in the parent. A worker dies with its parent (xf_child_dies_with_parent):
 * xferverify stopped by a signal mid-pass leaves no searches running.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "derive_internal.h"

typedef struct dw_worker {
    pid_t pid; /* 0: done and reaped */
    int fd;
    derive_msg buf;
    size_t len;
} dw_worker;

/* The worker: searches ids[j], ids[j + jobs], ...; the exit code. */
static int work(const char *path, xf_deriver *d, const int64_t *ids, const uint8_t *depths,
                int64_t n, int j, int jobs, int fd)
{
    xf_rulesdb *db = NULL;
    derive_msg m;
    memset(&m, 0, sizeof m);
    xf_error err;
    xf_status st = xf_rulesdb_open(path, XF_RULESDB_READONLY, &db, &err);
    for (int64_t i = j; st == XF_OK && i < n; i += jobs) {
        memset(&m, 0, sizeof m);
        m.index = i;
        st = derive_search_one(db, d, ids[i], depths ? depths[i] : 0, &m, &err);
        if (st == XF_OK && xf_fd_write_all(fd, &m, sizeof m) != 0) return 1;
    }
    xf_rulesdb_close(db);
    if (st == XF_OK) return 0;
    memset(&m, 0, sizeof m);
    m.index = -1;
    m.failed = st;
    snprintf(m.errmsg, sizeof m.errmsg, "%s", err.msg);
    return xf_fd_write_all(fd, &m, sizeof m) != 0 ? 1 : 2;
}

/* Reads what worker w has; hands each whole message to got. 1 at end of
 * file. */
static int drain(dw_worker *w, derive_got_fn got, void *user, xf_status *st, xf_error *err)
{
    for (;;) {
        ssize_t r = read(w->fd, (char *)&w->buf + w->len, sizeof w->buf - w->len);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && errno == EAGAIN) return 0;
        if (r <= 0) return 1;
        w->len += (size_t)r;
        if (w->len < sizeof w->buf) continue;
        w->len = 0;
        if (w->buf.index < 0) {
            *st = XF_FAIL(err, (xf_status)w->buf.failed, "derive worker: %s", w->buf.errmsg);
            return 1;
        }
        if (*st == XF_OK) *st = got(user, &w->buf, err);
    }
}

xf_status derive_search_forked(xf_rulesdb *db, xf_deriver *d, const int64_t *ids,
                               const uint8_t *depths, int64_t n, int jobs, derive_got_fn got,
                               void *user, xf_error *err)
{
    dw_worker w[XF_DERIVE_MAX_JOBS];
    memset(w, 0, sizeof w);
    if (jobs > XF_DERIVE_MAX_JOBS) jobs = XF_DERIVE_MAX_JOBS;
    xf_status st = XF_OK;
    int live = 0;
    fflush(NULL);
    for (int j = 0; j < jobs && st == XF_OK; j++) {
        int p[2];
        if (pipe(p) != 0) {
            st = XF_FAIL(err, XF_ERR_INTERNAL, "cannot start a derive worker: %s",
                         strerror(errno));
            break;
        }
        long parent = (long)getpid();
        pid_t pid = fork();
        if (pid == 0) {
            xf_child_dies_with_parent(parent); /* a stopped xferverify leaves none behind */
            close(p[0]);
            _exit(work(xf_rulesdb_path(db), d, ids, depths, n, j, jobs, p[1]));
        }
        close(p[1]);
        if (pid < 0) {
            close(p[0]);
            st = XF_FAIL(err, XF_ERR_INTERNAL, "cannot start a derive worker: %s",
                         strerror(errno));
            break;
        }
        fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) | O_NONBLOCK);
        w[j] = (dw_worker){pid, p[0], {0}, 0};
        live++;
    }
    while (live > 0) {
        struct pollfd pf[XF_DERIVE_MAX_JOBS];
        int map[XF_DERIVE_MAX_JOBS], m = 0;
        for (int j = 0; j < jobs; j++)
            if (w[j].pid) pf[m].fd = w[j].fd, pf[m].events = POLLIN, map[m++] = j;
        if (poll(pf, (nfds_t)m, 1000) < 0 && errno != EINTR) {
            if (st == XF_OK) st = XF_FAIL(err, XF_ERR_INTERNAL, "poll: %s", strerror(errno));
            for (int i = 0; i < m; i++) kill(w[map[i]].pid, SIGKILL);
        }
        for (int i = 0; i < m; i++) {
            dw_worker *x = &w[map[i]];
            int eof = (pf[i].revents & (POLLIN | POLLHUP | POLLERR)) && drain(x, got, user, &st, err);
            if (st != XF_OK) /* nothing more will be kept: stop the others */
                for (int k = 0; k < jobs; k++)
                    if (w[k].pid && &w[k] != x) kill(w[k].pid, SIGKILL);
            if (!eof) continue;
            int ws = 0;
            while (waitpid(x->pid, &ws, 0) < 0 && errno == EINTR) {
            }
            close(x->fd);
            x->pid = 0;
            live--;
            if (st == XF_OK && !(WIFEXITED(ws) && WEXITSTATUS(ws) == 0)) /* died */
                st = XF_FAIL(err, XF_ERR_INTERNAL, "a derive worker %s %d",
                             WIFSIGNALED(ws) ? "was killed by signal" : "exited with",
                             WIFSIGNALED(ws) ? WTERMSIG(ws) : WEXITSTATUS(ws));
        }
    }
    return st;
}
