/*
 * html.c — the parts both pages share: the head (the style sheet
 * of `xferdb report` and this module's few additions) and the foot (the
 * script: error marker, the charts' axis switch, the ready marker), cells
 * for bytes and changes, the SVG line chart, the hand passes as sources,
 * and the page's directory.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit.h"
#include "pages_internal.h"

static const char css[] =
    ".grid{display:flex;gap:16px;flex-wrap:wrap;align-items:flex-start;margin:8px 0}\n"
    ".grid .card{max-height:none}\n"
    "section{margin:18px 0}\nsection h2{font-size:16px;margin:0 0 6px}\n"
    "table.t{border-collapse:collapse;background:#fff}\n"
    "table.t th{text-align:left;font-weight:600;border-bottom:2px solid #ccc;padding:3px 8px}\n"
    "table.t td{border-bottom:1px solid #eee;padding:3px 8px;vertical-align:top}\n"
    "table.t td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    ".better{color:#2e7d07}.worse{color:#b00}\n"
    ".badge.pass{background:#75507b}.badge.derived{background:#3465a4}\n"
    "img.rule{max-height:170px;max-width:420px;display:block}\n"
    "svg.chart{background:#fff;border:1px solid #ddd;border-radius:6px}\n"
    "svg.chart text{font:11px system-ui,sans-serif;fill:#444}\n"
    "td.heat{text-align:center;min-width:34px;font-variant-numeric:tabular-nums}\n"
    "th.rot{writing-mode:vertical-rl;transform:rotate(180deg);font-weight:400;"
    "max-height:160px;font-size:11px}\n";

static const char js[] =
    "window.addEventListener('error', function (e) {\n"
    "  var d = document.createElement('div');\n"
    "  d.id = 'rlflow-error'; d.className = 'error';\n"
    "  d.textContent = 'page script error: ' + e.message;\n"
    "  document.body.insertBefore(d, document.body.firstChild);\n"
    "});\n"
    "(function () {\n"
    "  'use strict';\n"
    "  var sw = document.querySelectorAll('select.xaxis');\n"
    "  Array.prototype.forEach.call(sw, function (sel) {\n"
    "    sel.addEventListener('change', function () {\n"
    "      var charts = document.querySelectorAll('svg.chart[data-x]');\n"
    "      Array.prototype.forEach.call(charts, function (c) {\n"
    "        c.style.display = c.getAttribute('data-x') === sel.value ? '' : 'none';\n"
    "      });\n"
    "    });\n"
    "  });\n"
    "  var ready = document.createElement('div');\n"
    "  ready.id = 'rlflow-ready';\n"
    "  ready.hidden = true;\n"
    "  ready.setAttribute('data-charts', String(document.querySelectorAll('svg.chart').length));\n"
    "  document.body.appendChild(ready);\n"
    "})();\n";

void pg_head(FILE *f, const char *title, const char *sub)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", f);
    xf_audit_html(f, title);
    fprintf(f, "</title>\n<style>\n%s%s</style>\n</head>\n<body>\n<header><h1>", xf_audit_page_css(),
            css);
    xf_audit_html(f, title);
    fputs("</h1><p class=\"sub\">", f);
    xf_audit_html(f, sub);
    fputs("</p></header>\n", f);
}

void pg_foot(FILE *f)
{
    fprintf(f, "<script>\n%s</script>\n</body></html>\n", js);
}

void pg_bytes_cell(FILE *f, uint64_t bytes)
{
    char b[32];
    fprintf(f, "<td class=\"n\" data-bytes=\"%" PRIu64 "\">%s</td>", bytes,
            xf_bytes_str((double)bytes, b, sizeof b));
}

void pg_change_cell(FILE *f, double a, double b)
{
    if (!(a > 0)) {
        fputs("<td class=\"n\">-</td>", f);
        return;
    }
    double c = 100.0 * (b - a) / a;
    fprintf(f, "<td class=\"n %s\">%+.2f%%</td>", c < -0.005 ? "better" : c > 0.005 ? "worse" : "",
            c);
}

/* ----------------------------------------------------------------- chart */

#define CW 560
#define CH 230
#define ML 64 /* margins: left, right, top, bottom */
#define MR 150
#define MT 24
#define MB 36

static const char *const colors[] = {"#3465a4", "#cc0000", "#4e9a06", "#c17d11",
                                     "#75507b", "#06989a", "#555753", "#ce5c00"};

/* A tick label: 3 significant digits. */
static void tick(FILE *f, double x, double y, const char *anchor, double v)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%.3g</text>\n", x, y, anchor, v);
}

