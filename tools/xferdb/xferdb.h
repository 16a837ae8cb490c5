/*
 * xferdb.h — what the xferdb subcommands share: the parsed command line,
 * one function per subcommand, and the helpers several of them use (rule
 * loading, node labels, JSON and graphviz writers, the ONNX form of a rule
 * side, the canonical key of a rule modulo input renaming). Each subcommand
 * returns the process exit status (0 ok, 1 the request failed on a readable
 * database, 2 bad usage or an unreadable database) after printing any
 * error as one line on stderr.
 */
#ifndef XF_TOOLS_XFERDB_H
#define XF_TOOLS_XFERDB_H

#include <stdio.h>

#include "rulesdb/rulesdb.h"

#define XFERDB_MAX_OPS 32
/* Pictures `report` renders unless --pictures says otherwise. */
#define XFERDB_DEFAULT_PICTURES 2000

typedef struct xferdb_options {
    const char *cmd, *db;
    const char *id;     /* show, export */
    const char *db2;    /* diff: the second database */
    const char *format; /* export: dot, png, json or onnx */
    const char *out;    /* export: output path; report: directory */
    int64_t pictures;   /* report: rules drawn */
    int64_t trials;     /* check-export: random input sets per rule */
    int64_t seed;       /* check-export: seed of the first input set */
    xf_rulesdb_filter filter;
    const char *ops[XFERDB_MAX_OPS];
    char ops_buf[512];
} xferdb_options;

int xferdb_stats(xf_rulesdb *db, const xferdb_options *o);
int xferdb_list(xf_rulesdb *db, const xferdb_options *o);
int xferdb_families(xf_rulesdb *db, const xferdb_options *o);
int xferdb_show(xf_rulesdb *db, const xferdb_options *o);
int xferdb_explain(xf_rulesdb *db, const xferdb_options *o);
int xferdb_export(xf_rulesdb *db, const xferdb_options *o);
int xferdb_check_export(xf_rulesdb *db, const xferdb_options *o);
int xferdb_report(xf_rulesdb *db, const xferdb_options *o);
/* Opens both databases itself (o->db and o->db2). */
int xferdb_diff(const xferdb_options *o);

/* The verdict part of `show`: status and time, the unsat-core axioms with
 * their descriptions, the decoded counterexample and the outputs both sides
 * compute on it (show_verdict.c). */
void xferdb_show_verdict(const xf_rulesdb_rule_info *info, const xf_rule *r);
/* A derived rule's chain as stored, one line per step (cmd_explain.c). */
void xferdb_show_derivation(xf_rulesdb *db, const xf_rulesdb_rule_info *info);

/* Infix text of g (xf_graph_format) in a malloc'd string; NULL with *err
 * set on failure. */
char *xferdb_format(const xf_graph *g, xf_error *err);

/* Prints "xferdb: <message>" on stderr. */
void xferdb_error(const xf_error *err);

/* ------------------------------------------------------------ rule.c */

/* Parses a rule id argument; 0 (after a message) when it is not a positive
 * integer. */
int64_t xferdb_parse_id(const char *s);
/* Calls fn(user, db, info) for every rule the filter selects, in id order.
 * fn returns 0, or a positive exit status when its rule failed (after
 * printing why: a bad rule does not hide the ones after it), or -1 to stop.
 * Returns an exit status: 2 for a filter the database rejects (unknown op
 * name: bad usage), 1 when reading fails or fn stopped (after printing the
 * error), else fn's last positive value, else 0. */
int xferdb_each_rule(xf_rulesdb *db, const xf_rulesdb_filter *filter,
                     int (*fn)(void *user, xf_rulesdb *db, const xf_rulesdb_rule_info *info),
                     void *user);
/* Loads everything about rule `id`: info (initialised here) and the rule.
 * Returns an exit status: 0, or 1 after printing the error. On failure both
 * are left empty (free them either way). */
int xferdb_load(xf_rulesdb *db, int64_t id, xf_rulesdb_rule_info *info, xf_rule *r);
/* The operator of `node` with the parameters that matter, as the infix form
 * prints it ("conv2d[3x3,s1,same,relu]", "split[axis=1,sizes=4/4]"). */
void xferdb_node_label(const xf_graph *g, int node, char *buf, size_t n);
/* The name a value has in exports: the input's name for graph inputs,
 * "<prefix><k>" for the k-th node output in topological order. `order` is
 * xf_graph_topo_order's result; buf gets the name. */
void xferdb_value_name(const xf_graph *g, const int *order, char prefix, int v, char *buf,
                       size_t n);

/* --------------------------------------------------------- json_out.c */

/* A JSON string literal (quotes, escapes) of s; "null" for NULL. */
void xferdb_json_str(FILE *f, const char *s);
/* A JSON number; non-finite values as the strings "NaN", "Infinity",
 * "-Infinity" (JSON has no literal for them). %.9g keeps float32 exact. */
void xferdb_json_num(FILE *f, double v);
/* [d0, d1, ...] of a shape. */
void xferdb_json_shape(FILE *f, const xf_shape *s);
/* Like xferdb_json_str, also escaping '<', '>' and '&' so the literal can
 * sit inside an HTML <script> element. */
void xferdb_json_str_html(FILE *f, const char *s);

/* ------------------------------------------------------ export_*.c */

/* The rule as one JSON document (docs/xferdb.md, format version 1). */
#define XFERDB_JSON_VERSION 1
void xferdb_write_json(FILE *f, const xf_rulesdb_rule_info *info, const xf_rule *r);
/* The rule as a graphviz digraph: source and target as two clusters, each
 * output marked and joined to the output that replaces it. */
void xferdb_write_dot(FILE *f, const xf_rulesdb_rule_info *info, const xf_rule *r);
/* A copy of one rule side ready for ONNX export (xf_onnx_save): graph
 * outputs named out0, out1, ... on both sides, so the two models of a rule
 * have the same interface; an output that is a graph input, or repeats an
 * earlier output, goes through an Identity node (ONNX output names are
 * unique and distinct from inputs). `out` is initialised here. */
xf_status xferdb_onnx_side(const xf_graph *side, const char *name, xf_graph *out, xf_error *err);

/* ------------------------------------------------------ graphviz.c */

/* 1 when graphviz's `dot` is on PATH. */
int xferdb_have_dot(void);
/* The message for a missing `dot`, naming the Debian package. */
void xferdb_no_dot(void);
/* Runs `dot -T<fmt>` reading the graph from `in` (a file stream at its
 * start) and writing the picture to `out` (flushed first); 0 ok, else 1
 * after a message. */
int xferdb_run_dot(const char *fmt, FILE *in, FILE *out);
/* Draws each files[i] (a .dot file) as files[i].svg, one dot process per
 * file, up to `jobs` at a time; 0 ok, else 1 after a message. */
int xferdb_render_svgs(char **files, int n, int jobs);

#endif
