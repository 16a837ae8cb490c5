/*
 * optimize_page.c — the page of one optimisation (rlflow-agent --report):
 * the latency and memory cards, the rewrites with their sources (each
 * proved rule drawn, each hand pass named), where the model changed, the
 * search's progress and the arbiter's table, from an xf_optimize_report.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "pages_internal.h"

const char *xf_pages_method(const xf_optimize_options *o)
{
    if (o->agent == XF_OPTIMIZE_PPO) return "ppo";
    if (o->agent == XF_OPTIMIZE_WM) return "wm";
    return xf_search_kind_name(o->search);
}

static void ms_row(FILE *f, const char *what, double before, double after, const char *note)
{
    fputs("<tr><td>", f);
    xf_audit_html(f, what);
    fprintf(f, "</td><td class=\"n\">%.4f ms</td><td class=\"n\">%.4f ms</td>", before, after);
    pg_change_cell(f, before, after);
    fputs("<td>", f);
    xf_audit_html(f, note);
    fputs("</td></tr>\n", f);
}

static void latency_card(FILE *f, const xf_optimize_report *r)
{
    char note[512];
    fputs("<div class=\"card\"><h2>Latency</h2><table class=\"t\"><tr><th></th><th>before</th>"
          "<th>after</th><th>change</th><th>noise</th></tr>\n",
          f);
    if (r->target && (r->arb.n < 2 || !(r->arb.e[r->arb.chosen].input_ms > 0))) {
        fputs("<tr><td>target: ", f);
        xf_audit_html(f, r->target_identity);
        fputs("</td><td colspan=\"4\">not timed: ", f);
        if (r->arb.refused[0]) xf_audit_html(f, r->arb.refused);
        else if (r->arb.n > 1)
            fprintf(f, "none of the %d candidates was timed (their verdicts: the arbiter's table "
                       "below)", r->arb.n - 1);
        else fputs("no candidate besides the input to time against it", f);
        fputs("</td></tr>\n", f);
    } else if (r->target) {
        const xf_arbiter_result *a = &r->arb;
        const xf_target_timing *t = &a->e[a->chosen].t;
        snprintf(note, sizeof note, "x%.3f, 95%% interval [%.3f, %.3f]; the input against itself "
                 "x%.3f +- %.3f (%d rounds)", t->ratio, t->lo, t->hi, a->self.ratio,
                 a->self.noise, a->rounds);
        fputs("<tr><td>target: ", f);
        xf_audit_html(f, r->target_identity);
        fputs("</td>", f);
        double before = a->e[a->chosen].input_ms, after = a->chosen ? t->median_ms : before;
        fprintf(f, "<td class=\"n\">%.4f ms</td><td class=\"n\">%.4f ms</td>", before, after);
        pg_change_cell(f, before, after);
        fputs("<td>", f);
        xf_audit_html(f, note);
        fputs("</td></tr>\n", f);
    }
    if (r->latency_state > 0) {
        snprintf(note, sizeof note, "medians of one model %.1f%% apart (best of 5 alternating "
                 "10-run medians)", 100.0 * r->latency_spread);
        char what[300];
        snprintf(what, sizeof what, "measured: %s", r->latency_identity);
        ms_row(f, what, r->latency_before, r->latency_after, note);
    } else if (r->latency_state < 0) {
        fputs("<tr><td>measured</td><td colspan=\"4\">not measured: ", f);
        xf_audit_html(f, r->latency_error);
        fputs("</td></tr>\n", f);
    }
    char what[300];
    snprintf(what, sizeof what, "cost model: %s", r->cost_identity);
    ms_row(f, what, r->cost_before, r->cost_after, "the sum of the operators' costs, as written");
    fputs("</table></div>\n", f);
}

static void memory_row(FILE *f, const char *what, uint64_t before, uint64_t after)
{
    fputs("<tr><td>", f);
    xf_audit_html(f, what);
    fputs("</td>", f);
    pg_bytes_cell(f, before);
    pg_bytes_cell(f, after);
    pg_change_cell(f, (double)before, (double)after);
    fputs("</tr>\n", f);
}

static void memory_card(FILE *f, const xf_optimize_report *r)
{
    fputs("<div class=\"card\"><h2>Memory</h2><table class=\"t\" id=\"memory\"><tr><th></th>"
          "<th>before</th><th>after</th><th>change</th></tr>\n",
          f);
    memory_row(f, "peak activations", r->memory_before.peak_activation_bytes,
               r->memory_after.peak_activation_bytes);
    memory_row(f, "weights", r->memory_before.weight_bytes, r->memory_after.weight_bytes);
    fprintf(f, "<tr><td>nodes</td><td class=\"n\">%d</td><td class=\"n\">%d</td>", r->nodes_before,
            r->nodes_after);
    pg_change_cell(f, r->nodes_before, r->nodes_after);
    fputs("</tr>\n</table><p class=\"note\">Peak activations: the most bytes of inputs and "
          "node outputs alive at once, the nodes run one at a time in the order the model "
          "file lists them, each tensor whole (a runtime that aliases views or reuses "
          "buffers needs less).</p></div>\n",
          f);
}

static void check_card(FILE *f, const xf_optimize_report *r, const xf_optimize_options *o)
{
    fputs("<div class=\"card\"><h2>Checks</h2><table class=\"t\">\n", f);
    if (r->check.max_abs >= 0)
        fprintf(f, "<tr><td>max output error</td><td class=\"n\">%.3g abs, %.3g rel</td>"
                   "<td>tolerance %.3g + %.3g&middot;|ref|</td></tr>\n",
                r->check.max_abs, r->check.max_rel, o->atol, o->rtol);
    else
        fputs("<tr><td>max output error</td><td colspan=\"2\">not checked</td></tr>\n", f);
    for (int i = 0; i < r->n_dims; i++) {
        fputs("<tr><td>symbolic dim ", f);
        xf_audit_html(f, r->dims[i].name);
        if (r->dims[i].fixed) {
            fprintf(f, "</td><td class=\"n\">fixed at %lld</td><td>", (long long)r->dims[i].size[0]);
            xf_audit_html(f, r->dims[i].fixed);
            fputs("</td></tr>\n", f);
        } else {
            fprintf(f, "</td><td class=\"n\">kept</td><td>checked at %lld, %lld, %lld</td></tr>\n",
                    (long long)r->dims[i].size[0], (long long)r->dims[i].size[1],
                    (long long)r->dims[i].size[2]);
        }
    }
    if (r->written.why[0]) {
        fputs("<tr><td>result</td><td colspan=\"2\">the optimised model failed a check (", f);
        xf_audit_html(f, r->written.why);
        fputs("): the input was written instead</td></tr>\n", f);
    }
    fputs("</table></div>\n", f);
}

static xf_status rewrites(FILE *f, const xf_optimize_report *r, pg_pictures *pics,
                          xf_error *err)
{
    fputs("<section id=\"rewrites\"><h2>Rewrites of the model written, and where each came "
          "from</h2>\n",
          f);
    if (r->kept_original) {
        fprintf(f, "<p class=\"note\">The input was written unchanged: the search's %d "
                   "rewrite%s did not pay off%s.</p></section>\n",
                r->search_rewrites, r->search_rewrites == 1 ? "" : "s",
                r->target ? " in the target" : "");
        return XF_OK;
    }
    fputs("<table class=\"t\"><tr><th>source</th><th>count</th><th>rewrite</th><th>picture "
          "(the rule as proved: source left, target right)</th></tr>\n",
          f);
    int counts[PG_PASSES];
    pg_pass_counts(r, counts);
    for (int k = 0; k < PG_PASSES; k++) {
        if (!counts[k]) continue;
        fprintf(f, "<tr class=\"pass\"><td><span class=\"badge pass\">hand pass</span> %s</td>"
                   "<td class=\"n\">%d</td><td colspan=\"2\">",
                pg_pass_names[k], counts[k]);
        static const char *const what[PG_PASSES] = {
            "decomposed layer norms made one LayerNormalization node",
            "the erf form of GELU made one gelu, written back in the form ONNX Runtime fuses",
            "operators computing only the one position a Gather selects",
            "splits whose parts are reshaped and transposed alike: one reshape and transpose "
            "before the split",
            "batch-1 activations computed without their leading unit dim"};
        fputs(what[k], f);
        fputs("</td></tr>\n", f);
    }
    for (int k = 0; k < r->n_distinct; k++) {
        const xf_optimize_applied *a = &r->applied[k];
        int64_t id = a->rule_id < 0 ? -a->rule_id : a->rule_id; /* negative: reversed */
        xf_rule_status status = XF_RULE_PROVED;
        int pic = 0;
        xf_status st = pg_picture(pics, id, &status, &pic, err);
        if (st) return st;
        const char *sname = pic ? xf_rulesdb_status_name(status) : "rule";
        fprintf(f, "<tr class=\"rule\" data-rule=\"%" PRId64 "\"><td><span class=\"badge %s\">%s"
                   "</span> rule %" PRId64 "%s</td><td class=\"n\">%d</td><td class=\"expr\">%s",
                a->rule_id, sname, sname, id, a->rule_id < 0 ? ", right to left" : "", a->count,
                a->backward ? "backwards, at a value: " : "");
        xf_audit_html(f, a->text);
        fputs("</td><td>", f);
        if (pic)
            fprintf(f, "<img class=\"rule\" src=\"img/rule-%" PRId64 ".svg\" alt=\"rule %" PRId64
                       "\">",
                    id, id);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    if (r->n_applied == 0 && counts[0] + counts[1] + counts[2] + counts[3] == 0)
        fputs("<p class=\"note\">No rewrite: the model written differs from the input only by "
              "finishing (folded weight-only nodes, conv biases re-fused).</p>\n",
              f);
    if (pics->why[0]) {
        fputs("<p class=\"note\">Pictures: ", f);
        xf_audit_html(f, pics->why);
        fputs(".</p>\n", f);
    }
    fputs("</section>\n", f);
    return XF_OK;
}

