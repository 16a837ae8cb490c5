/*
 * compare_page.c — many optimisations side by side (bench_agents
 * --report): a table of latency, cost and memory before and after per
 * model and method (as RLFlow's Table 2), the heatmap of the rewrites each
 * method's models carry by source (proved rules, drawn, and hand passes;
 * as its Figure 10) and each model's progress curves, a line per method.
 */
#include <inttypes.h>
#include <string.h>

#include "pages_internal.h"

static const char *label_of(const xf_pages_run *run, char *buf, size_t n)
{
    if (run->label) return run->label;
    /* the model file's directory: .../bert_small/model.onnx -> bert_small */
    const char *m = run->model, *end = strrchr(m, '/');
    if (!end) return m;
    const char *start = end;
    while (start > m && start[-1] != '/') start--;
    snprintf(buf, n, "%.*s", (int)(end - start), start);
    return buf[0] ? buf : m;
}

static const char *method_of(const xf_pages_run *run)
{
    return run->method ? run->method : xf_pages_method(run->o);
}

static void ms_cells(FILE *f, double before, double after)
{
    fprintf(f, "<td class=\"n\">%.4f</td><td class=\"n\">%.4f</td>", before, after);
    pg_change_cell(f, before, after);
}

static void table(FILE *f, const xf_pages_run *runs, int n)
{
    fputs("<section id=\"table\"><h2>Latency and memory, before and after</h2>\n"
          "<table class=\"t\"><tr><th>model</th><th>method</th>"
          "<th>measured ms before</th><th>after</th><th>change</th><th>noise</th>"
          "<th>cost ms before</th><th>after</th><th>change</th>"
          "<th>peak activations before</th><th>after</th><th>change</th>"
          "<th>weights before</th><th>after</th><th>rewrites</th><th>max err</th>"
          "<th>seconds</th></tr>\n",
          f);
    for (int i = 0; i < n; i++) {
        const xf_optimize_report *r = runs[i].r;
        char b[512];
        fputs("<tr><td>", f);
        xf_audit_html(f, label_of(&runs[i], b, sizeof b));
        fputs("</td><td>", f);
        xf_audit_html(f, method_of(&runs[i]));
        fputs("</td>", f);
        if (r->target && r->arb.n > 1 && r->arb.e[r->arb.chosen].input_ms > 0) {
            const xf_arbiter_entry *e = &r->arb.e[r->arb.chosen];
            ms_cells(f, e->input_ms, r->arb.chosen ? e->t.median_ms : e->input_ms);
            fprintf(f, "<td class=\"n\">&plusmn;%.1f%%</td>", 100.0 * r->arb.self.noise);
        } else if (r->latency_state > 0) {
            ms_cells(f, r->latency_before, r->latency_after);
            fprintf(f, "<td class=\"n\">%.1f%%</td>", 100.0 * r->latency_spread);
        } else {
            fputs("<td class=\"n\">-</td><td class=\"n\">-</td><td class=\"n\">-</td>"
                  "<td class=\"n\">-</td>",
                  f);
        }
        ms_cells(f, r->cost_before, r->cost_after);
        pg_bytes_cell(f, r->memory_before.peak_activation_bytes);
        pg_bytes_cell(f, r->memory_after.peak_activation_bytes);
        pg_change_cell(f, (double)r->memory_before.peak_activation_bytes,
                       (double)r->memory_after.peak_activation_bytes);
        pg_bytes_cell(f, r->memory_before.weight_bytes);
        pg_bytes_cell(f, r->memory_after.weight_bytes);
        int c[PG_PASSES];
        pg_pass_counts(r, c);
        int total = r->kept_original ? 0 : r->n_applied;
        for (int k = 0; k < PG_PASSES; k++) total += c[k];
        fprintf(f, "<td class=\"n\">%d</td>", total);
        if (r->check.max_abs >= 0) fprintf(f, "<td class=\"n\">%.2g</td>", r->check.max_abs);
        else fputs("<td class=\"n\">-</td>", f);
        fprintf(f, "<td class=\"n\">%.1f</td></tr>\n", r->seconds);
    }
    fputs("</table><p class=\"note\">Measured: in the target (ONNX Runtime) when it decided "
          "(noise: the input against a second session of itself), else on the cost model's "
          "backend (noise: how far apart one model's medians were); a change within the noise "
          "is no change. Peak activations: the liveness of inputs and node outputs in the order "
          "the file lists the nodes.</p></section>\n",
          f);
}

/* The heatmap's columns: the hand passes, then every rule applied by any
 * run, in the order first met. */
