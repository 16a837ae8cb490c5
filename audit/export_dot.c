/*
 * export_dot.c — `xferdb export --format dot` (and the pictures of png and
 * of the HTML report): the rule as a graphviz digraph. Source and target are
 * two clusters side by side; graph inputs are ellipses with their shapes,
 * operators are boxes labelled as in the infix form, and each mapped output
 * is a double octagon, joined by a dashed "replaced by" edge to the target
 * output that replaces it. Edges into an operator with several inputs carry
 * the input's position at their head; edges out of a multi-output operator
 * carry the output's index at their tail.
 */
#include <inttypes.h>
#include <stdlib.h>

#include "audit_impl.h"

/* A DOT string literal. */
static void dot_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fputc('\\', f);
        if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

static void shape_text(const xf_shape *s, char *buf, size_t n)
{
    xf_strbuf b = {buf, n, 0, 0};
    if (s->rank == 0) xf_strbuf_printf(&b, "scalar");
    for (int d = 0; d < s->rank; d++) xf_strbuf_printf(&b, "%s%lld", d ? "x" : "", (long long)s->dims[d]);
}

/* The DOT id of the vertex that produces value v on side `c`. */
static void vertex_of(const xf_graph *g, char c, int v, char *buf, size_t n)
{
    const xf_value *val = &g->values[v];
    if (val->kind == XF_VALUE_NODE) {
        snprintf(buf, n, "%c_n%d", c, val->producer);
        return;
    }
    for (int i = 0; i < g->n_inputs; i++)
        if (g->inputs[i] == v) {
            snprintf(buf, n, "%c_i%d", c, i);
            return;
        }
    snprintf(buf, n, "%c_c%d", c, v);
}

static void write_cluster(FILE *f, const xf_graph *g, char c, const char *title, const char *color)
{
    fprintf(f, "  subgraph cluster_%c {\n    label=\"%s\"; style=rounded; color=\"%s\";\n", c,
            title, color);
    char shp[96], label[300], a[32], b[32];
    for (int i = 0; i < g->n_inputs; i++) {
        const xf_value *v = &g->values[g->inputs[i]];
        shape_text(&v->shape, shp, sizeof shp);
        snprintf(label, sizeof label, "%s\n%s", v->name ? v->name : "?", shp);
        fprintf(f, "    %c_i%d [shape=ellipse, label=", c, i);
        dot_str(f, label);
        fputs("];\n", f);
    }
    for (int k = 0; k < g->n_nodes; k++) {
        const xf_node *nd = &g->nodes[k];
        audit_node_label(g, k, label, sizeof label);
        fprintf(f, "    %c_n%d [shape=box, style=\"rounded,filled\", fillcolor=\"%s22\", label=", c,
                k, color);
        dot_str(f, label);
        fputs("];\n", f);
        for (int j = 0; j < nd->n_inputs; j++) {
            int v = nd->inputs[j];
            if (v < 0) continue;
            vertex_of(g, c, v, a, sizeof a);
            const xf_value *val = &g->values[v];
            fprintf(f, "    %s -> %c_n%d", a, c, k);
            int tail = val->kind == XF_VALUE_NODE && g->nodes[val->producer].n_outputs > 1;
            if (tail) fprintf(f, " [taillabel=\"%d\"", val->producer_output);
            if (nd->n_inputs > 1) fprintf(f, "%sheadlabel=\"%d\"", tail ? ", " : " [", j);
            if (tail || nd->n_inputs > 1) fputs(", fontcolor=\"#777777\"]", f);
            fputs(";\n", f);
        }
    }
    for (int o = 0; o < g->n_outputs; o++) {
        const xf_value *val = &g->values[g->outputs[o]];
        shape_text(&val->shape, shp, sizeof shp);
        fprintf(f, "    %c_o%d [shape=doubleoctagon, label=\"out %d\\n%s\"];\n", c, o, o, shp);
        vertex_of(g, c, g->outputs[o], b, sizeof b);
        fprintf(f, "    %s -> %c_o%d", b, c, o);
        if (val->kind == XF_VALUE_NODE && g->nodes[val->producer].n_outputs > 1)
            fprintf(f, " [taillabel=\"%d\"]", val->producer_output);
        fputs(";\n", f);
    }
    fputs("  }\n", f);
}

void xf_audit_write_dot(FILE *f, const xf_rulesdb_rule_info *info, const xf_rule *r)
{
    fprintf(f, "digraph rule%" PRId64 " {\n", info->id);
    fprintf(f, "  graph [fontname=\"Helvetica\", labelloc=t, label=\"rule %" PRId64 " (%s)\"];\n",
            info->id, xf_rulesdb_status_name(info->status));
    fputs("  node [fontname=\"Helvetica\", fontsize=11];\n  edge [fontname=\"Helvetica\", fontsize=9];\n", f);
    write_cluster(f, &r->src, 's', "source", "#3465a4");
    write_cluster(f, &r->dst, 't', "target", "#4e9a06");
    for (int o = 0; o < r->src.n_outputs && o < r->dst.n_outputs; o++)
        fprintf(f, "  s_o%d -> t_o%d [style=dashed, constraint=false, color=\"#75507b\", "
                   "label=\"replaced by\"];\n",
                o, o);
    fputs("}\n", f);
}
