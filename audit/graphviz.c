/*
 * graphviz.c — running graphviz's `dot` for pictures (export --format png,
 * the report's SVGs). `dot` is found on PATH; when it is missing the message
 * names the Debian package that provides it. The report renders many small
 * graphs: a few `dot -Tsvg -O FILE` processes run side by side. Each draws
 * one file: graphviz 2.43 (Debian 12) corrupts its heap on some sequences
 * of several graphs in one run.
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "audit_internal.h"

extern char **environ;

int audit_have_dot(void)
{
    const char *path = getenv("PATH");
    if (!path) return 0;
    char dir[4096];
    while (*path) {
        size_t n = strcspn(path, ":");
        if (n > 0 && n < sizeof dir - 5) {
            snprintf(dir, sizeof dir, "%.*s/dot", (int)n, path);
            if (access(dir, X_OK) == 0) return 1;
        }
        path += n;
        if (*path == ':') path++;
    }
    return 0;
}

xf_status audit_no_dot(xf_error *err)
{
    return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                   "graphviz's 'dot' program is not on PATH: install Debian's graphviz "
                   "package (apt-get install graphviz), or export --format dot and render it "
                   "elsewhere");
}

xf_status audit_run_dot(const char *fmt, FILE *in, FILE *out, xf_error *err)
{
    char tflag[32];
    snprintf(tflag, sizeof tflag, "-T%s", fmt);
    char *argv[] = {"dot", tflag, NULL};
    if (fflush(out) != 0)
        return XF_FAIL(err, XF_ERR_IO, "cannot write the picture: %s", strerror(errno));
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc == 0) {
        rc = posix_spawn_file_actions_adddup2(&fa, fileno(in), 0);
        if (rc == 0) rc = posix_spawn_file_actions_adddup2(&fa, fileno(out), 1);
        if (rc == 0) rc = posix_spawnp(&pid, "dot", &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
    }
    if (rc != 0) return audit_no_dot(err);
    int status = 0;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return XF_FAIL(err, XF_ERR_IO, "'dot %s' failed", tflag);
    return XF_OK;
}

/* Waits for one child; 1 when it failed. */
static int reap(void)
{
    int status = 0;
    if (wait(&status) < 0) return 1;
    return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

xf_status audit_render_svgs(char **files, int n, int jobs, xf_error *err)
{
    int running = 0, failed = 0, no_dot = 0;
    for (int i = 0; i < n; i++) {
        char *argv[] = {"dot", "-Tsvg", "-O", files[i], NULL};
        if (running == jobs) {
            failed |= reap();
            running--;
        }
        pid_t pid;
        if (posix_spawnp(&pid, "dot", NULL, NULL, argv, environ) != 0) {
            no_dot = 1;
            break;
        }
        running++;
    }
    while (running-- > 0) failed |= reap();
    if (no_dot) return audit_no_dot(err);
    if (failed)
        return XF_FAIL(err, XF_ERR_IO, "'dot -Tsvg' failed on some of the report's pictures");
    return XF_OK;
}