typedef struct heat_cols {
    int n;
    int64_t *rule; /* the first PG_PASSES: the hand passes; then rule ids (negative: the
                      reverse of rule -id) */
    const char **text;
} heat_cols;

static int column(const heat_cols *h, int64_t rule)
{
    for (int k = 0; k < h->n; k++)
        if (h->rule[k] == rule) return k;
    return -1;
}

/* The methods in the order first met. */
static int methods(const xf_pages_run *runs, int n, const char **out)
{
    int m = 0;
    for (int i = 0; i < n; i++) {
        int k = 0;
        while (k < m && strcmp(out[k], method_of(&runs[i]))) k++;
        if (k == m) out[m++] = method_of(&runs[i]);
    }
    return m;
}

static void heat_cell(FILE *f, int v, int max)
{
    if (v == 0) {
        fputs("<td class=\"heat\"></td>", f);
        return;
    }
    int a = 15 + 85 * v / (max > 0 ? max : 1);
    fprintf(f, "<td class=\"heat\" style=\"background:rgba(52,101,164,%.2f);color:%s\">%d</td>",
            a / 100.0, a > 55 ? "#fff" : "#222", v);
}

static xf_status heatmap(FILE *f, const xf_pages_run *runs, int n, pg_pictures *pics,
                         xf_error *err)
{
    int cap = PG_PASSES;
    for (int i = 0; i < n; i++) cap += runs[i].r->n_distinct;
    heat_cols h = {0, xf_malloc(sizeof(int64_t) * (size_t)cap),
                   xf_malloc(sizeof(char *) * (size_t)cap)};
    const char **ms = xf_malloc(sizeof(char *) * (size_t)(n + 1));
    int *cell = NULL;
    xf_status st = XF_OK;
    if (!h.rule || !h.text || !ms) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory drawing the heatmap");
        goto out;
    }
    for (int k = 0; k < PG_PASSES; k++) {
        h.rule[h.n] = 0; /* no rule has id 0 */
        h.text[h.n++] = pg_pass_names[k];
    }
    for (int i = 0; i < n; i++) {
        const xf_optimize_report *r = runs[i].r;
        for (int k = 0; !r->kept_original && k < r->n_distinct; k++)
            if (column(&h, r->applied[k].rule_id) < 0) {
                h.rule[h.n] = r->applied[k].rule_id;
                h.text[h.n++] = r->applied[k].text;
            }
    }
    int nm = methods(runs, n, ms);
    cell = xf_calloc((size_t)nm * (size_t)h.n, sizeof *cell);
    if (!cell) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory drawing the heatmap");
        goto out;
    }
    int max = 0;
    for (int i = 0; i < n; i++) {
        const xf_optimize_report *r = runs[i].r;
        int m = 0;
        while (strcmp(ms[m], method_of(&runs[i]))) m++;
        int c[PG_PASSES];
        pg_pass_counts(r, c);
        for (int k = 0; k < PG_PASSES; k++) cell[m * h.n + k] += c[k];
        for (int k = 0; !r->kept_original && k < r->n_distinct; k++)
            cell[m * h.n + column(&h, r->applied[k].rule_id)] += r->applied[k].count;
    }
    for (int k = 0; k < nm * h.n; k++)
        if (cell[k] > max) max = cell[k];
    fputs("<section id=\"heatmap\"><h2>Which rewrites each method's models carry</h2>\n"
          "<p class=\"note\">Rewrites in the models written, summed over each method's runs: "
          "the hand passes first, then each rule applied (hover a column for its text; the "
          "pictures of the rules follow).</p>\n<table class=\"t\"><tr><th>method</th>",
          f);
    for (int k = 0; k < h.n; k++) {
        fputs("<th class=\"rot\" title=\"", f);
        xf_audit_html(f, h.text[k]);
        fputs("\">", f);
        if (k < PG_PASSES) xf_audit_html(f, h.text[k]);
        else if (h.rule[k] < 0) fprintf(f, "rule %" PRId64 " reversed", -h.rule[k]);
        else fprintf(f, "rule %" PRId64, h.rule[k]);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    for (int m = 0; m < nm; m++) {
        fputs("<tr><td>", f);
        xf_audit_html(f, ms[m]);
        fputs("</td>", f);
        for (int k = 0; k < h.n; k++) heat_cell(f, cell[m * h.n + k], max);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n<div class=\"grid\">\n", f);
    for (int k = PG_PASSES; k < h.n; k++) {
        xf_rule_status status;
        int64_t id = h.rule[k] < 0 ? -h.rule[k] : h.rule[k];
        fprintf(f, "<div class=\"card\"><h2>rule %" PRId64 "%s</h2>", id,
                h.rule[k] < 0 ? " reversed" : "");
        int drawn = 0;
        if ((st = pg_picture(pics, id, &status, &drawn, err))) goto out;
        if (drawn)
            fprintf(f, "<img class=\"rule\" src=\"img/rule-%" PRId64 ".svg\" alt=\"rule %" PRId64
                       "\">",
                    id, id);
        fputs("<code>", f);
        xf_audit_html(f, h.text[k]);
        fputs("</code></div>\n", f);
    }
    fputs("</div>\n", f);
    if (pics->why[0]) {
        fputs("<p class=\"note\">Pictures: ", f);
        xf_audit_html(f, pics->why);
        fputs(".</p>\n", f);
    }
    fputs("</section>\n", f);
out:
    xf_free(h.rule);
    xf_free(h.text);
    xf_free(ms);
    xf_free(cell);
    return st;
}

