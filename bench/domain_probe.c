/*
 * bench/domain_probe.c — an audit of validity domains: are the rules of a
 * database true wherever the agent would apply them?
 *
 *   bench_domain_probe DB [--samples N] [--status proved|derived|all] [--max-dim D]
 *                         [--no-domain] [--show N]
 *
 * For every proved (and/or derived) rule, N random assignments of dims
 * 1..D to its inputs (ranks kept; default N 400, D 5: one past the
 * bounded check's 4) are tried; where the rule's domain holds
 * (xf_domain_holds; with --no-domain: anywhere, as the matcher applied rules
 * before domains) and both sides can be built there
 * (xf_verify_rule_at_shapes, the verifier's re-derivations), both sides run
 * in the float interpreter on random inputs and are compared (1e-3
 * relative, as the bounded check's float probe). Prints how many rules were
 * probed, at how many shapes in all, and the rules found false somewhere
 * inside their domain (the first --show of them, with the shapes). Nothing
 * is written. A rule found false here is a soundness bug: the matcher
 * would apply it there.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rulesdb/rulesdb.h"
#include "verify/verify.h"

#define MAX_IN 16

/* 1 when every output agrees to 1e-3 relative (NaNs skipped). */
static int agree(const xf_tensor *a, const xf_tensor *b, int n)
{
    for (int o = 0; o < n; o++) {
        if (a[o].dtype != XF_F32 || b[o].dtype != XF_F32) continue;
        int64_t k = xf_shape_numel(&a[o].shape);
        const float *x = a[o].data, *y = b[o].data;
        for (int64_t e = 0; e < k; e++) {
            if (isnan(x[e]) || isnan(y[e])) continue;
            double d = fabs((double)x[e] - (double)y[e]);
            if (d > 1e-3 * fmax(1.0, fmax(fabs((double)x[e]), fabs((double)y[e])))) return 0;
        }
    }
    return 1;
}

/* Runs r (rebuilt at shapes in) on random inputs; -1 when it cannot be
 * built or run there, 1 when the sides agree, 0 when they differ. */
static int probe(const xf_rule *r, const xf_shape *in, uint64_t seed)
{
    xf_rule at;
    if (xf_verify_rule_at_shapes(r, in, &at, NULL) != XF_OK) {
        xf_rule_free(&at);
        return -1;
    }
    int n_in = at.src.n_inputs, n_out = at.src.n_outputs, res = -1;
    xf_tensor *x = calloc((size_t)n_in + 1, sizeof *x);
    xf_tensor *ys = calloc((size_t)n_out + 1, sizeof *ys), *yd = calloc((size_t)n_out + 1, sizeof *yd);
    if (x && ys && yd && xf_graph_random_inputs(&at.src, seed, x, NULL) == XF_OK) {
        if (xf_interp_run(&at.src, x, n_in, ys, NULL) == XF_OK &&
            xf_interp_run(&at.dst, x, n_in, yd, NULL) == XF_OK)
            res = agree(ys, yd, n_out);
        for (int i = 0; i < n_out; i++) xf_tensor_free(&ys[i]), xf_tensor_free(&yd[i]);
        for (int i = 0; i < n_in; i++) xf_tensor_free(&x[i]);
    }
    free(x);
    free(ys);
    free(yd);
    xf_rule_free(&at);
    return res;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: bench_domain_probe DB [--samples N] [--status proved|derived|all] "
                        "[--max-dim D] [--no-domain] [--show N]\n");
        return 2;
    }
    const char *path = argv[1], *which = "all";
    int samples = 400, max_dim = 5, use_domain = 1, show = 20;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--samples") && i + 1 < argc) samples = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--status") && i + 1 < argc) which = argv[++i];
        else if (!strcmp(argv[i], "--max-dim") && i + 1 < argc) max_dim = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--show") && i + 1 < argc) show = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--no-domain")) use_domain = 0;
        else {
            fprintf(stderr, "bench_domain_probe: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    if (samples < 1 || max_dim < 1) {
        fprintf(stderr, "bench_domain_probe: --samples and --max-dim must be positive\n");
        return 2;
    }
    xf_error err;
    xf_rulesdb *db = NULL;
    if (xf_rulesdb_open(path, XF_RULESDB_READONLY, &db, &err) != XF_OK) {
        fprintf(stderr, "bench_domain_probe: %s\n", err.msg);
        return 2;
    }
    xf_rulesdb_filter f;
    memset(&f, 0, sizeof f);
    f.any_status = 1;
    xf_rulesdb_iter *it = NULL;
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    xf_rng rng;
    xf_rng_seed(&rng, 7);
    long rules = 0, shapes = 0, bad_rules = 0, skipped = 0, shown = 0;
    double t0 = xf_clock_now();
    xf_status st = xf_rulesdb_iter_begin(db, &f, &it, &err);
    for (int has = 1; st == XF_OK;) {
        st = xf_rulesdb_iter_next(it, &info, &has, &err);
        if (st != XF_OK || !has) break;
        int want = (info.status == XF_RULE_PROVED && strcmp(which, "derived")) ||
                   (info.status == XF_RULE_DERIVED && strcmp(which, "proved"));
        if (!want || info.broken) continue;
        xf_rule r;
        if (xf_rulesdb_load_rule(db, info.id, &r, &err) != XF_OK || r.src.n_inputs > MAX_IN ||
            !r.domain.known) {
            skipped++;
            xf_rule_free(&r);
            continue;
        }
        rules++;
        xf_shape in[MAX_IN];
        const xf_shape *p[MAX_IN];
        int found = 0;
        for (int s = 0; s < samples && !found; s++) {
            for (int i = 0; i < r.src.n_inputs; i++) {
                in[i] = r.src.values[r.src.inputs[i]].shape;
                for (int d = 0; d < in[i].rank; d++)
                    in[i].dims[d] = 1 + (int64_t)(xf_rng_next(&rng) % (uint64_t)max_dim);
                p[i] = &in[i];
            }
            if (use_domain && !xf_domain_holds(&r.domain, p, r.src.n_inputs)) continue;
            int ok = probe(&r, in, (uint64_t)s + 1);
            if (ok < 0) continue;
            shapes++;
            if (ok) continue;
            found = 1;
            bad_rules++;
            if (shown++ < show) {
                printf("rule %lld (%s) is false at", (long long)info.id,
                       xf_rulesdb_status_name(info.status));
                for (int i = 0; i < r.src.n_inputs; i++) {
                    char b[96];
                    printf(" %s", xf_shape_str(&in[i], b, sizeof b));
                }
                printf(": %s => %s; holds where: %s\n", info.src_text, info.dst_text,
                       info.domain ? info.domain : "(what its operators demand)");
            }
        }
        xf_rule_free(&r);
    }
    if (st != XF_OK) fprintf(stderr, "bench_domain_probe: %s\n", err.msg);
    printf("domain probe: %ld rules (%s%s), %ld shapes run (dims 1..%d, %d samples a rule), "
           "%ld rules false somewhere %s, %ld not loaded or without a domain, %.1f s\n",
           rules, which, use_domain ? "" : ", domains ignored", shapes, max_dim, samples,
           bad_rules, use_domain ? "inside their domain" : "they match", skipped,
           xf_clock_now() - t0);
    xf_rulesdb_rule_info_free(&info);
    xf_rulesdb_iter_free(it);
    xf_rulesdb_close(db);
    return st == XF_OK ? 0 : 2;
}
