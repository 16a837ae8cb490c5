/*
 * bench/onnx_io — import and export speed and peak memory of the ONNX layer.
 *
 *   bench_onnx_io [MODEL.onnx ...]    (default: every ../shared/models/<name>/model.onnx
 *                                      and ../shared/models/real/<name>/model.onnx)
 *
 * Each model is measured in a child process, so the peak resident set size
 * reported (from wait4's rusage) belongs to that model alone: import
 * (median of 5), export (median of 5: to memory, or for a model over 2 GiB
 * to a scratch file with its external data, written and removed), file size
 * (with external data), node count, weight bytes, and the peak RSS over the
 * weight bytes: near 1 when import and export hold one copy of the weights.
 * Models of more than 256 MB of weights are imported and exported once.
 *
 *   bench_onnx_io --ort [MODEL.onnx ...]
 *
 * checks files in ONNX Runtime instead: each model is imported, written to
 * a scratch file (external data for a model over 2 GiB) and run in the
 * reference interpreter; the model file as given and the one written are
 * run in ONNX Runtime (RLFLOW_ORT_LIB; it reads external data itself) on
 * the same random inputs, one session at a time; printed: the largest
 * |difference| over the largest |output| of each, the written file's
 * session creation time, and the peak RSS of that child (interpreter graph
 * plus one ONNX Runtime session).
 */
#define _DEFAULT_SOURCE /* wait4 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ir/ir.h"
#include "onnx/onnx.h"
#include "target/target.h"

#define REPS 5

static int ort_mode; /* --ort: check the written files in ONNX Runtime */
/* Weights above which a model is measured once (a >2 GB model's import and
 * export take seconds each, and the figures are dominated by I/O). */
#define BIG_WEIGHTS ((size_t)256 << 20)

typedef struct result {
    int ok;
    int nodes, reps;
    double import_ms, export_ms; /* --ort: session ms and difference of the file rlflow writes */
    double input_diff;           /* --ort: difference of the input file */
    size_t out_bytes, weight_bytes;
    char msg[256];
} result;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Writes g to a scratch file next to `path` (external data when over
 * 2 GiB) named into tmp[n]; the data file is tmp + ".data". */
static xf_status write_scratch(const xf_graph *g, const char *path, char *tmp, size_t n,
                               xf_error *err)
{
    snprintf(tmp, n, "%s.bench_onnx_io.%ld.onnx", path, (long)getpid());
    return xf_onnx_save(g, tmp, err);
}

static void remove_scratch(const char *tmp)
{
    char data[4300];
    snprintf(data, sizeof data, "%s.data", tmp);
    unlink(tmp);
    unlink(data);
}

/* Largest |b - a| over the largest |a| of the float outputs; INFINITY for a
 * shape, dtype or integer value that differs. */
static double max_rel_diff(const xf_tensor *a, const xf_tensor *b, int n)
{
    double worst = 0;
    for (int i = 0; i < n; i++) {
        double ma, mr;
        xf_error err;
        if (xf_tensor_compare(&a[i], &b[i], &ma, &mr, &err) != XF_OK) return 1.0 / 0.0;
        if (a[i].dtype != XF_F32) {
            if (ma != 0) return 1.0 / 0.0;
            continue;
        }
        double top = 0;
        const float *f = a[i].data;
        for (int64_t k = 0; k < xf_shape_numel(&a[i].shape); k++)
            if (fabs(f[k]) > top) top = fabs(f[k]);
        double rel = top > 0 ? ma / top : ma;
        if (rel > worst) worst = rel;
    }
    return worst;
}

/* ONNX Runtime on the file at `file` (g imported from it or equal to it:
 * same inputs) against the interpreter's outputs ref: *diff, and the
 * session's creation time in *ms. One session at a time, freed here. */
static xf_status ort_diff(xf_target *t, const char *file, const xf_graph *g, const xf_tensor *ref,
                          double *diff, double *ms, xf_error *err)
{
    xf_target_model *m = NULL;
    xf_tensor *got = xf_tensor_array_alloc(g->n_outputs);
    if (!got) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
    double t0 = xf_clock_now_ms();
    xf_status st = xf_target_model_load_file(t, file, g, 1, &m, err);
    *ms = xf_clock_now_ms() - t0;
    if (st == XF_OK) st = xf_target_model_run(m, err);
    if (st == XF_OK) st = xf_target_model_outputs(m, got, err);
    if (st == XF_OK) *diff = max_rel_diff(ref, got, g->n_outputs);
    xf_target_model_free(m);
    xf_tensor_array_free(got, st == XF_OK ? g->n_outputs : 0);
    return st;
}