static int by_op(const void *a, const void *b)
{
    const xf_optimize_node_ref *x = a, *y = b;
    int c = strcmp(x->op, y->op);
    return c ? c : strcmp(x->name, y->name);
}

/* The input's nodes the model written lacks, grouped by operator. */
static xf_status where(FILE *f, const xf_optimize_report *r, xf_error *err)
{
    fputs("<section id=\"where\"><h2>Where the model changed</h2>\n", f);
    if (r->kept_original || (r->n_replaced == 0 && r->n_new == 0)) {
        fputs("<p class=\"note\">No node of the input was replaced.</p></section>\n", f);
        return XF_OK;
    }
    fprintf(f, "<p class=\"note\">%d node%s of the input (by name) %s not in the model written; "
               "it has %d node%s the input does not.",
            r->n_replaced, r->n_replaced == 1 ? "" : "s", r->n_replaced == 1 ? "is" : "are",
            r->n_new, r->n_new == 1 ? "" : "s");
    if (r->n_replaced_listed == 0) { /* only nodes added (a rewrite that keeps its input's) */
        fputs("</p></section>\n", f);
        return XF_OK;
    }
    fputs(" The search records which rules it applied, not where: these are the places, named "
          "as in the input.",
          f);
    if (r->n_replaced_listed < r->n_replaced)
        fprintf(f, " The first %d are listed.", r->n_replaced_listed);
    fputs("</p>\n", f);
    int n = r->n_replaced_listed;
    xf_optimize_node_ref *v = xf_malloc(sizeof *v * ((size_t)n + 1));
    if (!v) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory listing the nodes replaced");
    memcpy(v, r->replaced, sizeof *v * (size_t)n);
    qsort(v, (size_t)n, sizeof *v, by_op);
    fputs("<table class=\"t\"><tr><th>operator</th><th>nodes</th><th>names</th></tr>\n", f);
    for (int i = 0; i < n;) {
        int j = i;
        while (j < n && !strcmp(v[j].op, v[i].op)) j++;
        fputs("<tr><td>", f);
        xf_audit_html(f, v[i].op);
        fprintf(f, "</td><td class=\"n\">%d</td><td class=\"expr\">", j - i);
        for (int k = i; k < j; k++) {
            if (k > i) fputs(", ", f);
            xf_audit_html(f, v[k].name);
        }
        fputs("</td></tr>\n", f);
        i = j;
    }
    fputs("</table></section>\n", f);
    xf_free(v);
    return XF_OK;
}

