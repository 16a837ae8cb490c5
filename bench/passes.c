/*
 * bench_passes — what the proved rules do against the hand-written passes
 * in ONNX Runtime (issue 28): per model, batch and thread count, the model
 * rlflow-agent writes with `--passes rules` (only proved rules, with the
 * shape and indexing operators of the default vocabulary), `--passes
 * expert` (the hand passes alone, no rule: narrowing, the split layout, the
 * unbatched layout variant) and `--passes both` (the passes and the proved
 * rules), and `--passes rules` with the old
 * vocabulary's rules (no shape or indexing operators), each the ratio of
 * its latency to the input's in ONNX Runtime (the arbiter's run and its
 * confirming run against the input alone; when the input is kept, the
 * fastest candidate's ratio in the arbiter's run), the rules applied (and
 * how many of them have a reshape or a slice), the outputs' largest
 * difference there. With a symbolic batch the candidates are timed as they
 * would be written (the batch symbolic) against the input file itself.
 *
 *   bench_passes [--quick] [--models LIST] [--threads LIST] [--batches LIST]
 *                [--passes LIST] [--budget N] [--rules DB] [--old-rules DB]
 *
 * Models: ../shared/models/bert_small (exported at batch 1; at batch 4 and
 * with a symbolic batch as bench/rebatch.py rewrites it), vit_tiny (batch 1
 * only: its export folds the batch into the attention's reshapes, so no
 * other batch can be made of it without PyTorch), bert_small_dynamic
 * (symbolic batch and sequence, optimised at batch 4, sequence 128, written
 * symbolic), modelzoo bert, vit and gpt at batch 1 and 4, and with a
 * symbolic batch (the batch-4 model rebatched). Rebatching needs
 * /usr/bin/python3 with python3-onnx; without it those rows say so. Every
 * cell of issue 28's acceptance in one run:
 *   bench_passes --rules build/tools/rules-default-*.db
 * Rules: made once under
 * $TMPDIR/bench_passes (xfergen --max-ops 3 with the default vocabulary and
 * with --vocab noviews, each verified by xferverify; a few minutes each;
 * made again when xfergen or xferverify is newer than them) unless given. Prints only; without ONNX Runtime it says so and exits 0.
 * The load average is printed before and after, and beside each run (its
 * 1-minute figure): ratios taken on a busy machine are noisier (docs/target.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_runner.h"
#include "target/target.h"

typedef struct spec {
    const char *name;
    const char *path; /* shared model under XF_BENCH_MODELS_DIR, or NULL */
    const char *zoo;  /* modelzoo model, or NULL */
    const char *dims; /* rlflow-agent --dim options of a symbolic model */
    int batches;      /* bit 0: batch 1, bit 1: batch 4, bit 2: symbolic */
    int quick;
    const char *why_not; /* why the batches not in `batches` cannot be made */
} spec;

static const spec specs[] = {
    {"bert_small", "bert_small/model.onnx", NULL, NULL, 7, 0, NULL},
    {"bert_small_dynamic", "bert_small_dynamic/model.onnx", NULL,
     "--dim batch=4 --dim sequence=128", 4, 0, NULL},
    {"vit_tiny", "vit_tiny/model.onnx", NULL, NULL, 1, 0,
     "its export folds batch 1 into the attention's reshapes ([197, 3, 64] is [S, B*h, d]); "
     "re-exporting at that batch needs PyTorch"},
    {"zoo:bert", NULL, "bert", NULL, 7, 1, NULL},
    {"zoo:vit", NULL, "vit", NULL, 7, 0, NULL},
    {"zoo:gpt", NULL, "gpt", NULL, 7, 0, NULL},
};
enum { N_SPECS = sizeof specs / sizeof specs[0], MAX_LIST = 8 };

static const char *const pass_names[3] = {"rules", "expert", "both"};

typedef struct options {
    int quick, budget;
    int n_threads, threads[MAX_LIST];
    int batches;   /* bits as spec.batches */
    int passes;    /* bit i: pass_names[i]; bit 3: rules with the old vocabulary */
    const char *models, *rules, *old_rules;
} options;