void pg_chart(FILE *f, const char *title, const char *x_label, const char *y_label,
              const char *data_x, int hidden, const pg_series *s, int n)
{
    double x0 = 0, x1 = 0, y0 = INFINITY, y1 = -INFINITY;
    for (int k = 0; k < n; k++)
        for (int i = 0; i < s[k].n; i++) {
            if (s[k].x[i] > x1) x1 = s[k].x[i];
            if (s[k].y[i] < y0) y0 = s[k].y[i];
            if (s[k].y[i] > y1) y1 = s[k].y[i];
        }
    if (!(y0 <= y1)) { /* no point */
        y0 = 0;
        y1 = 1;
    }
    if (y1 - y0 < 1e-9 * (fabs(y1) + 1e-12)) { /* flat: a band around it */
        y0 -= 0.01 * fabs(y0) + 1e-6;
        y1 += 0.01 * fabs(y1) + 1e-6;
    }
    if (x1 <= x0) x1 = x0 + 1;
    double pw = CW - ML - MR, ph = CH - MT - MB;
    fprintf(f, "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
               "height=\"%d\" ", CW, CH);
    if (data_x) fprintf(f, "data-x=\"%s\" ", data_x);
    if (hidden) fputs("style=\"display:none\" ", f);
    fprintf(f, "viewBox=\"0 0 %d %d\" role=\"img\"><title>", CW, CH);
    xf_audit_html(f, title);
    fprintf(f, "</title>\n<text x=\"%d\" y=\"15\" style=\"font-weight:600\">", ML);
    xf_audit_html(f, title);
    fputs("</text>\n", f);
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" "
               "stroke=\"#ccc\"/>\n", ML, MT, pw, ph);
    tick(f, ML - 4, MT + ph, "end", y0);
    tick(f, ML - 4, MT + 10, "end", y1);
    tick(f, ML, MT + ph + 14, "start", x0);
    tick(f, ML + pw, MT + ph + 14, "end", x1);
    fprintf(f, "<text x=\"%.0f\" y=\"%d\" text-anchor=\"middle\">", ML + pw / 2, CH - 6);
    xf_audit_html(f, x_label);
    fprintf(f, "</text>\n<text x=\"12\" y=\"%.0f\" text-anchor=\"middle\" "
               "transform=\"rotate(-90 12 %.0f)\">", MT + ph / 2, MT + ph / 2);
    xf_audit_html(f, y_label);
    fputs("</text>\n", f);
    for (int k = 0; k < n; k++) {
        const char *c = colors[k % (int)(sizeof colors / sizeof *colors)];
        if (s[k].n > 0) {
            fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"", c);
            double py = 0;
            for (int i = 0; i < s[k].n; i++) {
                double px = ML + pw * (s[k].x[i] - x0) / (x1 - x0);
                double yy = MT + ph * (1 - (s[k].y[i] - y0) / (y1 - y0));
                if (i > 0) fprintf(f, "%.1f,%.1f ", px, py); /* the staircase */
                fprintf(f, "%.1f,%.1f ", px, yy);
                py = yy;
            }
            fputs("\"/>\n", f);
        }
        int ly = MT + 6 + 16 * k;
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"4\" fill=\"%s\"/>"
                   "<text x=\"%d\" y=\"%d\">", CW - MR + 10, ly, c, CW - MR + 26, ly + 5);
        xf_audit_html(f, s[k].label);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n", f);
}

/* ---------------------------------------------------------- hand passes */

const char *const pg_pass_names[PG_PASSES] = {"layer-norm fusion", "GELU fusion", "narrowing",
                                              "split layout", "unbatched layout"};

void pg_pass_counts(const xf_optimize_report *r, int counts[PG_PASSES])
{
    const xf_prepare_stats *ps = &r->written_prep;
    int kept = r->kept_original;
    counts[0] = kept ? 0 : ps->fused_layernorms;
    counts[1] = kept ? 0 : ps->fused_gelus;
    counts[2] = kept ? 0 : ps->narrowed_ops;
    counts[3] = kept ? 0 : ps->merged_split_layouts;
    counts[4] = !kept && r->unbatched;
}

xf_status pg_make_dir(const char *dir, xf_error *err)
{
    if (mkdir(dir, 0777) == 0) return XF_OK;
    struct stat st;
    if (errno == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) return XF_OK;
    return XF_FAIL(err, XF_ERR_IO, "cannot create directory %s: %s", dir,
                   errno == EEXIST ? "a file of that name exists" : strerror(errno));
}

xf_status xf_pages_probe(const char *dir, xf_error *err)
{
    xf_status st = pg_make_dir(dir, err);
    if (st) return st;
    if (access(dir, W_OK | X_OK) != 0)
        return XF_FAIL(err, XF_ERR_IO, "cannot write into %s: %s", dir, strerror(errno));
    return XF_OK;
}