/* The progress charts: best cost against seconds (shown) and against
 * steps (behind the x-axis menu), a line per search. */
static xf_status progress(FILE *f, const xf_optimize_report *r, const char *method,
                          xf_error *err)
{
    fputs("<section id=\"progress\"><h2>The search's progress</h2>\n", f);
    if (r->n_trace == 0) {
        fputs("<p class=\"note\">No progress was recorded.</p></section>\n", f);
        return XF_OK;
    }
    double *buf = xf_malloc(sizeof(double) * 3 * (size_t)r->n_trace);
    if (!buf) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory drawing the progress");
    double *xs = buf, *xn = buf + r->n_trace, *y = buf + 2 * r->n_trace;
    pg_series by_s[2], by_n[2];
    int ns = 0;
    char labels[2][96];
    for (int i = 0; i < r->n_trace;) {
        int j = i;
        while (j < r->n_trace && r->trace[j].search == r->trace[i].search) j++;
        for (int k = i; k < j; k++) {
            xs[k] = r->trace[k].seconds;
            xn[k] = (double)r->trace[k].steps;
            y[k] = r->trace[k].best_ms;
        }
        if (ns < 2) {
            snprintf(labels[ns], sizeof labels[ns], "%s%s", method,
                     r->trace[i].search ? " (scalings kept)" : "");
            by_s[ns] = (pg_series){labels[ns], j - i, xs + i, y + i};
            by_n[ns] = (pg_series){labels[ns], j - i, xn + i, y + i};
            ns++;
        }
        i = j;
    }
    fputs("<p>x axis <select class=\"xaxis\"><option value=\"seconds\">seconds</option>"
          "<option value=\"steps\">steps</option></select> <span class=\"note\">best cost "
          "found so far on the prepared working graph (cost model), sampled about once a "
          "second and at the start and end</span></p>\n",
          f);
    pg_chart(f, "best cost against time", "seconds", "ms", "seconds", 0, by_s, ns);
    pg_chart(f, "best cost against steps", "graphs expanded / environment steps", "ms", "steps",
             1, by_n, ns);
    fputs("</section>\n", f);
    xf_free(buf);
    return XF_OK;
}

