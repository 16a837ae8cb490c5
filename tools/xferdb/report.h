/*
 * report.h — what `xferdb report` collects (cmd_report.c) and hands to the
 * page writer (report_html.c): one record per rule, the counts by status,
 * size and operator, and how many rules were drawn.
 */
#ifndef XF_TOOLS_XFERDB_REPORT_H
#define XF_TOOLS_XFERDB_REPORT_H

#include "xferdb.h"

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

/* Writes DIR's index.html; 0 ok, else 1 after a message. */
int report_write_html(const report *rep, const char *path);

/* The page's style sheet and script (report_assets.c). */
extern const char report_css[];
extern const char report_js[];

#endif
