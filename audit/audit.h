/*
 * audit.h — the audit views of a rules database, the library behind the
 * xferdb tool (docs/xferdb.md): counts by status, size and operator, rule
 * lists under a filter, layout-operator families, one rule in full with its
 * verdict, a derived rule's chain replayed, exports of one rule (graphviz,
 * PNG, the JSON interchange document, two ONNX models), the end-to-end check
 * of the exported ONNX pairs, the diff of two databases modulo input
 * renaming, and the static HTML report.
 *
 * Each view prints its output to `out` (stdout in the tool; a test's file
 * in process) and returns an xf_status: not XF_OK when it could not do what
 * was asked, with *err saying why (XF_ERR_INVALID: a bad request — a rule
 * id that is not a positive integer, an unknown operator in a filter, a
 * missing or unknown export format, report without a directory; other
 * codes: reading the database, writing a file or running graphviz failed).
 * A view that ran can still have failed on some rules: *failed counts them
 * (a rule that does not exist or does not load, a broken rule in stats, a
 * check-export rule that did not pass, a chain that does not replay, the
 * rules diff finds in one database only), and each one that needs words is
 * described through o->diag. Nothing here prints to stderr; xferdb prints
 * the messages and chooses its exit status from the status and *failed.
 *
 * Sits above derive/ (explain replays derivations) and onnx/ (exports):
 * audit ─► derive, verify, onnx, rulesdb.
 */
#ifndef XF_AUDIT_H
#define XF_AUDIT_H

#include <stdio.h>

#include "rulesdb/rulesdb.h"

#define XF_AUDIT_MAX_OPS 32
/* Pictures `report` renders unless --pictures says otherwise. */
#define XF_AUDIT_DEFAULT_PICTURES 2000

/* Receives a message that does not stop a view: a rule that does not load
 * (the rules after it are still shown), broken rules in stats, a picture
 * that was not drawn. */
typedef void (*xf_audit_diag_fn)(void *user, const xf_error *msg);

/* What a view is asked for. xferdb starts from zero with filter.any_status 1,
 * pictures XF_AUDIT_DEFAULT_PICTURES, trials 3 and seed 1. */
typedef struct xf_audit_options {
    const char *db;     /* diff: the first database (the other views get it open) */
    const char *id;     /* show, export */
    const char *db2;    /* diff: the second database */
    const char *format; /* export: dot, png, json or onnx */
    const char *out;    /* export: output path; report: directory */
    int64_t pictures;   /* report: rules drawn */
    int64_t trials;     /* check-export: random input sets per rule */
    int64_t seed;       /* check-export: seed of the first input set */
    xf_rulesdb_filter filter;
    const char *ops[XF_AUDIT_MAX_OPS]; /* storage for filter.ops (xferdb's --ops) */
    char ops_buf[512];
    xf_audit_diag_fn diag; /* NULL: such messages are dropped */
    void *diag_user;
} xf_audit_options;

/* What every view but diff is: the views are declared with this type, and
 * a caller can keep them in a table. */
typedef xf_status xf_audit_view(FILE *out, xf_rulesdb *db, const xf_audit_options *o,
                                int64_t *failed, xf_error *err);
xf_audit_view xf_audit_stats, xf_audit_list, xf_audit_families, xf_audit_show, xf_audit_explain,
    xf_audit_export, xf_audit_check_export, xf_audit_report;
/* The view of a command name ("stats", "list", "families", "show",
 * "explain", "export", "check-export", "report"); NULL for another name, and
 * with db_only for the views that read or write files besides the database
 * (export, check-export, report). diff is not a view: it opens both
 * databases itself. */
xf_audit_view *xf_audit_find_view(const char *name, int db_only);
/* Opens both databases itself (o->db and o->db2); any error names the file. */
xf_status xf_audit_diff(FILE *out, const xf_audit_options *o, int64_t *failed, xf_error *err);

/* ------------------------------------------------------ export_*.c */

/* The rule as one JSON document (docs/xferdb.md, format version 1). */
#define XF_AUDIT_JSON_VERSION 1
void xf_audit_write_json(FILE *f, const xf_rulesdb_rule_info *info, const xf_rule *r);
/* The rule as a graphviz digraph: source and target as two clusters, each
 * output marked and joined to the output that replaces it. */
void xf_audit_write_dot(FILE *f, const xf_rulesdb_rule_info *info, const xf_rule *r);
/* A copy of one rule side ready for ONNX export (xf_onnx_save): graph
 * outputs named out0, out1, ... on both sides, so the two models of a rule
 * have the same interface; an output that is a graph input, or repeats an
 * earlier output, goes through an Identity node (ONNX output names are
 * unique and distinct from inputs). `out` is initialised here. */
xf_status xf_audit_onnx_side(const xf_graph *side, const char *name, xf_graph *out, xf_error *err);

/* ------------------------------------------------------ draw_rule.c */

/* 1 when rules can be drawn (graphviz's `dot` is on PATH). */
int xf_audit_can_draw(void);
/* Draws rule `id` of db as the SVG picture `xferdb report` shows, into
 * `path` (written whole or not at all); *status (NULL: not wanted) gets
 * the rule's status. XF_ERR_UNSUPPORTED naming the Debian package without
 * graphviz; another error (naming the rule) for a rule db does not have
 * or cannot load. */
xf_status xf_audit_draw_rule(xf_rulesdb *db, int64_t id, const char *path,
                             xf_rule_status *status, xf_error *err);
/* The style sheet of the report pages (CSS text), for other pages of
 * rlflow to look alike. */
const char *xf_audit_page_css(void);
/* s as HTML text: <, >, & and " escaped (NULL: nothing). */
void xf_audit_html(FILE *f, const char *s);

#endif
