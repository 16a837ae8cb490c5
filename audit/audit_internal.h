/*
 * audit_internal.h — what the audit views share inside audit/: rule loading and
 * iteration, node labels and value names, the infix text of a side, the
 * JSON and graphviz helpers, and what `report` collects (cmd_report.c) and
 * hands to the page writer (report_html.c): one record per rule, the counts
 * by status, size and operator, and how many rules were drawn.
 */
#ifndef XF_AUDIT_AUDIT_INTERNAL_H
#define XF_AUDIT_AUDIT_INTERNAL_H

#include "audit/audit.h"

/* The verdict part of `show`: status and time, the unsat-core axioms with
 * their descriptions, the decoded counterexample and the outputs both sides
 * compute on it (show_verdict.c). */
void audit_show_verdict(FILE *out, const xf_rulesdb_rule_info *info, const xf_rule *r);
/* A derived rule's chain as stored, one line per step (cmd_explain.c). */
void audit_show_derivation(FILE *out, xf_rulesdb *db, const xf_rulesdb_rule_info *info);

/* Infix text of g (xf_graph_format) in a malloc'd string; NULL with *err
 * set on failure. */
char *audit_format(const xf_graph *g, xf_error *err);

/* Hands `msg` to o->diag when there is one. */
void audit_diag(const xf_audit_options *o, const xf_error *msg);

/* ------------------------------------------------------------ rule.c */

/* Parses a rule id argument; XF_ERR_INVALID when it is not a positive
 * integer. */
xf_status audit_parse_id(const char *s, int64_t *id, xf_error *err);
/* Calls fn(user, db, info) for every rule the filter selects, in id order.
 * fn returns 0, or 1 when its rule failed (after handing the message to
 * audit_diag: a bad rule does not hide the ones after it); *failed counts
 * those. Not XF_OK when the filter is rejected (XF_ERR_INVALID: an unknown
 * operator name) or reading fails. */
xf_status audit_each_rule(xf_rulesdb *db, const xf_rulesdb_filter *filter,
                          int (*fn)(void *user, xf_rulesdb *db, const xf_rulesdb_rule_info *info),
                          void *user, int64_t *failed, xf_error *err);
/* Loads everything about rule `id`: info (initialised here) and the rule.
 * On failure (no such rule, a rule that does not load) both are left empty
 * (free them either way). */
xf_status audit_load(xf_rulesdb *db, int64_t id, xf_rulesdb_rule_info *info, xf_rule *r,
                     xf_error *err);
/* The operator of `node` with the parameters that matter, as the infix form
 * prints it ("conv2d[3x3,s1,same,relu]", "split[axis=1,sizes=4/4]"). */
void audit_node_label(const xf_graph *g, int node, char *buf, size_t n);
/* The name a value has in exports: the input's name for graph inputs,
 * "<prefix><k>" for the k-th node output in topological order. `order` is
 * xf_graph_topo_order's result; buf gets the name. */
void audit_value_name(const xf_graph *g, const int *order, char prefix, int v, char *buf,
                       size_t n);

/* --------------------------------------------------------- json_out.c */

/* A JSON string literal (quotes, escapes) of s; "null" for NULL. */
void audit_json_str(FILE *f, const char *s);
/* A JSON number; non-finite values as the strings "NaN", "Infinity",
 * "-Infinity" (JSON has no literal for them). %.9g keeps float32 exact. */
void audit_json_num(FILE *f, double v);
/* [d0, d1, ...] of a shape. */
void audit_json_shape(FILE *f, const xf_shape *s);
/* Like audit_json_str, also escaping '<', '>' and '&' so the literal can
 * sit inside an HTML <script> element. */
void audit_json_str_html(FILE *f, const char *s);

/* ------------------------------------------------------ graphviz.c */

/* 1 when graphviz's `dot` is on PATH. */
int audit_have_dot(void);
/* XF_ERR_UNSUPPORTED with the message for a missing `dot`, naming the
 * Debian package. */
xf_status audit_no_dot(xf_error *err);
/* Runs `dot -T<fmt>` reading the graph from `in` (a file stream at its
 * start) and writing the picture to `out` (flushed first). */
xf_status audit_run_dot(const char *fmt, FILE *in, FILE *out, xf_error *err);
/* Draws each files[i] (a .dot file) as files[i].svg, one dot process per
 * file, up to `jobs` at a time. */
xf_status audit_render_svgs(char **files, int n, int jobs, xf_error *err);


/* ------------------------------------------------------ report */

typedef struct report_rule {
    int64_t id;
    xf_rule_status status;
    int size, src_ops, dst_ops;
    char *ops;     /* operators used on either side, space-separated */
    char *src;     /* infix source */
    char *dst;     /* infix target */
    char *listing; /* text form: one line per node, both sides */
    int picture;   /* 1: img/rule-<id>.svg exists */
} report_rule;

typedef struct report {
    const char *db_path;
    report_rule *rules;
    int64_t n_rules, cap;
    xf_rulesdb_count *by[3]; /* status, size, operator */
    int n_by[3];
    int64_t pictures;  /* rules drawn */
    int64_t max_pictures;
    int have_dot;      /* 0: no pictures, text forms only */
} report;

/* Writes DIR's index.html. */
xf_status audit_report_write_html(const report *rep, const char *path, xf_error *err);

/* The page's style sheet and script (report_assets.c). */
extern const char audit_report_css[];
extern const char audit_report_js[];

#endif
