/*
 * audit.h — the audit views of a rules database, the library behind the
 * xferdb tool (docs/xferdb.md): counts by status, size and operator, rule
 * lists under a filter, layout-operator families, one rule in full with its
 * verdict, a derived rule's chain replayed, exports of one rule (graphviz,
 * PNG, the JSON interchange document, two ONNX models), the end-to-end check
 * of the exported ONNX pairs, the diff of two databases modulo input
 * renaming, and the static HTML report.
 *
 * Each view prints to `out` (stdout in the tool; a tests' file in process)
 * and returns what the tool exits with: 0 ok, 1 the request failed on a
 * readable database (no such rule, a stored rule that does not load, a
 * check that did not pass, diff found differences), 2 bad usage (an unknown
 * operator in a filter, a bad format) or an unreadable database, after
 * printing the error as one line "xferdb: ..." on stderr.
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
} xf_audit_options;

int xf_audit_stats(FILE *out, xf_rulesdb *db, const xf_audit_options *o);
int xf_audit_list(FILE *out, xf_rulesdb *db, const xf_audit_options *o);
int xf_audit_families(FILE *out, xf_rulesdb *db, const xf_audit_options *o);
int xf_audit_show(FILE *out, xf_rulesdb *db, const xf_audit_options *o);
int xf_audit_explain(FILE *out, xf_rulesdb *db, const xf_audit_options *o);
int xf_audit_export(FILE *out, xf_rulesdb *db, const xf_audit_options *o);
int xf_audit_check_export(FILE *out, xf_rulesdb *db, const xf_audit_options *o);
int xf_audit_report(FILE *out, xf_rulesdb *db, const xf_audit_options *o);
/* Opens both databases itself (o->db and o->db2). */
int xf_audit_diff(FILE *out, const xf_audit_options *o);

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

#endif