static int usage(int rc)
{
    printf("usage: bench_passes [--quick] [--models LIST] [--threads LIST] [--batches LIST]\n"
           "                    [--passes LIST] [--budget N] [--rules DB] [--old-rules DB]\n"
           "rlflow-agent --search taso --target ort on each model with --passes rules, expert\n"
           "and both, and rules with the old vocabulary's rules: ratio to the input in ONNX\n"
           "Runtime (arbiter's run / confirming run), rules applied, outputs' difference.\n"
           "Every cell of issue 28's table: bench_passes --rules build/tools/rules-default-*.db\n"
           "  --quick          zoo:bert at threads 1, batches 1,4\n"
           "  --models LIST    comma-separated (default all):");
    for (int i = 0; i < N_SPECS; i++) printf("%s%s", i ? "," : " ", specs[i].name);
    printf("\n  --threads LIST   ONNX Runtime intra-op threads (default 1,2)\n"
           "  --batches LIST   1, 4 and sym (default 1,4,sym)\n"
           "  --passes LIST    rules, expert, both, old (default all four)\n"
           "  --budget N       TASO search budget (default 200)\n"
           "  --rules DB       proved rules of the default vocabulary (default: made here)\n"
           "  --old-rules DB   proved rules of --vocab noviews (default: made here)\n");
    return rc;
}

static int in_list(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t k = e ? (size_t)(e - p) : strlen(p);
        if (k == n && strncmp(p, name, n) == 0) return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

static int parse(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->budget = 200;
    o->n_threads = 2;
    o->threads[0] = 1, o->threads[1] = 2;
    o->batches = 7;
    o->passes = 15;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) return usage(0) - 1;
        if (!strcmp(a, "--quick")) {
            o->quick = 1;
            continue;
        }
        if (!v) return usage(2);
        i++;
        if (!strcmp(a, "--models")) {
            o->models = v;
        } else if (!strcmp(a, "--threads")) {
            o->n_threads = bench_thread_list(v, o->threads, MAX_LIST);
            if (o->n_threads == 0) return usage(2);
        } else if (!strcmp(a, "--batches")) {
            o->batches = (in_list(v, "1") ? 1 : 0) | (in_list(v, "4") ? 2 : 0) |
                         (in_list(v, "sym") ? 4 : 0);
        } else if (!strcmp(a, "--passes")) {
            o->passes = 0;
            for (int k = 0; k < 3; k++) o->passes |= in_list(v, pass_names[k]) << k;
            o->passes |= in_list(v, "old") << 3;
        } else if (!strcmp(a, "--budget")) {
            o->budget = atoi(v);
        } else if (!strcmp(a, "--rules")) {
            o->rules = v;
        } else if (!strcmp(a, "--old-rules")) {
            o->old_rules = v;
        } else {
            return usage(2);
        }
    }
    if (o->quick) {
        o->n_threads = 1;
        o->batches &= 3;
    }
    return o->budget > 0 && o->batches && o->passes ? 0 : usage(2);
}

static void load_average(const char *when)
{
    FILE *f = fopen("/proc/loadavg", "r");
    char buf[128] = "?";
    if (f) {
        if (!fgets(buf, sizeof buf, f)) snprintf(buf, sizeof buf, "?");
        fclose(f);
    }
    buf[strcspn(buf, "\n")] = '\0';
    printf("load average %s: %s\n", when, buf);
}

/* 1 when file `made` exists and is newer than `from` and the script. */
static int fresh(const char *made, const char *from)
{
    struct stat m, f, py;
    return stat(made, &m) == 0 && stat(from, &f) == 0 && stat(XF_BENCH_REBATCH, &py) == 0 &&
           m.st_mtime >= f.st_mtime && m.st_mtime >= py.st_mtime;
}

/* The model file of spec s at batch bit b (1: batch 1, 2: batch 4, 4:
 * symbolic) in the scratch directory or the shared models; 0 when there is
 * none. A shared model at batch 4 or symbolic, and a modelzoo model with a
 * symbolic batch, are rewritten by bench/rebatch.py (a shared model from its
 * own batch, a modelzoo model from batch 4). */
