/*
 * bench/onnx_io — import and export speed and peak memory of the ONNX layer.
 *
 *   bench_onnx_io [MODEL.onnx ...]    (default: every ../shared/models/<name>/model.onnx)
 *
 * Each model is measured in a child process, so the peak resident set size
 * reported (from wait4's rusage) belongs to that model alone: import
 * (median of 5), export to memory (median of 5), file size, node count.
 */
#define _DEFAULT_SOURCE /* wait4 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ir/ir.h"
#include "onnx/onnx.h"

#define REPS 5

typedef struct result {
    int ok;
    int nodes;
    double import_ms, export_ms;
    size_t out_bytes;
    char msg[256];
} result;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void measure(const char *path, result *r)
{
    double ti[REPS], te[REPS];
    xf_error err;
    memset(r, 0, sizeof *r);
    for (int k = 0; k < REPS; k++) {
        xf_graph g;
        double t0 = xf_clock_now_ms();
        if (xf_onnx_load(path, NULL, &g, &err) != XF_OK) {
            snprintf(r->msg, sizeof r->msg, "%.255s", err.msg);
            return;
        }
        ti[k] = xf_clock_now_ms() - t0;
        uint8_t *buf = NULL;
        size_t len = 0;
        t0 = xf_clock_now_ms();
        xf_status st = xf_onnx_save_buffer(&g, &buf, &len, &err);
        te[k] = xf_clock_now_ms() - t0;
        r->nodes = g.n_nodes;
        xf_graph_free(&g);
        xf_free(buf);
        if (st != XF_OK) {
            snprintf(r->msg, sizeof r->msg, "%.255s", err.msg);
            return;
        }
        r->out_bytes = len;
    }
    qsort(ti, REPS, sizeof ti[0], cmp_double);
    qsort(te, REPS, sizeof te[0], cmp_double);
    r->import_ms = ti[REPS / 2];
    r->export_ms = te[REPS / 2];
    r->ok = 1;
}

static void bench_one(const char *path, const char *label)
{
    int fd[2];
    if (pipe(fd) != 0) return;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        result r;
        measure(path, &r);
        ssize_t w = write(fd[1], &r, sizeof r);
        _exit(w == (ssize_t)sizeof r ? 0 : 1);
    }
    close(fd[1]);
    result r;
    memset(&r, 0, sizeof r);
    ssize_t got = read(fd[0], &r, sizeof r);
    close(fd[0]);
    int status;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    wait4(pid, &status, 0, &ru);
    struct stat st;
    long long in_bytes = stat(path, &st) == 0 ? (long long)st.st_size : -1;
    if (got != (ssize_t)sizeof r || !r.ok) {
        printf("%-16s FAILED: %s\n", label, got == (ssize_t)sizeof r ? r.msg : "child crashed");
        return;
    }
    printf("%-16s %6d %10.2f %10.1f %10.1f %10.2f %12.1f\n", label, r.nodes,
           (double)in_bytes / 1e6, r.import_ms, r.export_ms, (double)r.out_bytes / 1e6,
           (double)ru.ru_maxrss / 1024.0);
}

int main(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: bench_onnx_io [MODEL.onnx ...]\n"
               "Import/export time (median of %d) and peak RSS per model; without arguments,\n"
               "every model under $XF_SHARED_DIR/models (default ../shared/models).\n",
               REPS);
        return 0;
    }
    printf("%-16s %6s %10s %10s %10s %10s %12s\n", "model", "nodes", "file MB", "import ms",
           "export ms", "out MB", "peak RSS MB");
    if (argc > 1) {
        for (int i = 1; i < argc; i++) {
            const char *slash = strrchr(argv[i], '/');
            bench_one(argv[i], slash ? slash + 1 : argv[i]); /* file name keeps columns aligned */
        }
        return 0;
    }
    const char *shared = getenv("XF_SHARED_DIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/models", shared ? shared : "../shared");
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "bench_onnx_io: cannot open %s (set XF_SHARED_DIR)\n", dir);
        return 2;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[4600];
        snprintf(path, sizeof path, "%s/%s/model.onnx", dir, e->d_name);
        if (access(path, R_OK) == 0) bench_one(path, e->d_name);
    }
    closedir(d);
    return 0;
}