/* The model file as given and as rlflow writes it again, in ONNX Runtime,
 * against the interpreter on the imported graph. */
static void ort_check(const char *path, result *r)
{
    memset(r, 0, sizeof *r);
    xf_error err;
    xf_graph g;
    if (xf_onnx_load(path, NULL, &g, &err) != XF_OK) {
        snprintf(r->msg, sizeof r->msg, "%.255s", err.msg);
        return;
    }
    r->nodes = g.n_nodes;
    r->weight_bytes = xf_graph_param_bytes(&g);
    char tmp[4200] = "";
    xf_tensor *in = xf_tensor_array_alloc(g.n_inputs), *ref = xf_tensor_array_alloc(g.n_outputs);
    xf_target *t = NULL;
    xf_status st = in && ref ? XF_OK : XF_FAIL(&err, XF_ERR_NOMEM, "out of memory");
    if (st == XF_OK) st = write_scratch(&g, path, tmp, sizeof tmp, &err);
    if (st == XF_OK) st = xf_graph_random_inputs(&g, 1, in, &err);
    if (st == XF_OK) st = xf_interp_run(&g, in, g.n_inputs, ref, &err);
    if (st == XF_OK) st = xf_target_open(NULL, &t, &err);
    double ms;
    if (st == XF_OK) st = ort_diff(t, path, &g, ref, &r->input_diff, &ms, &err);
    if (st == XF_OK) st = ort_diff(t, tmp, &g, ref, &r->export_ms, &r->import_ms, &err);
    if (st == XF_OK) r->ok = 1;
    else snprintf(r->msg, sizeof r->msg, "%.255s", err.msg);
    if (tmp[0]) remove_scratch(tmp);
    xf_target_close(t);
    xf_tensor_array_free(in, g.n_inputs);
    xf_tensor_array_free(ref, g.n_outputs);
    xf_graph_free(&g);
}

/* Exports g: to memory when it fits one protobuf, else to a scratch file
 * next to the model with its external data (removed afterwards); the bytes
 * written in *out_bytes. */
static xf_status export_once(const xf_graph *g, const char *path, size_t *out_bytes,
                             xf_error *err)
{
    uint8_t *buf = NULL;
    size_t len = 0;
    if (xf_graph_param_bytes(g) < ((size_t)2 << 30) - ((size_t)64 << 20)) {
        xf_status st = xf_onnx_save_buffer(g, &buf, &len, err);
        xf_free(buf);
        *out_bytes = len;
        return st;
    }
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.bench_onnx_io.%ld.onnx", path, (long)getpid());
    xf_onnx_writer *w;
    xf_status st = xf_onnx_writer_open(g, tmp, NULL, &w, err);
    if (st != XF_OK) return st;
    size_t model_bytes;
    uint64_t data_bytes;
    xf_onnx_writer_sizes(w, &model_bytes, &data_bytes, NULL);
    st = xf_onnx_writer_commit(w, err);
    xf_onnx_writer_free(w);
    remove_scratch(tmp);
    *out_bytes = model_bytes + (size_t)data_bytes;
    return st;
}

static void measure(const char *path, result *r)
{
    double ti[REPS], te[REPS];
    xf_error err;
    memset(r, 0, sizeof *r);
    r->reps = REPS;
    for (int k = 0; k < r->reps; k++) {
        xf_graph g;
        double t0 = xf_clock_now_ms();
        if (xf_onnx_load(path, NULL, &g, &err) != XF_OK) {
            snprintf(r->msg, sizeof r->msg, "%.255s", err.msg);
            return;
        }
        ti[k] = xf_clock_now_ms() - t0;
        r->weight_bytes = xf_graph_param_bytes(&g);
        if (r->weight_bytes > BIG_WEIGHTS) r->reps = 1;
        t0 = xf_clock_now_ms();
        xf_status st = export_once(&g, path, &r->out_bytes, &err);
        te[k] = xf_clock_now_ms() - t0;
        r->nodes = g.n_nodes;
        xf_graph_free(&g);
        if (st != XF_OK) {
            snprintf(r->msg, sizeof r->msg, "%.255s", err.msg);
            return;
        }
    }
    qsort(ti, (size_t)r->reps, sizeof ti[0], cmp_double);
    qsort(te, (size_t)r->reps, sizeof te[0], cmp_double);
    r->import_ms = ti[r->reps / 2];
    r->export_ms = te[r->reps / 2];
    r->ok = 1;
}

