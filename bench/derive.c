/*
 * bench/derive.c — how many candidates of one size follow from the rules
 * proved (or derived) at smaller sizes, at given search bounds, and what
 * the search costs. Read-only: nothing is stored, so one database can be
 * measured at many bounds (the tuning of derive/'s defaults).
 *
 *   bench_derive DB SIZE [--depth N] [--states N] [--extra N] [--skip N] [--limit N]
 *                [--show N] [--replay] [--same-size]
 *
 * Prints the candidates of SIZE, how many were joined, the graphs reached
 * and expanded, the locations matched and rewritten, meets that could not be
 * turned into one chain, the CPU
 * time of the pass (this thread) and the rate; --show N prints the first N
 * candidates left (their infix) to see what the rules miss; --replay
 * replays every chain found against the database (xf_derive_replay, as the
 * derive pass does before it stores one) and counts those that fail.
 * --same-size adds the rules of SIZE proved so far to the deriver (the
 * derive pass that runs again between the solver's rounds, pipeline.c):
 * with a database whose size is partly decided, how many of the
 * candidates left the proved rules of their own size join. --skip N
 * passes over the first N candidates (in id order) unsearched, so
 * --skip and --limit measure one slice, e.g. the tail of a pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "derive/derive.h"

static int usage(void)
{
    fprintf(stderr, "usage: bench_derive DB SIZE [--depth N] [--states N] [--extra N] "
                    "[--skip N] [--limit N] [--show N] [--replay] [--same-size]\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 3) return usage();
    const char *path = argv[1];
    int size = atoi(argv[2]), show = 0, replay = 0, same_size = 0;
    long long limit = 0, skip = 0;
    xf_derive_options o;
    xf_derive_options_init(&o);
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--replay") || !strcmp(argv[i], "--same-size")) {
            if (argv[i][2] == 'r') replay = 1;
            else same_size = 1;
            continue;
        }
        if (i + 1 >= argc) return usage();
        int v = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--depth")) o.max_depth = v;
        else if (!strcmp(argv[i], "--states")) o.max_states = v;
        else if (!strcmp(argv[i], "--extra")) o.max_extra = v;
        else if (!strcmp(argv[i], "--limit")) limit = v;
        else if (!strcmp(argv[i], "--skip")) skip = v;
        else if (!strcmp(argv[i], "--show")) show = v;
        else return usage();
        i++;
    }
    xf_error err;
    xf_rulesdb *db = NULL;
    xf_deriver *d = NULL;
    if (xf_rulesdb_open(path, XF_RULESDB_READONLY, &db, &err) != XF_OK ||
        xf_deriver_load(db, size, same_size, NULL, 0, &o, &d, &err) != XF_OK) {
        fprintf(stderr, "bench_derive: %s\n", err.msg);
        xf_rulesdb_close(db);
        return 1;
    }
    xf_rulesdb_filter f;
    memset(&f, 0, sizeof f);
    f.status = XF_RULE_CANDIDATE;
    f.size = size;
    f.limit = limit > 0 ? limit + skip : 0;
    xf_rulesdb_iter *it = NULL;
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    long long n = 0, found = 0, lost = 0, states = 0, expanded = 0, unreversed = 0, steps = 0;
    long long matched = 0, rewrites = 0, skipped = 0;
    long long shown = 0, replayed = 0, bad = 0;
    double replay_cpu = 0;
    int rc = 0;
    double c0 = xf_clock_thread_cpu(), t0 = xf_clock_now();
    xf_status st = xf_rulesdb_iter_begin(db, &f, &it, &err);
    for (int has = 1; st == XF_OK;) {
        st = xf_rulesdb_iter_next(it, &info, &has, &err);
        if (st != XF_OK || !has) break;
        if (skipped < skip) {
            skipped++;
            continue;
        }
        xf_rule r;
        if (xf_rulesdb_load_rule(db, info.id, &r, &err) != XF_OK) {
            xf_rule_free(&r);
            continue;
        }
        xf_derivation dv;
        st = xf_derive_rule(d, &r, &dv, &err);
        if (st == XF_OK && dv.found && replay) {
            double r0 = xf_clock_thread_cpu();
            xf_error rerr;
            xf_status rs = xf_derive_replay(db, info.id, &r, dv.steps, dv.n_steps, NULL, NULL,
                                            &rerr);
            replay_cpu += xf_clock_thread_cpu() - r0;
            replayed++;
            if (rs != XF_OK) {
                if (bad++ < 5) fprintf(stderr, "bench_derive: %s\n", rerr.msg);
            }
        }
        xf_rule_free(&r);
        n++;
        states += dv.states;
        expanded += dv.expanded;
        matched += dv.matched;
        rewrites += dv.rewrites;
        unreversed += dv.unreversed;
        if (dv.found) found++, steps += dv.n_steps;
        else if (dv.unreversed) lost++;
        else if (shown < show) {
            shown++;
            printf("  left: %lld  %s => %s  (%d graphs)\n", (long long)info.id, info.src_text,
                   info.dst_text, dv.states);
        }
    }
    double cpu = xf_clock_thread_cpu() - c0 - replay_cpu, wall = xf_clock_now() - t0;
    if (st != XF_OK) {
        fprintf(stderr, "bench_derive: %s\n", err.msg);
        rc = 1;
    }
    printf("size %d, depth %d, states %d, extra %d: %d rules (%d actions)\n", size, o.max_depth,
           o.max_states, o.max_extra, xf_deriver_rules(d), xf_deriver_actions(d));
    printf("candidates %lld  derived %lld (%.1f%%)  left %lld  mean chain %.2f\n", n, found,
           n ? 100.0 * (double)found / (double)n : 0.0, n - found,
           found ? (double)steps / (double)found : 0.0);
    printf("graphs %lld (%.1f per candidate)  expanded %lld  unreversed meets %lld (%lld "
           "candidates left with one)\n",
           states, n ? (double)states / (double)n : 0.0, expanded, unreversed, lost);
    printf("matched %lld  rewritten %lld (%.1f per expansion)\n", matched, rewrites,
           expanded ? (double)rewrites / (double)expanded : 0.0);
    printf("cpu %.2f s  wall %.2f s  %.0f candidates/s (cpu, search only)\n", cpu, wall,
           cpu > 0 ? (double)n / cpu : 0.0);
    if (replay)
        printf("replayed %lld chains in %.2f s cpu: %lld did not replay\n", replayed, replay_cpu,
               bad);
    if (bad) rc = 1;
    xf_rulesdb_rule_info_free(&info);
    xf_rulesdb_iter_free(it);
    xf_deriver_free(d);
    xf_rulesdb_close(db);
    return rc;
}
