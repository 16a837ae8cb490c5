/*
 * outfile.c — the one way rlflow writes an output file (xf_outfile, see
 * ir.h). A regular file, or a path that does not exist yet, is written
 * atomically: a temporary file in the same directory, fsync, rename over the
 * destination, so a reader (or a crash) sees the old file or the new one,
 * never a part of either. Anything else the user names with -o — a device
 * such as /dev/null, a FIFO, a socket — is written through: opened for
 * writing and never replaced, since renaming over it would destroy it (as
 * root, -o /dev/null would turn /dev/null into a regular file). A symbolic
 * link is followed, so the file it points to is written by the same rule
 * and the link stays a link. Every write, the flush, the fsync and the
 * close are checked, so a full disk or /dev/full is an error with the
 * system's message, and on any failure the temporary file is removed and
 * the destination is left as it was. Files that belong together (a model
 * and its external data) are committed together: all are written, flushed
 * and fsynced before the first is renamed into place, so a failure while
 * writing any of them leaves every destination as it was. xf_fd_write_all
 * is the write loop of a worker's pipe (verify/, derive/).
 *
 * Two guards. A run names the files it reads (xf_outfile_protect: its
 * model, its rules database, its cost cache) and no output may be one of
 * them (same device and inode, or for a file not there yet the same
 * resolved path): `-o rules.db` or `--external-data model.onnx` named the
 * tool's own input and destroyed it. And a temporary file being written
 * is removed when the process is stopped by SIGINT, SIGTERM or SIGHUP
 * (where the tool has not set its own handler): a Ctrl-C during a write
 * left `out.onnx.tmp.PID.0` (gigabytes with external data) behind.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include "ir.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Links followed before giving up, as the kernel's ELOOP limit. */
#define MAX_LINKS 40
/* Temporary names tried before giving up ("<dest>.tmp.<pid>.<k>"). */
#define MAX_TEMP_TRIES 100

/* ----------------------------------------------------- files not to write */

#define MAX_PROTECTED 16

typedef struct protected_file {
    int exists;
    dev_t dev;
    ino_t ino;
    char *where; /* resolved path (the directory resolved, for a new file) */
    char what[96];
} protected_file;

static protected_file protected_files[MAX_PROTECTED];
static int n_protected;

/* The resolved form of path: realpath of the file, or of its directory
 * joined with its name when the file is not there (xf_malloc'd, NULL when
 * even the directory cannot be resolved, or out of memory: *oom 1). */
static char *resolved(const char *path, int *oom)
{
    char r[PATH_MAX];
    *oom = 0;
    if (realpath(path, r)) {
        char *c = xf_strdup(r);
        *oom = !c;
        return c;
    }
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (slash && slash == path) snprintf(dir, sizeof dir, "/");
    if (!realpath(dir, r)) return NULL;
    const char *base = slash ? slash + 1 : path;
    size_t n = strlen(r) + strlen(base) + 2;
    char *c = xf_malloc(n);
    if (c) snprintf(c, n, "%s/%s", r, base);
    *oom = !c;
    return c;
}

xf_status xf_outfile_protect(const char *path, const char *what, xf_error *err)
{
    if (!path || !*path) return XF_OK;
    struct stat sb;
    int there = stat(path, &sb) == 0;
    for (int i = 0; there && i < n_protected; i++) /* once is enough */
        if (protected_files[i].exists && protected_files[i].dev == sb.st_dev &&
            protected_files[i].ino == sb.st_ino)
            return XF_OK;
    if (n_protected == MAX_PROTECTED)
        return XF_FAIL(err, XF_ERR_INVALID, "more than %d files to keep from being overwritten",
                       MAX_PROTECTED);
    protected_file *p = &protected_files[n_protected];
    memset(p, 0, sizeof *p);
    if (there) {
        if (!S_ISREG(sb.st_mode)) return XF_OK; /* a device or FIFO is not overwritten */
        p->exists = 1, p->dev = sb.st_dev, p->ino = sb.st_ino;
    }
    int oom = 0;
    p->where = resolved(path, &oom);
    if (oom) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory keeping %s from being overwritten", path);
    snprintf(p->what, sizeof p->what, "%s", what ? what : "an input");
    if (!p->exists && !p->where) return XF_OK; /* nowhere anything could be written */
    n_protected++;
    return XF_OK;
}