/* Bytes of the model file plus those of "<model>.data" next to it (the
 * external data file rlflow writes): the input size. */
static long long input_bytes(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    long long n = (long long)st.st_size;
    char data[4200];
    snprintf(data, sizeof data, "%s.data", path);
    if (stat(data, &st) == 0) n += (long long)st.st_size;
    return n;
}

static void bench_one(const char *path, const char *label)
{
    int fd[2];
    if (pipe(fd) != 0) return;
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        result r;
        if (ort_mode) ort_check(path, &r);
        else measure(path, &r);
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
    long long in_bytes = input_bytes(path);
    if (got != (ssize_t)sizeof r || !r.ok) {
        printf("%-20s FAILED: %s\n", label, got == (ssize_t)sizeof r ? r.msg : "child crashed");
        return;
    }
    double rss = (double)ru.ru_maxrss * 1024.0;
    if (ort_mode) {
        printf("%-20s %6d %10.2f %12.1f %12.2e %12.2e %9.1f\n", label, r.nodes,
               (double)r.weight_bytes / 1e6, r.import_ms, r.input_diff, r.export_ms, rss / 1e6);
        fflush(stdout);
        return;
    }
    char ratio[16] = "-"; /* below 1 MB of weights the process's own size dominates */
    if (r.weight_bytes >= 1000000) snprintf(ratio, sizeof ratio, "%.2f", rss / (double)r.weight_bytes);
    printf("%-20s %6d %10.2f %10.2f %10.1f %10.1f %10.2f %9.1f %6s %4d\n", label, r.nodes,
           (double)in_bytes / 1e6, (double)r.weight_bytes / 1e6, r.import_ms, r.export_ms,
           (double)r.out_bytes / 1e6, rss / 1e6, ratio, r.reps);
    fflush(stdout);
}

/* Every DIR/<name>/model.onnx, labelled with <prefix><name>. */
static void bench_dir(const char *dir, const char *prefix)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        char path[4600], label[300];
        snprintf(path, sizeof path, "%s/%s/model.onnx", dir, e->d_name);
        snprintf(label, sizeof label, "%s%s", prefix, e->d_name);
        if (access(path, R_OK) == 0) bench_one(path, label);
    }
    closedir(d);
}

int main(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: bench_onnx_io [--ort] [MODEL.onnx ...]\n"
               "Import/export time (median of %d; once above 256 MB of weights), peak RSS\n"
               "and peak RSS / weight bytes per model; without arguments, every model under\n"
               "$XF_SHARED_DIR/models and its real/ (default ../shared/models).\n"
               "--ort: each model as given and written again to a scratch file (external data\n"
               "over 2 GiB) run in ONNX Runtime against the interpreter: max |diff| / max |output|.\n",
               REPS);
        return 0;
    }
    int first = 1;
    if (argc > 1 && !strcmp(argv[1], "--ort")) {
        ort_mode = 1;
        first = 2;
    }
    xf_log_set_level(XF_LOG_ERROR); /* no symbolic-dimension warnings between the rows */
    if (ort_mode)
        printf("%-20s %6s %10s %12s %12s %12s %9s\n", "model", "nodes", "weights MB",
               "session ms", "diff input", "diff written", "peak RSS");
    else
        printf("%-20s %6s %10s %10s %10s %10s %10s %9s %6s %4s\n", "model", "nodes", "file MB",
               "weights MB", "import ms", "export ms", "out MB", "peak RSS", "/wts", "reps");
    if (argc > first) {
        for (int i = first; i < argc; i++) {
            const char *slash = strrchr(argv[i], '/');
            bench_one(argv[i], slash ? slash + 1 : argv[i]); /* file name keeps columns aligned */
        }
        return 0;
    }
    const char *shared = getenv("XF_SHARED_DIR");
    char dir[4096], real[4200];
    snprintf(dir, sizeof dir, "%s/models", shared ? shared : "../shared");
    snprintf(real, sizeof real, "%s/real", dir);
    if (access(dir, R_OK) != 0) {
        fprintf(stderr, "bench_onnx_io: cannot open %s (set XF_SHARED_DIR)\n", dir);
        return 2;
    }
    bench_dir(dir, "");
    bench_dir(real, "real/");
    return 0;
}
