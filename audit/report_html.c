/*
 * report_html.c — writes the report page: the counts by status, size and
 * operator as static tables with bars (readable without JavaScript; a click
 * on a row filters the rule table), the filter controls, an empty rule table
 * and the data of every rule inline as a JSON literal in a <script> element
 * (file:// pages cannot fetch files), followed by the script that renders
 * and filters the table (report_assets.c). The page is written through
 * xf_outfile: a failed write leaves the previous page as it was.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "audit_internal.h"

void xf_audit_html(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

static void count_table(FILE *f, const char *title, const char *filter,
                        const xf_rulesdb_count *rows, int n)
{
    int64_t max = 1;
    for (int i = 0; i < n; i++)
        if (rows[i].n > max) max = rows[i].n;
    fprintf(f, "<div class=\"card\"><h2>%s</h2><table class=\"counts\">\n", title);
    if (n == 0) fputs("<tr><td>(none)</td></tr>\n", f);
    for (int i = 0; i < n; i++) {
        fprintf(f, "<tr data-filter=\"%s\" data-value=\"", filter);
        xf_audit_html(f, rows[i].key);
        fputs("\"><td>", f);
        xf_audit_html(f, rows[i].key);
        fprintf(f, "</td><td class=\"n\">%" PRId64 "</td><td class=\"bar\"><span style=\"width:%d%%\">"
                   "</span></td></tr>\n",
                rows[i].n, (int)(100 * rows[i].n / max));
    }
    fputs("</table></div>\n", f);
}

static void write_data(FILE *f, const report *rep)
{
    fputs("<script>window.XFERDB_DATA = {\"db\": ", f);
    audit_json_str_html(f, rep->db_path);
    fprintf(f, ", \"pictures\": %" PRId64 ", \"rules\": [\n", rep->pictures);
    for (int64_t i = 0; i < rep->n_rules; i++) {
        const report_rule *r = &rep->rules[i];
        fprintf(f, "[%" PRId64 ",\"%s\",%d,%d,%d,", r->id, xf_rulesdb_status_name(r->status),
                r->size, r->src_ops, r->dst_ops);
        audit_json_str_html(f, r->ops);
        fputc(',', f);
        audit_json_str_html(f, r->src);
        fputc(',', f);
        audit_json_str_html(f, r->dst);
        fprintf(f, ",%d,", r->picture);
        audit_json_str_html(f, r->listing);
        fputs(i + 1 < rep->n_rules ? "],\n" : "]\n", f);
    }
    fputs("]};</script>\n", f);
}

static void write_note(FILE *f, const report *rep)
{
    fputs("<p class=\"note\">", f);
    if (!rep->have_dot)
        fputs("Pictures: graphviz's <code>dot</code> was not found when this report was written "
              "(Debian package <code>graphviz</code>), so each rule is shown in text form.",
              f);
    else if (rep->pictures < rep->n_rules)
        fprintf(f, "Pictures: the first %" PRId64 " rules (by id) are drawn; the other %" PRId64
                   " are shown in text form (<code>xferdb report --pictures N</code> draws more).",
                rep->pictures, rep->n_rules - rep->pictures);
    else
        fputs("Every rule is drawn; click a row to see its picture and text form.", f);
    fputs("</p>\n", f);
}

xf_status audit_report_write_html(const report *rep, const char *path, xf_error *err)
{
    xf_outfile out;
    xf_status st = xf_outfile_open(&out, path, err);
    if (st != XF_OK) return st;
    FILE *f = out.f;
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>rlflow rules: ",
          f);
    xf_audit_html(f, rep->db_path);
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", audit_report_css);
    fputs("<header><h1>rlflow rules</h1><p class=\"sub\"><code>", f);
    xf_audit_html(f, rep->db_path);
    fprintf(f, "</code> &middot; %" PRId64 " rules &middot; written by <code>xferdb report</code>"
               "</p></header>\n",
            rep->n_rules);
    fputs("<section id=\"summary\">\n", f);
    count_table(f, "By status", "status", rep->by[0], rep->n_by[0]);
    count_table(f, "By size (operators, larger side)", "size", rep->by[1], rep->n_by[1]);
    count_table(f, "By operator (rules using it)", "op", rep->by[2], rep->n_by[2]);
    fputs("</section>\n", f);
    write_note(f, rep);
    fputs("<noscript><p class=\"note\">The rule table needs JavaScript.</p></noscript>\n"
          "<section id=\"controls\">\n"
          "<input id=\"q\" type=\"search\" placeholder=\"search rules (text, id, operator)\" "
          "autocomplete=\"off\">\n"
          "<label>status <select id=\"status\"><option value=\"\">all</option></select></label>\n"
          "<label>operator <select id=\"op\"><option value=\"\">all</option></select></label>\n"
          "<label>size <select id=\"size\"><option value=\"\">all</option></select></label>\n"
          "<button id=\"clear\" type=\"button\">clear</button>\n"
          "<span id=\"shown\"></span>\n</section>\n"
          "<table id=\"rules\"><thead><tr><th>id</th><th>status</th><th>ops</th><th>source</th>"
          "<th></th><th>target</th></tr></thead>\n<tbody id=\"rows\"></tbody></table>\n"
          "<p><button id=\"more\" type=\"button\" hidden>show more</button></p>\n",
          f);
    write_data(f, rep);
    fprintf(f, "<script>\n%s</script>\n</body></html>\n", audit_report_js);
    return xf_outfile_commit(&out, err);
}