void xf_outfile_protect_release(int mark)
{
    for (int i = mark; i < n_protected; i++) xf_free(protected_files[i].where);
    if (mark < n_protected) n_protected = mark < 0 ? 0 : mark;
}

void xf_outfile_protect_clear(void)
{
    xf_outfile_protect_release(0);
}

int xf_outfile_protect_mark(void)
{
    return n_protected;
}

xf_status xf_outfile_check(const char *path, xf_error *err)
{
    if (!path || n_protected == 0) return XF_OK;
    struct stat sb;
    int exists = stat(path, &sb) == 0;
    char *where = NULL;
    for (int i = 0; i < n_protected; i++) {
        const protected_file *p = &protected_files[i];
        int same = exists && p->exists && sb.st_dev == p->dev && sb.st_ino == p->ino;
        if (!same && p->where) {
            int oom = 0;
            if (!where) where = resolved(path, &oom);
            if (oom) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory checking %s", path);
            same = where && strcmp(where, p->where) == 0;
        }
        if (same) {
            xf_free(where);
            return XF_FAIL(err, XF_ERR_INVALID,
                           "%s is %s of this run: writing it would destroy it; name another file",
                           path, p->what);
        }
    }
    xf_free(where);
    return XF_OK;
}

/* --------------------------------------------- temporary files and signals */

#define MAX_LIVE_TEMPS 16

static char *volatile live_temps[MAX_LIVE_TEMPS];
static volatile sig_atomic_t handlers_set;

/* SIGINT, SIGTERM, SIGHUP: the temporary files being written are removed,
 * then the signal does what it would have done. */
