/*
 * agent_runner.c — the rlflow-agent driver shared by bench_optimize and
 * bench_agents (see agent_runner.h).
 */
#include "agent_runner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static char scratch_buf[1024];

const char *bench_scratch(const char *name)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(scratch_buf, sizeof scratch_buf, "%s/%s", tmp && *tmp ? tmp : "/tmp", name);
    mkdir(scratch_buf, 0755);
    return scratch_buf;
}

void bench_make_rules(const char *scratch, const char *xfergen, const char *xferverify,
                      char *path, size_t n)
{
    bench_make_rules_vocab(scratch, xfergen, xferverify, "taso", "rules.db", path, n);
}

void bench_make_rules_vocab(const char *scratch, const char *xfergen, const char *xferverify,
                            const char *vocab, const char *file, char *path, size_t n)
{
    snprintf(path, n, "%s/%s", scratch, file);
    struct stat st;
    if (stat(path, &st) == 0) return;
    /* made under another name and renamed when verified, so an interrupted
     * run never leaves a half-verified rules.db behind */
    char part[1100], cmd[4096];
    snprintf(part, sizeof part, "%s.part", path);
    remove(part);
    snprintf(cmd, sizeof cmd,
             "'%s' --vocab %s --max-ops 3 -o '%s' > /dev/null && '%s' -j 2 '%s' > /dev/null",
             xfergen, vocab, part, xferverify, part);
    fprintf(stderr, "bench: generating and verifying the %s rules (a few minutes)\n", vocab);
    if (system(cmd) != 0 || rename(part, path) != 0) {
        remove(part);
        fprintf(stderr, "bench: making the rules failed: %s\n", cmd);
        exit(1);
    }
}

void bench_field(const char *line, const char *key, char *dst, size_t n)
{
    size_t k = strlen(key);
    if (strncmp(line, key, k) != 0) return;
    const char *v = line + k;
    while (*v == ' ') v++;
    snprintf(dst, n, "%s", v);
    dst[strcspn(dst, "\n")] = '\0';
}

bench_row bench_run_agent(const char *agent, const char *rules, const char *model,
                          const char *scratch, const char *extra)
{
    bench_row r;
    memset(&r, 0, sizeof r);
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' --rules '%s' '%s' -o '%s/out.onnx' %s -q 2>&1", agent, rules,
             model, scratch, extra);
    FILE *p = popen(cmd, "r");
    if (!p) return r;
    char line[4096];
    while (fgets(line, sizeof line, p)) {
        bench_field(line, "model:", r.model, sizeof r.model);
        bench_field(line, "applicable:", r.applicable, sizeof r.applicable);
        bench_field(line, "cost:", r.cost, sizeof r.cost);
        bench_field(line, "latency:", r.latency, sizeof r.latency);
        bench_field(line, "latency noise:", r.noise, sizeof r.noise);
        bench_field(line, "max output err:", r.err, sizeof r.err);
        bench_field(line, "search:", r.search, sizeof r.search);
        bench_field(line, "optimisation:", r.search, sizeof r.search);
        bench_field(line, "agent:", r.agent, sizeof r.agent);
        bench_field(line, "world model:", r.world, sizeof r.world);
        if (strncmp(line, "rlflow-agent:", 13) == 0) fprintf(stderr, "  %s", line);
    }
    r.ok = pclose(p) == 0;
    return r;
}

void bench_print_row(const char *name, const char *method, const bench_row *r)
{
    printf("%-22s %-8s %s\n", name, method, r->ok ? "" : "FAILED (see above)");
    if (r->ok) {
        printf("    model      %s\n    applicable %s\n    cost       %s\n", r->model,
               r->applicable, r->cost);
        if (r->latency[0]) printf("    latency    %s\n", r->latency);
        if (r->noise[0]) printf("    noise      %s\n", r->noise);
        printf("    error      %s\n    run        %s\n", r->err, r->search);
        if (r->agent[0]) printf("    agent      %s\n", r->agent);
        if (r->world[0]) printf("    world      %s\n", r->world);
    }
    fflush(stdout);
}

int bench_thread_list(const char *s, int *out, int max)
{
    int n = 0;
    while (*s && n < max) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 256 || (*end && *end != ',')) return 0;
        out[n++] = (int)v;
        s = *end == ',' ? end + 1 : end;
    }
    return *s ? 0 : n;
}
