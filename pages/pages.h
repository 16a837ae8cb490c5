/*
 * pages.h — what an optimisation did, shown (pages/): static HTML pages
 * that open from file:// with no server and no network (plain HTML, SVG
 * drawn here, a few lines of script), in the style of `xferdb report` and
 * with its rule pictures.
 *
 * One optimisation's page (rlflow-agent --report DIR): the latency before
 * and after in the target and in the cost model with their noise; the
 * peak activation memory and the weights before and after (ir's liveness
 * pass over the order the exporter writes); every rewrite of the model
 * written with its source, a proved rule (drawn) or a hand-written pass,
 * and where the model changed (the input's nodes it no longer has, by
 * name); the search's progress (best cost against seconds and steps); the
 * arbiter's table. A comparison page (bench_agents --report DIR) puts many
 * models and methods side by side: a latency and memory table, the
 * heatmap of the rules and passes each method used, and each model's
 * progress curves per method.
 *
 * Each page is DIR/index.html, with its rule pictures in DIR/img (drawn
 * when graphviz's dot is on PATH; text only otherwise, said on the page).
 * The page is written whole or not at all (xf_outfile). When the page's
 * script has run it appends a hidden <div id="rlflow-ready">; a script
 * error adds a visible <div id="rlflow-error">.
 *
 * pages ─► optimize (the report), audit (pictures and style).
 */
#ifndef XF_PAGES_H
#define XF_PAGES_H

#include "optimize/optimize.h"

/* One optimisation as a page shows it. */
typedef struct xf_pages_run {
    const char *model;  /* the input model's path */
    const char *label;  /* the model's name in a comparison (NULL: the file's directory) */
    const char *method; /* "taso", "greedy", "wm", ... */
    const char *output; /* the model written (NULL: not named) */
    const xf_optimize_options *o; /* the options it ran with (o->rules: the database drawn from) */
    const xf_optimize_report *r;  /* its report */
} xf_pages_run;

/* The method's name as rlflow-agent's --agent spells it ("taso", "wm", ...). */
const char *xf_pages_method(const xf_optimize_options *o);

/* DIR created when missing and writable, or an error naming it: a tool
 * checks this before a long optimisation. */
xf_status xf_pages_probe(const char *dir, xf_error *err);

/* Writes the page of one optimisation into DIR (created when missing). */
xf_status xf_pages_optimize(const char *dir, const xf_pages_run *run, xf_error *err);

/* Writes the comparison of n optimisations into DIR. */
xf_status xf_pages_compare(const char *dir, const xf_pages_run *runs, int n, xf_error *err);

#endif /* XF_PAGES_H */
