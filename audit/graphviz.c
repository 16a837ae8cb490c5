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

#include "audit_impl.h"

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

void audit_no_dot(void)
{
    fprintf(stderr, "xferdb: graphviz's 'dot' program is not on PATH: install Debian's graphviz "
                    "package (apt-get install graphviz), or export --format dot and render it "
                    "elsewhere\n");
}

int audit_run_dot(const char *fmt, FILE *in, FILE *out)
{
    char tflag[32];
    snprintf(tflag, sizeof tflag, "-T%s", fmt);
    char *argv[] = {"dot", tflag, NULL};
    if (fflush(out) != 0) {
        fprintf(stderr, "xferdb: cannot write the picture: %s\n", strerror(errno));
        return 1;
    }
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc == 0) {
        rc = posix_spawn_file_actions_adddup2(&fa, fileno(in), 0);
        if (rc == 0) rc = posix_spawn_file_actions_adddup2(&fa, fileno(out), 1);
        if (rc == 0) rc = posix_spawnp(&pid, "dot", &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
    }
    if (rc != 0) {
        audit_no_dot();
        return 1;
    }
    int status = 0;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "xferdb: 'dot %s' failed\n", tflag);
        return 1;
    }
    return 0;
}

/* Waits for one child; 1 when it failed. */
static int reap(void)
{
    int status = 0;
    if (wait(&status) < 0) return 1;
    return !WIFEXITED(status) || WEXITSTATUS(status) != 0;
}

int audit_render_svgs(char **files, int n, int jobs)
{
    int running = 0, failed = 0;
    for (int i = 0; i < n; i++) {
        char *argv[] = {"dot", "-Tsvg", "-O", files[i], NULL};
        if (running == jobs) {
            failed |= reap();
            running--;
        }
        pid_t pid;
        if (posix_spawnp(&pid, "dot", NULL, NULL, argv, environ) != 0) {
            audit_no_dot();
            failed = 1;
            break;
        }
        running++;
    }
    while (running-- > 0) failed |= reap();
    if (failed) fprintf(stderr, "xferdb: 'dot -Tsvg' failed on some of the report's pictures\n");
    return failed;
}