static void on_stop(int sig)
{
    for (int i = 0; i < MAX_LIVE_TEMPS; i++) {
        char *t = live_temps[i];
        if (t) unlink(t);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* Installs on_stop for the signals whose disposition is still the default
 * (a tool with its own handler stops gracefully and aborts its files). */
static void set_handlers(void)
{
    if (handlers_set) return;
    handlers_set = 1;
    static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction old, sa;
        if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL) continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_stop;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

static void temp_live(char *tmp)
{
    set_handlers();
    for (int i = 0; i < MAX_LIVE_TEMPS; i++)
        if (!live_temps[i]) {
            live_temps[i] = tmp;
            return;
        }
}

static void temp_gone(const char *tmp)
{
    for (int i = 0; tmp && i < MAX_LIVE_TEMPS; i++)
        if (live_temps[i] == tmp) live_temps[i] = NULL;
}

static void outfile_free(xf_outfile *o)
{
    temp_gone(o->tmp);
    xf_free(o->path);
    xf_free(o->dest);
    xf_free(o->tmp);
    memset(o, 0, sizeof *o);
}

/* The target of the link at `link`, resolved against the link's directory
 * when relative; NULL with errno set on failure. */
static char *link_target(const char *link, size_t size_hint)
{
    size_t cap = size_hint + 2 > 64 ? size_hint + 2 : 64;
    for (;;) {
        char *t = xf_malloc(cap);
        if (!t) {
            errno = ENOMEM;
            return NULL;
        }
        ssize_t n = readlink(link, t, cap);
        if (n < 0) {
            int e = errno;
            xf_free(t);
            errno = e;
            return NULL;
        }
        if ((size_t)n < cap) {
            t[n] = '\0';
            const char *slash = strrchr(link, '/');
            if (t[0] == '/' || !slash) return t;
            size_t dir = (size_t)(slash - link) + 1, len = dir + (size_t)n + 1;
            char *joined = xf_malloc(len);
            if (joined) {
                memcpy(joined, link, dir);
                memcpy(joined + dir, t, (size_t)n + 1);
            } else {
                errno = ENOMEM;
            }
            xf_free(t);
            return joined;
        }
        xf_free(t); /* the link grew between lstat and readlink: retry larger */
        cap *= 2;
    }
}

/* Follows symbolic links from o->path into o->dest; *exists and *st say
 * what is there (nothing, or lstat of the final file). */
static xf_status resolve(xf_outfile *o, int *exists, struct stat *st, xf_error *err)
{
    o->dest = xf_strdup(o->path);
    if (!o->dest) return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", o->path);
    for (int hops = 0;; hops++) {
        if (lstat(o->dest, st) != 0) {
            if (errno != ENOENT)
                return XF_FAIL(err, XF_ERR_IO, "%s: cannot write: %s", o->path, strerror(errno));
            *exists = 0;
            return XF_OK;
        }
        if (!S_ISLNK(st->st_mode)) {
            *exists = 1;
            return XF_OK;
        }
        if (hops == MAX_LINKS)
            return XF_FAIL(err, XF_ERR_IO, "%s: cannot write: %s", o->path, strerror(ELOOP));
        char *next = link_target(o->dest, (size_t)st->st_size);
        if (!next)
            return XF_FAIL(err, errno == ENOMEM ? XF_ERR_NOMEM : XF_ERR_IO,
                           "%s: cannot follow the link: %s", o->path, strerror(errno));
        xf_free(o->dest);
        o->dest = next;
    }
}

/* Creates the temporary file next to o->dest into *fd, with the mode of
 * the file it replaces (a new file: 0666 less the umask, as fopen). */
static xf_status open_temp(xf_outfile *o, const struct stat *old, int *fd, xf_error *err)
{
    size_t n = strlen(o->dest) + 48;
    o->tmp = xf_malloc(n);
    if (!o->tmp) return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", o->path);
    *fd = -1;
    for (int k = 0; k < MAX_TEMP_TRIES && *fd < 0; k++) {
        snprintf(o->tmp, n, "%s.tmp.%ld.%d", o->dest, (long)getpid(), k);
        *fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (*fd < 0 && errno != EEXIST)
            return XF_FAIL(err, XF_ERR_IO, "%s: cannot write: %s", o->path, strerror(errno));
    }
    if (*fd < 0)
        return XF_FAIL(err, XF_ERR_IO, "%s: cannot write: no free temporary name next to it",
                         o->path);
    temp_live(o->tmp);
    if (old && fchmod(*fd, old->st_mode & 07777) != 0) {
        xf_status s = XF_FAIL(err, XF_ERR_IO, "%s: cannot set the mode of '%s': %s", o->path,
                              o->tmp, strerror(errno));
        close(*fd);
        unlink(o->tmp);
        *fd = -1;
        return s;
    }
    return XF_OK;
}

xf_status xf_outfile_open(xf_outfile *o, const char *path, xf_error *err)
{
    memset(o, 0, sizeof *o);
    if (!path || !*path) return XF_FAIL(err, XF_ERR_INVALID, "output file: empty path");
    xf_status guard = xf_outfile_check(path, err);
    if (guard != XF_OK) return guard;
    o->path = xf_strdup(path);
    if (!o->path) return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory", path);
    int exists = 0, fd = -1;
    struct stat st;
    xf_status s = resolve(o, &exists, &st, err);
    if (s == XF_OK && exists && S_ISDIR(st.st_mode))
        s = XF_FAIL(err, XF_ERR_IO, "%s: cannot write: %s", path, strerror(EISDIR));
    if (s == XF_OK && (!exists || S_ISREG(st.st_mode))) {
        s = open_temp(o, exists ? &st : NULL, &fd, err);
    } else if (s == XF_OK) { /* a device, FIFO or socket: write through */
        fd = open(o->dest, O_WRONLY | O_NOCTTY | O_CLOEXEC);
        if (fd < 0) s = XF_FAIL(err, XF_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    }
    if (s == XF_OK) {
        o->f = fdopen(fd, "wb");
        if (!o->f) {
            s = XF_FAIL(err, XF_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
            close(fd);
            if (o->tmp) unlink(o->tmp);
        }
    }
    if (s != XF_OK) outfile_free(o);
    return s;
}

/* Flushes, fsyncs and closes o->f; on failure the temporary file is
 * removed and *o released. */
static xf_status finish(xf_outfile *o, xf_error *err)
{
    if (!o->f) return XF_FAIL(err, XF_ERR_INVALID, "output file: not open");
    int bad = ferror(o->f);
    xf_status s = XF_OK;
    errno = 0;
    /* fflush retries what a failed write left in the buffer, so errno
     * names the cause (ENOSPC for a full disk or /dev/full) */
    if (fflush(o->f) != 0 || bad)
        s = XF_FAIL(err, XF_ERR_IO, "%s: cannot write: %s", o->path,
                    bad && errno == 0 ? "an earlier write failed" : strerror(errno));
    if (s == XF_OK && o->tmp && fsync(fileno(o->f)) != 0)
        s = XF_FAIL(err, XF_ERR_IO, "%s: cannot write: %s", o->path, strerror(errno));
    if (fclose(o->f) != 0 && s == XF_OK)
        s = XF_FAIL(err, XF_ERR_IO, "%s: cannot write: %s", o->path, strerror(errno));
    o->f = NULL;
    if (s != XF_OK) {
        if (o->tmp) unlink(o->tmp);
        outfile_free(o);
    }
    return s;
}

/* Renames a finished temporary file into place; *o is released. */
static xf_status place(xf_outfile *o, xf_error *err)
{
    xf_status s = XF_OK;
    if (o->tmp && rename(o->tmp, o->dest) != 0) {
        s = XF_FAIL(err, XF_ERR_IO, "%s: cannot write: renaming '%s' into place: %s", o->path,
                    o->tmp, strerror(errno));
        unlink(o->tmp);
    }
    outfile_free(o);
    return s;
}

xf_status xf_outfile_commit(xf_outfile *o, xf_error *err)
{
    xf_status s = finish(o, err);
    return s == XF_OK ? place(o, err) : s;
}

xf_status xf_outfile_commit_all(xf_outfile *o, int n, xf_error *err)
{
    xf_status s = XF_OK;
    int k = 0;
    for (; k < n && s == XF_OK; k++) s = finish(&o[k], err);
    if (s != XF_OK) {
        for (int i = 0; i < k - 1; i++) { /* finished ones: drop their temporary files */
            if (o[i].tmp) unlink(o[i].tmp);
            outfile_free(&o[i]);
        }
        for (int i = k; i < n; i++) xf_outfile_abort(&o[i]);
        return s;
    }
    for (int i = 0; i < n; i++) {
        xf_status r = place(&o[i], err);
        if (s == XF_OK) s = r;
    }
    return s;
}

void xf_outfile_abort(xf_outfile *o)
{
    if (o->f) fclose(o->f);
    if (o->tmp) unlink(o->tmp);
    outfile_free(o);
}

xf_status xf_outfile_probe(const char *path, xf_error *err)
{
    struct stat st;
    if (path && stat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return xf_outfile_check(path, err); /* written through: opening a FIFO would wait */
    xf_outfile o;
    xf_status s = xf_outfile_open(&o, path, err);
    if (s == XF_OK) xf_outfile_abort(&o);
    return s;
}

xf_status xf_outfile_write_all(const char *path, const void *data, size_t len, xf_error *err)
{
    xf_outfile o;
    xf_status s = xf_outfile_open(&o, path, err);
    if (s != XF_OK) return s;
    if (len && fwrite(data, 1, len, o.f) != len) {
        s = XF_FAIL(err, XF_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
        xf_outfile_abort(&o);
        return s;
    }
    return xf_outfile_commit(&o, err);
}

int xf_fd_write_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        c += w, n -= (size_t)w;
    }
    return 0;
}
