/*
 * xferdb.h — what the xferdb subcommands share: the parsed command line
 * and one function per subcommand. Each returns the process exit status
 * (0 ok, 1 the request failed on a readable database, 2 bad usage or an
 * unreadable database) after printing any error as one line on stderr.
 */
#ifndef XF_TOOLS_XFERDB_H
#define XF_TOOLS_XFERDB_H

#include "rulesdb/rulesdb.h"

#define XFERDB_MAX_OPS 32

typedef struct xferdb_options {
    const char *cmd, *db;
    const char *id; /* show */
    xf_rulesdb_filter filter;
    const char *ops[XFERDB_MAX_OPS];
    char ops_buf[512];
} xferdb_options;

int xferdb_stats(xf_rulesdb *db, const xferdb_options *o);
int xferdb_list(xf_rulesdb *db, const xferdb_options *o);
int xferdb_show(xf_rulesdb *db, const xferdb_options *o);

/* The verdict part of `show`: status and time, the unsat-core axioms with
 * their descriptions, the decoded counterexample and the outputs both sides
 * compute on it (show_verdict.c). */
void xferdb_show_verdict(const xf_rulesdb_rule_info *info, const xf_rule *r);

/* Infix text of g (xf_graph_format) in a malloc'd string; NULL with *err
 * set on failure. */
char *xferdb_format(const xf_graph *g, xf_error *err);

/* Prints "xferdb: <message>" on stderr. */
void xferdb_error(const xf_error *err);

#endif
