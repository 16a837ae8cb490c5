/*
 * bench/scale — rlflow-agent --target ort on models of the sizes people run:
 * peak memory and wall time beside the weights (issue 29).
 *
 *   bench_scale [--rules DB] [--models bert,gpt,vit,big] [--threads 1,2]
 *               [--search-budget N] [--target-budget S] [--racing N] [--keep]
 *
 * Models, built once with modelzoo into $TMPDIR/bench_scale (never in the
 * source tree):
 *   bert  BERT-base: 12 layers, hidden 768, 12 heads, sequence 128, vocabulary 30522
 *   gpt   GPT-2-small: 12 layers, hidden 768, 12 heads, sequence 128, vocabulary
 *         50257, LM head tied to the token embedding (one copy of it)
 *   vit   ViT-B/16: 12 layers, hidden 768, 12 heads, 224x224 images, 16x16 patches
 *   big   the 2.7 GB BERT (hidden 2048, 12 layers, 16 heads, vocabulary 30000,
 *         weights in external data): not in the default list
 * For each model and thread count: rlflow-agent --search taso --target ort
 * with everything else at its default, run as a child process whose peak
 * resident memory the kernel reports (wait4's ru_maxrss) and whose wall time
 * is taken here; the table prints them beside the model's weight bytes,
 * with the arbiter's time against its budget, how many models it weighed,
 * and what was written; below each row the child's CPU time (what a loaded
 * machine stretches least) and each search's graphs and seconds. Without ONNX Runtime rlflow-agent says so and the
 * cost model decides (the row says "no target"). The figures of a shared
 * machine are disturbed by its load: the bench prints the load average.
 */
#define _DEFAULT_SOURCE /* wait4 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_runner.h"
#include "ir/ir.h"

typedef struct zoo_model {
    const char *name, *zoo, *args, *what;
} zoo_model;

static const zoo_model zoo[] = {
    {"bert", "bert", "--layers 12 --hidden 768 --heads 12 --seq 128 --vocab 30522",
     "BERT-base (hidden 768, 12 layers, seq 128, vocab 30522)"},
    {"gpt", "gpt-tied", "--layers 12 --hidden 768 --heads 12 --seq 128 --vocab 50257",
     "GPT-2-small (hidden 768, 12 layers, seq 128, vocab 50257, tied head)"},
    {"vit", "vit", "--layers 12 --hidden 768 --heads 12 --image 224 --patch 16",
     "ViT-B/16 (hidden 768, 12 layers, 224x224, patch 16)"},
    {"big", "bert", "--hidden 2048 --layers 12 --heads 16 --vocab 30000",
     "BERT of 2.7 GB (hidden 2048, 12 layers, vocab 30000, external data)"},
};

/* What one run of rlflow-agent gave. */
typedef struct run {
    int ok;
    double wall_s, cpu_s, peak_bytes;
    char arbiter[256], target[256], result[256], memory[256], refused[256], weights[64];
    char search[2][256]; /* the report's search lines: graphs expanded and seconds */
} run;

/* Runs argv as a child, its stdout and stderr into `log`; fills wall time,
 * the child's CPU time (user and system) and its peak resident memory. */