static void arbiter(FILE *f, const xf_optimize_report *r)
{
    const xf_arbiter_result *a = &r->arb;
    if (!r->target || a->n == 0) return;
    fprintf(f, "<section id=\"arbiter\"><h2>The arbiter: candidates timed in the target</h2>\n"
               "<p class=\"note\">%d models looked at in %.1f s, cheapest first on the cost "
               "model; each against the input in the same run (ratio: median of the rounds' "
               "ratios, with its 95%% interval).",
            a->n, a->seconds);
    if (a->refused[0]) {
        fputs(" Refused: ", f);
        xf_audit_html(f, a->refused);
    }
    fputs("</p>\n<table class=\"t\"><tr><th>model</th><th>cost ms</th><th>nodes</th>"
          "<th>ratio</th><th>95% interval</th><th>verdict</th></tr>\n",
          f);
    for (int i = 0; i < a->n; i++) {
        const xf_arbiter_entry *e = &a->e[i];
        char name[64];
        xf_arbiter_entry_name(e, name, sizeof name);
        int slower = e->verdict == XF_ARBITER_TIMED && xf_target_verdict(&e->t, &e->self) > 0;
        fprintf(f, "<tr%s><td>%s</td><td class=\"n\">%.4f</td><td class=\"n\">%d</td>",
                i == a->chosen ? " style=\"font-weight:600\"" : "", name, e->cost_ms, e->n_nodes);
        if (e->t.runs > 0)
            fprintf(f, "<td class=\"n\">%.3f</td><td class=\"n\">[%.3f, %.3f]</td>", e->t.ratio,
                    e->t.lo, e->t.hi);
        else
            fputs("<td class=\"n\">-</td><td class=\"n\">-</td>", f);
        fputs("<td>", f);
        xf_audit_html(f, slower ? "slower beyond the noise" : xf_optimize_verdict_name(e->verdict));
        if (e->why[0]) {
            fputs(": ", f);
            xf_audit_html(f, e->why);
        }
        fputs("</td></tr>\n", f);
    }
    fputs("</table></section>\n", f);
}

static void write_page(FILE *f, const xf_pages_run *run, pg_pictures *pics, xf_status *st,
                       xf_error *err)
{
    const xf_optimize_report *r = run->r;
    const char *method = run->method ? run->method : xf_pages_method(run->o);
    char sub[8192];
    snprintf(sub, sizeof sub, "%s · %s · rules %s%s%s · %.1f s", run->model, method,
             run->o->rules ? run->o->rules : "?", run->output ? " · written " : "",
             run->output ? run->output : "", r->seconds);
    pg_head(f, "rlflow optimisation", sub);
    fputs("<div class=\"grid\" id=\"summary\">\n", f);
    latency_card(f, r);
    memory_card(f, r);
    check_card(f, r, run->o);
    fputs("</div>\n", f);
    *st = rewrites(f, r, pics, err);
    if (!*st) *st = where(f, r, err);
    if (!*st) *st = progress(f, r, method, err);
    arbiter(f, r);
    pg_foot(f);
}

xf_status xf_pages_optimize(const char *dir, const xf_pages_run *run, xf_error *err)
{
    char img[4200], page[4200];
    snprintf(img, sizeof img, "%s/img", dir);
    snprintf(page, sizeof page, "%s/index.html", dir);
    xf_status st = pg_make_dir(dir, err);
    if (st) return st;
    pg_pictures pics;
    if ((st = pg_pictures_open(&pics, img, run->o->rules, err))) return st;
    xf_outfile out;
    if (!(st = xf_outfile_open(&out, page, err))) {
        write_page(out.f, run, &pics, &st, err);
        if (st) xf_outfile_abort(&out);
        else st = xf_outfile_commit(&out, err);
    }
    pg_pictures_close(&pics);
    return st;
}
