/*
 * scratch.c — the target's scratch directory: made, marked with its owner,
 * and swept when its owner died without removing it.
 *
 * The target writes the weights it shares with its sessions into a scratch
 * directory under $TMPDIR (share.c): as large as the model's weights (440 MB
 * for a BERT-base, gigabytes for the models over 2 GiB). The process removes
 * it when the target closes, but a process stopped by SIGKILL (the OOM
 * killer, a job scheduler's time limit) or by a signal the tool does not
 * handle cannot, and every such run left its weights in /tmp.
 *
 * So each directory holds an owner file naming the host and the process
 * that made it, and making a new one first sweeps the directories of this
 * user whose owner, on this host, is no longer running: their regular files
 * are removed, then the directory. A directory without an owner file (an
 * older rlflow, or one being made this instant), of another user, or of
 * another host sharing $TMPDIR is left alone; so is one whose process id
 * was reused by a live process (kept, never wrongly removed).
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "target/model_internal.h"

#define SCRATCH_PREFIX "rlflow-target-"
#define OWNER_FILE "owner"
#define HOST_MAX 256

static void this_host(char *host, size_t n)
{
    if (gethostname(host, n) != 0) host[0] = '\0';
    host[n - 1] = '\0';
    if (!host[0] || strpbrk(host, " \t\n")) snprintf(host, n, "-");
}

/* Whether dir's owner file names a process of this host that has ended. */
static int owner_gone(const char *dir, const char *host)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, OWNER_FILE);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    long pid = 0;
    char owner_host[HOST_MAX] = "";
    int got = fscanf(f, "%ld %255s", &pid, owner_host);
    fclose(f);
    if (got != 2 || pid <= 0 || strcmp(owner_host, host) != 0) return 0;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Removes the regular files in dir, then dir (which fails, harmlessly, if
 * anything else is left in it). */
static void remove_scratch(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char path[4400];
    struct stat st;
    while ((e = readdir(d)) != NULL) {
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode)) unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

/* Removes the scratch directories under tmp of this user whose owner
 * process, on this host, is no longer running. */
static void sweep_stale(const char *tmp)
{
    char host[HOST_MAX];
    this_host(host, sizeof host);
    DIR *d = opendir(tmp);
    if (!d) return;
    struct dirent *e;
    char dir[4200];
    struct stat st;
    uid_t me = getuid();
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, SCRATCH_PREFIX, strlen(SCRATCH_PREFIX)) != 0) continue;
        int n = snprintf(dir, sizeof dir, "%s/%s", tmp, e->d_name);
        if (n < 0 || (size_t)n >= sizeof dir) continue;
        if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != me) continue;
        if (owner_gone(dir, host)) remove_scratch(dir);
    }
    closedir(d);
}

xf_status target_scratch_make(char *dir, size_t n, xf_error *err)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp) tmp = "/tmp";
    sweep_stale(tmp);
    int len = snprintf(dir, n, "%s/" SCRATCH_PREFIX "XXXXXX", tmp);
    if (len < 0 || (size_t)len >= n || !mkdtemp(dir)) {
        int e = len < 0 || (size_t)len >= n ? ENAMETOOLONG : errno;
        dir[0] = '\0';
        return XF_FAIL(err, XF_ERR_IO,
                       "target: cannot make a scratch directory under %s for the models it "
                       "hands to onnxruntime: %s; set TMPDIR to a writable directory",
                       tmp, strerror(e));
    }
    char host[HOST_MAX], path[4200];
    this_host(host, sizeof host);
    snprintf(path, sizeof path, "%s/%s", dir, OWNER_FILE);
    FILE *f = fopen(path, "w");
    int ok = f && fprintf(f, "%ld %s\n", (long)getpid(), host) > 0;
    if (f && fclose(f) != 0) ok = 0;
    if (!ok) {
        int e = errno;
        remove(path);
        rmdir(dir);
        dir[0] = '\0';
        return XF_FAIL(err, XF_ERR_IO, "target: cannot write %s: %s; set TMPDIR to a writable "
                       "directory", path, strerror(e));
    }
    return XF_OK;
}

void target_scratch_remove(const char *dir)
{
    if (dir[0]) remove_scratch(dir);
}