static int run_child(char *const *argv, const char *log, double *wall_s, double *cpu_s,
                     double *peak)
{
    fflush(stdout); /* the child must not write our buffered lines again */
    double t0 = xf_clock_now();
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        FILE *f = freopen(log, "w", stdout);
        if (!f || dup2(fileno(stdout), 2) < 0) _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    int status = 0;
    struct rusage ru;
    if (wait4(pid, &status, 0, &ru) < 0) return -1;
    *wall_s = xf_clock_now() - t0;
    *cpu_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
             (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
    *peak = (double)ru.ru_maxrss * 1024.0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static run run_agent(const char *rules, const char *model, const char *out, int threads,
                     const char *search_budget, const char *target_budget, const char *racing,
                     const char *log)
{
    run r;
    memset(&r, 0, sizeof r);
    char th[16];
    snprintf(th, sizeof th, "%d", threads);
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)XF_BENCH_AGENT;
    argv[n++] = "--rules";
    argv[n++] = (char *)rules;
    argv[n++] = "--search";
    argv[n++] = "taso";
    argv[n++] = "--target";
    argv[n++] = "ort";
    argv[n++] = "--threads";
    argv[n++] = th;
    argv[n++] = "-q";
    if (search_budget) argv[n++] = "--budget", argv[n++] = (char *)search_budget;
    if (target_budget) argv[n++] = "--target-budget", argv[n++] = (char *)target_budget;
    if (racing) argv[n++] = "--racing", argv[n++] = (char *)racing;
    argv[n++] = (char *)model;
    argv[n++] = "-o";
    argv[n++] = (char *)out;
    argv[n] = NULL;
    int rc = run_child(argv, log, &r.wall_s, &r.cpu_s, &r.peak_bytes);
    r.ok = rc == 0;
    FILE *f = fopen(log, "r");
    char line[4096];
    int searches = 0;
    while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "search:", 7) == 0 && searches < 2)
            bench_field(line, "search:", r.search[searches++], sizeof r.search[0]);
        bench_field(line, "arbiter:", r.arbiter, sizeof r.arbiter);
        bench_field(line, "target latency:", r.target, sizeof r.target);
        bench_field(line, "target memory:", r.memory, sizeof r.memory);
        bench_field(line, "target refused:", r.refused, sizeof r.refused);
        bench_field(line, "result:", r.result, sizeof r.result);
        bench_field(line, "confirmed:", r.result, sizeof r.result);
        if (strncmp(line, "target:          none", 20) == 0) snprintf(r.target, sizeof r.target, "no target");
    }
    if (f) fclose(f);
    return r;
}

/* Builds the model once; its weight bytes from modelzoo's line. */
static int build(const zoo_model *m, const char *dir, char *path, size_t n, double *weights)
{
    snprintf(path, n, "%s/%s.onnx", dir, m->name);
    char wpath[4200];
    snprintf(wpath, sizeof wpath, "%s/%s.weights", dir, m->name);
    struct stat st;
    FILE *f = fopen(wpath, "r");
    if (stat(path, &st) == 0 && f && fscanf(f, "%lf", weights) == 1) {
        fclose(f);
        return 0;
    }
    if (f) fclose(f);
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' %s %s -o '%s'", XF_BENCH_MODELZOO, m->zoo, m->args, path);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    char line[1024];
    *weights = 0;
    while (fgets(line, sizeof line, p)) {
        const char *b = strstr(line, " parameters, ");
        if (b) *weights = atof(b + 13);
    }
    if (pclose(p) != 0 || *weights <= 0) return -1;
    f = fopen(wpath, "w");
    if (f) {
        fprintf(f, "%.0f\n", *weights);
        fclose(f);
    }
    return 0;
}

static int listed(const char *list, const char *name)
{
    size_t k = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += k)
        if ((p == list || p[-1] == ',') && (p[k] == ',' || p[k] == '\0')) return 1;
    return 0;
}