/* Per model, a chart with a line per method (its first search). */
static xf_status curves(FILE *f, const xf_pages_run *runs, int n, xf_error *err)
{
    pg_series *s = xf_malloc(sizeof *s * 2 * (size_t)(n + 1)); /* by seconds, by steps */
    int total = 0;
    for (int i = 0; i < n; i++) total += runs[i].r->n_trace;
    double *buf = xf_malloc(sizeof(double) * 3 * (size_t)(total + 1));
    char *done = xf_calloc((size_t)n + 1, 1);
    if (!s || !buf || !done) {
        xf_free(s);
        xf_free(buf);
        xf_free(done);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory drawing the progress");
    }
    fputs("<section id=\"progress\"><h2>Progress per model</h2>\n<p>x axis <select "
          "class=\"xaxis\"><option value=\"seconds\">seconds</option><option "
          "value=\"steps\">steps</option></select> <span class=\"note\">best cost found so far "
          "(cost model, the prepared working graph), one line per method</span></p>\n"
          "<div class=\"grid\">\n",
          f);
    for (int i = 0; i < n; i++) {
        if (done[i]) continue;
        char a[512], b[512];
        const char *model = label_of(&runs[i], a, sizeof a);
        int ns = 0;
        double *p = buf;
        pg_series *sn = s + n; /* the same points against steps */
        for (int j = i; j < n; j++) {
            if (done[j] || strcmp(label_of(&runs[j], b, sizeof b), model)) continue;
            done[j] = 1;
            const xf_optimize_report *r = runs[j].r;
            int k = 0;
            while (k < r->n_trace && r->trace[k].search == 0) {
                p[k] = r->trace[k].seconds;
                p[r->n_trace + k] = (double)r->trace[k].steps;
                p[2 * r->n_trace + k] = r->trace[k].best_ms;
                k++;
            }
            s[ns] = (pg_series){method_of(&runs[j]), k, p, p + 2 * r->n_trace};
            sn[ns++] = (pg_series){method_of(&runs[j]), k, p + r->n_trace, p + 2 * r->n_trace};
            p += 3 * r->n_trace;
        }
        pg_chart(f, model, "seconds", "ms", "seconds", 0, s, ns);
        pg_chart(f, model, "steps", "ms", "steps", 1, sn, ns);
    }
    fputs("</div></section>\n", f);
    xf_free(s);
    xf_free(buf);
    xf_free(done);
    return XF_OK;
}

xf_status xf_pages_compare(const char *dir, const xf_pages_run *runs, int n, xf_error *err)
{
    char img[4200], page[4200], sub[512];
    snprintf(img, sizeof img, "%s/img", dir);
    snprintf(page, sizeof page, "%s/index.html", dir);
    xf_status st = pg_make_dir(dir, err);
    if (st) return st;
    pg_pictures pics;
    if ((st = pg_pictures_open(&pics, img, n > 0 ? runs[0].o->rules : NULL, err))) return st;
    xf_outfile out;
    if (!(st = xf_outfile_open(&out, page, err))) {
        FILE *f = out.f;
        snprintf(sub, sizeof sub, "%d optimisations · rules %s", n,
                 n > 0 && runs[0].o->rules ? runs[0].o->rules : "?");
        pg_head(f, "rlflow: methods compared", sub);
        table(f, runs, n);
        st = heatmap(f, runs, n, &pics, err);
        if (!st) st = curves(f, runs, n, err);
        pg_foot(f);
        if (st) xf_outfile_abort(&out);
        else st = xf_outfile_commit(&out, err);
    }
    pg_pictures_close(&pics);
    return st;
}
