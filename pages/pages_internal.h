/*
 * pages_internal.h — (private to pages/) what both pages share: the
 * page's head and foot (audit's style sheet, this module's additions
 * and script), byte and millisecond cells, the line chart, the hand passes
 * as named sources, and the rule pictures.
 */
#ifndef XF_PAGES_PAGES_INTERNAL_H
#define XF_PAGES_PAGES_INTERNAL_H

#include <stdio.h>

#include "audit/audit.h"
#include "pages.h"
#include "rulesdb/rulesdb.h"

/* The page from <!DOCTYPE> to its header (title and subtitle escaped). */
void pg_head(FILE *f, const char *title, const char *sub);
/* The script and the end of the page. */
void pg_foot(FILE *f);
/* A cell with a byte count: data-bytes="N" (exact, what tests read) and
 * the size readable. */
void pg_bytes_cell(FILE *f, uint64_t bytes);
/* A cell with the change from a to b in percent ("-" when a is 0). */
void pg_change_cell(FILE *f, double a, double b);

/* One line of a chart: best cost against x (steps or seconds). */
typedef struct pg_series {
    const char *label;
    int n;
    const double *x, *y;
} pg_series;
/* An SVG line chart (a staircase: the best so far) with its legend;
 * x_label and y_label name the axes; data_x (NULL: none) is the value of
 * the x-axis menu that shows it, hidden: not shown at first. */
void pg_chart(FILE *f, const char *title, const char *x_label, const char *y_label,
              const char *data_x, int hidden, const pg_series *s, int n);

/* The hand-written passes as sources of rewrites: how many of each the
 * model written carries (0: none). */
#define PG_PASSES 5
extern const char *const pg_pass_names[PG_PASSES];
void pg_pass_counts(const xf_optimize_report *r, int counts[PG_PASSES]);

/* Rule pictures drawn into DIR/img: the database opened once, each rule
 * drawn once; drawn() says whether rule id has its picture. */
typedef struct pg_pictures {
    const char *img_dir;
    xf_rulesdb *db;
    int can_draw;
    char why[512]; /* why pictures are missing ("" when all were drawn) */
    int n, cap;
    int64_t *ids;
    xf_rule_status *status;
} pg_pictures;
xf_status pg_pictures_open(pg_pictures *p, const char *dir, const char *rules, xf_error *err);
/* Draws rule id into DIR/img/rule-<id>.svg unless drawn before; *drawn 1
 * when its picture exists, with *status its status in the database. A rule
 * that cannot be drawn is said in p->why (the page says it), not an error;
 * running out of memory is (XF_ERR_NOMEM). */
xf_status pg_picture(pg_pictures *p, int64_t id, xf_rule_status *status, int *drawn,
                     xf_error *err);
void pg_pictures_close(pg_pictures *p);

/* DIR (created when missing; an existing file of that name is an error). */
xf_status pg_make_dir(const char *dir, xf_error *err);

#endif /* XF_PAGES_PAGES_INTERNAL_H */