int main(int argc, char **argv)
{
    const char *rules_arg = NULL, *models = "bert,gpt,vit", *threads = "1,2";
    const char *search_budget = NULL, *target_budget = NULL, *racing = NULL;
    int keep = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rules") && i + 1 < argc) rules_arg = argv[++i];
        else if (!strcmp(argv[i], "--models") && i + 1 < argc) models = argv[++i];
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = argv[++i];
        else if (!strcmp(argv[i], "--search-budget") && i + 1 < argc) search_budget = argv[++i];
        else if (!strcmp(argv[i], "--target-budget") && i + 1 < argc) target_budget = argv[++i];
        else if (!strcmp(argv[i], "--racing") && i + 1 < argc) racing = argv[++i];
        else if (!strcmp(argv[i], "--keep")) keep = 1;
        else {
            printf("usage: bench_scale [--rules DB] [--models bert,gpt,vit,big] [--threads 1,2]\n"
                   "                   [--search-budget N] [--target-budget S] [--racing N] [--keep]\n"
                   "rlflow-agent --search taso --target ort on modelzoo models of BERT-base,\n"
                   "GPT-2-small and ViT-B size (big: the 2.7 GB BERT): peak resident memory and\n"
                   "wall time beside the weight bytes, at each thread count. --keep leaves\n"
                   "the written models in $TMPDIR/bench_scale.\n");
            return strcmp(argv[i], "--help") && strcmp(argv[i], "-h") ? 2 : 0;
        }
    }
    int ths[8], n_th = bench_thread_list(threads, ths, 8);
    if (n_th == 0) {
        printf("bench_scale: --threads expects counts from 1 to 256 separated by commas, got '%s'\n",
               threads);
        return 2;
    }
    const char *scratch = bench_scratch("bench_scale");
    char rules[2048];
    if (rules_arg) snprintf(rules, sizeof rules, "%s", rules_arg);
    else bench_make_rules(scratch, XF_BENCH_XFERGEN, XF_BENCH_XFERVERIFY, rules, sizeof rules);
    printf("bench_scale: rlflow-agent --search taso --target ort, defaults otherwise%s%s%s%s\n",
           search_budget ? "; --budget " : "", search_budget ? search_budget : "",
           target_budget ? "; --target-budget " : "", target_budget ? target_budget : "");
    printf("rules: %s; load average %.2f at the start\n", rules, bench_load_average());
    printf("%-5s %-9s %3s %8s %10s %7s  %s\n", "model", "weights", "thr", "wall s", "peak RSS",
           "/weights", "arbiter; written");
    for (size_t i = 0; i < sizeof zoo / sizeof zoo[0]; i++) {
        const zoo_model *m = &zoo[i];
        if (!listed(models, m->name)) continue;
        char path[4200], out[4200], log[4200], w[32], peak[32];
        double weights = 0;
        if (build(m, scratch, path, sizeof path, &weights) != 0) {
            printf("%-5s could not be built with modelzoo (%s)\n", m->name, m->args);
            continue;
        }
        for (int k = 0; k < n_th; k++) {
            int th = ths[k];
            snprintf(out, sizeof out, "%s/%s.t%d.opt.onnx", scratch, m->name, th);
            snprintf(log, sizeof log, "%s/%s.t%d.log", scratch, m->name, th);
            run r = run_agent(rules, path, out, th, search_budget, target_budget, racing, log);
            printf("%-5s %-9s %3d %8.1f %10s %6.2fx  %s%s\n", m->name,
                   xf_bytes_str(weights, w, sizeof w), th, r.wall_s,
                   xf_bytes_str(r.peak_bytes, peak, sizeof peak), r.peak_bytes / weights,
                   r.ok ? "" : "FAILED (see ", r.ok ? r.arbiter : log);
            printf("      time: %.1f s of CPU (user and system; on a loaded machine the wall time "
                   "stretches, this far less)\n",
                   r.cpu_s);
            for (int k2 = 0; k2 < 2; k2++)
                if (r.search[k2][0]) printf("      search: %s\n", r.search[k2]);
            if (r.memory[0]) printf("      sessions: %s\n", r.memory);
            if (r.refused[0]) printf("      refused: %s\n", r.refused);
            if (r.target[0]) printf("      target: %s\n", r.target);
            if (r.result[0]) printf("      %s\n", r.result);
            fflush(stdout);
            if (!keep) {
                remove(out);
                char data[4300];
                snprintf(data, sizeof data, "%s.data", out);
                remove(data);
            }
        }
        printf("      (%s)\n", m->what);
    }
    return 0;
}