static int model_file(const spec *s, int b, const char *scratch, char *path, size_t n)
{
    struct stat st;
    char from[1100], cmd[4096];
    if (s->path) {
        snprintf(from, sizeof from, "%s/%s", XF_BENCH_MODELS_DIR, s->path);
        if (stat(from, &st) != 0) return 0;
        if (b == 1 || s->dims) {
            snprintf(path, n, "%s", from);
            return 1;
        }
    } else {
        snprintf(from, sizeof from, "%s/%s_b%d.onnx", scratch, s->zoo, b == 1 ? 1 : 4);
        snprintf(cmd, sizeof cmd, "'%s' %s --batch %d -o '%s' > /dev/null", XF_BENCH_MODELZOO,
                 s->zoo, b == 1 ? 1 : 4, from);
        if (stat(from, &st) != 0 && system(cmd) != 0) return 0;
        if (b != 4) {
            snprintf(path, n, "%s", from);
            return 1;
        }
    }
    snprintf(path, n, "%s/%s_%s.onnx", scratch, s->zoo ? s->zoo : s->name,
             b == 2 ? "b4" : "sym");
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' '%s' '%s' %s", XF_BENCH_REBATCH, from, path,
             b == 2 ? "4" : "sym");
    return fresh(path, from) || system(cmd) == 0;
}

typedef struct result {
    int ran, kept;
    double ratio, lo, hi, confirm;
    int applied, new_family;
    double best; /* the smallest ratio of a candidate in the arbiter's table (0: none timed) */
    double noise; /* the self check's +- (a second session of the input) */
    double load;  /* 1-minute load average when the run ended */
    char err[64], why[160];
} result;

static double number_after(const char *line, const char *key)
{
    const char *p = strstr(line, key);
    return p ? atof(p + strlen(key)) : 0;
}

/* One rlflow-agent run; the figures of its report. */
static result run(const char *rules, const char *model, const char *dims, const char *passes,
                  int threads, int budget, const char *scratch)
{
    result r;
    memset(&r, 0, sizeof r);
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "'%s' --rules '%s' '%s' -o '%s/out-%ld.onnx' --search taso --target ort --threads %d "
             "--budget %d --passes %s %s --no-latency -q 2>&1",
             XF_BENCH_AGENT, rules, model, scratch, (long)getpid(), threads, budget, passes, dims ? dims : "");
    FILE *p = popen(cmd, "r");
    if (!p) return r;
    char line[4096];
    while (fgets(line, sizeof line, p)) {
        if (!strncmp(line, "target latency:", 15)) {
            r.ratio = number_after(line, "(x");
            r.lo = number_after(line, "interval [");
            const char *c = strstr(line, "interval [");
            if (c && (c = strchr(c, ','))) r.hi = atof(c + 1);
        } else if (!strncmp(line, "target noise:", 13)) {
            r.noise = number_after(line, "+- ");
        } else if (!strncmp(line, "confirmed:", 10)) {
            r.confirm = number_after(line, ": x"); /* a confirming run or the final */
        } else if (!strncmp(line, "target outputs:", 15)) {
            const char *m = strstr(line, "max |d| ");
            if (m) snprintf(r.err, sizeof r.err, "%.*s", (int)strcspn(m + 8, " \n"), m + 8);
        } else if (!strncmp(line, "  cand ", 7) && strchr(line, '[')) {
            /* a row of the arbiter's table: the ratio is the field before "[" */
            const char *b = strchr(line, '['), *q = b;
            while (q > line && q[-1] == ' ') q--;
            while (q > line && q[-1] != ' ') q--;
            double v = atof(q);
            if (v > 0 && (r.best == 0 || v < r.best)) r.best = v;
        } else if (!strncmp(line, "result:", 7) && strstr(line, "unchanged")) {
            r.kept = 1;
        } else if (!strncmp(line, "made by:", 8)) {
            r.applied = (int)number_after(line, "proved rules ");
            r.new_family = (int)number_after(line, "rewrites (");
            if (!strstr(line, "rewrites (")) r.new_family = (int)number_after(line, "rewrite (");
        } else if (!strncmp(line, "rlflow-agent:", 13)) {
            snprintf(r.why, sizeof r.why, "%s", line + 14);
            r.why[strcspn(r.why, "\n")] = '\0';
        }
    }
    r.ran = pclose(p) == 0;
    snprintf(cmd, sizeof cmd, "%s/out-%ld.onnx", scratch, (long)getpid());
    remove(cmd);
    r.load = bench_load_average();
    return r;
}

static void row(const char *label, const result *r)
{
    if (!r->ran) {
        printf("  %-14s failed: %s\n", label, r->why[0] ? r->why : "(no report)");
        return;
    }
    if (r->kept) {
        printf("  %-14s %7s %17s %8s %8d %8d  %-9s %6.3f %5.2f", label, "1.000", "input kept",
               "-", r->applied, r->new_family, "-", r->noise, r->load);
        if (r->best > 0) printf("  (best candidate x%.3f)", r->best);
        printf("\n");
        return;
    }
    printf("  %-14s %7.3f  [%6.3f, %6.3f] %8.3f %8d %8d  %-9s %6.3f %5.2f\n", label, r->ratio,
           r->lo, r->hi, r->confirm, r->applied, r->new_family, r->err[0] ? r->err : "-", r->noise,
           r->load);
}

int main(int argc, char **argv)
{
    options o;
    int rc = parse(argc, argv, &o);
    if (rc) return rc < 0 ? 0 : rc;
    xf_target *t = NULL;
    xf_error err;
    if (xf_target_open(NULL, &t, &err) != XF_OK) {
        printf("bench_passes: no ONNX Runtime: %s\n", err.msg);
        return 0;
    }
    xf_target_close(t);
    const char *scratch = bench_scratch("bench_passes");
    char rules[1100], old_rules[1100];
    if (o.rules) snprintf(rules, sizeof rules, "%s", o.rules);
    else bench_make_rules_vocab(scratch, XF_BENCH_XFERGEN, XF_BENCH_XFERVERIFY, "default",
                                "rules.db", rules, sizeof rules);
    if (o.old_rules) snprintf(old_rules, sizeof old_rules, "%s", o.old_rules);
    else if (o.passes & 8)
        bench_make_rules_vocab(scratch, XF_BENCH_XFERGEN, XF_BENCH_XFERVERIFY, "noviews",
                               "rules_noviews.db", old_rules, sizeof old_rules);
    printf("bench_passes: rlflow-agent --search taso --target ort --budget %d; rules %s, old "
           "vocabulary's %s\n",
           o.budget, rules, o.passes & 8 ? old_rules : "-");
    load_average("before");
    printf("ratio: written/input in ONNX Runtime in the arbiter's run [95%% interval]; confirm:\n"
           "the same in its confirming run against the input alone; applied: rules applied, of\n"
           "them new: with a reshape or a slice (the shape and indexing operators); max |d|:\n"
           "outputs of written vs input in ONNX Runtime, relative to the largest output; noise:\n"
           "a second session of the input against it, +- (half its 95%% interval); load:\n"
           "the 1-minute load average when the run ended (2-core machine: above 2, the timings\n"
           "share the cores); input kept: the fastest candidate's ratio in the arbiter's run\n"
           "follows (with a symbolic batch, candidates are timed as written against the file)\n");
    static const char *const batch_names[3] = {"batch 1", "batch 4", "symbolic batch"};
    for (int i = 0; i < N_SPECS; i++) {
        const spec *s = &specs[i];
        if (o.models ? !in_list(o.models, s->name) : o.quick && !s->quick) continue;
        for (int b = 1; b <= 4; b <<= 1) {
            if (!(o.batches & b)) continue;
            if (!(s->batches & b)) {
                if (s->why_not)
                    printf("\n%s, %s: no model (%s)\n", s->name,
                           b == 2 ? "batch 4" : "symbolic batch", s->why_not);
                continue;
            }
            char path[1200];
            int bi = b == 1 ? 0 : b == 2 ? 1 : 2;
            if (!model_file(s, b, scratch, path, sizeof path)) {
                printf("\n%s, %s: no model (%s)\n", s->name, batch_names[bi],
                       (s->zoo && b == 4) || (s->path && b != 1)
                           ? "bench/rebatch.py did not make it: it needs /usr/bin/python3 with "
                             "python3-onnx"
                           : "not found");
                continue;
            }
            const char *dims = s->dims ? s->dims : b == 4 ? "--dim batch=4" : NULL;
            for (int k = 0; k < o.n_threads; k++) {
                printf("\n%s, %s, %d thread%s\n", s->name, batch_names[bi], o.threads[k],
                       o.threads[k] == 1 ? "" : "s");
                printf("  %-14s %7s  %-16s %8s %8s %8s  %-9s %6s %5s\n", "passes", "ratio",
                       "95% interval", "confirm", "applied", "new", "max |d|", "noise", "load");
                for (int p = 0; p < 4; p++) {
                    if (!(o.passes & (1 << p))) continue;
                    result r = run(p == 3 ? old_rules : rules, path, dims,
                                   p == 3 ? "rules" : pass_names[p], o.threads[k], o.budget,
                                   scratch);
                    row(p == 3 ? "rules (old)" : pass_names[p], &r);
                    fflush(stdout);
                }
            }
        }
    }
    printf("\n");
    load_average("after");
    return 0;
}
