/*
 * pipeline.c — xferverify's whole run: the rules of a database decided
 * size by size, smallest first, so that when the candidates of size k are
 * tried, every rule below k that can be proved has been. At each size the
 * derive pass (derive_db.c) joins what follows from the smaller rules, and
 * only the candidates left go to the solver (xf_verify_db, verify/, with
 * its size selection), in rounds: first one candidate of each compiled
 * form (the others are the same rule at other tensor shapes, forms.c), in
 * o->rounds parts, each followed by the derive pass again with the rules
 * of the size proved so far as steps too (a chain of proved rules, as
 * sound as one of smaller ones); then the rest; then the size's unknowns
 * once more, with every rule of the size the solver proved: most of those
 * are proved in the last round, after the unknowns were last searched
 * (docs/derive.md "The unknowns, searched again"). --recheck leaves the
 * derive pass with nothing new and has the solver decide every rule of the
 * size again, in one round.
 *
 * A verdict is a function of the database and the options, not of where a
 * run was interrupted: the parts are planned over every rule of the size
 * (forms.c), not over the candidates left, and the pass after part k steps
 * by the rules of parts 1..k that are proved, not by every proved rule of
 * the size (a killed run had proved some of the later parts, or of the
 * rest, which a clean run's pass never sees). A resumed run repeats the
 * steps in the same order over what is left; each pass derives a candidate
 * or not whatever else it derives, so it derives what the clean run's did.
 */
#include <stdlib.h>
#include <string.h>

#include "derive_internal.h"

void xf_derive_verify_options_init(xf_derive_verify_options *o)
{
    memset(o, 0, sizeof *o);
    o->derive = 1;
    o->rounds = 2;
    o->firsts_up_to = 3;
    o->firsts_depth = 1;
    o->round_depth = 2;
    xf_derive_db_options_init(&o->dopt);
    xf_verify_db_options_init(&o->vopt);
}

static void add_tally(xf_verify_tally *sum, const xf_verify_tally *t)
{
    sum->done += t->done;
    sum->total += t->total;
    sum->proved += t->proved;
    sum->refuted += t->refuted;
    sum->unknown += t->unknown;
    sum->disagree += t->disagree;
    sum->shape_specific += t->shape_specific;
    sum->by_shapes += t->by_shapes;
    sum->broken += t->broken;
    sum->kept += t->kept;
    sum->killed += t->killed;
    for (int w = 0; w <= XF_WHY_UNSUPPORTED; w++) sum->unknown_why[w] += t->unknown_why[w];
    sum->cpu_s += t->cpu_s;
    sum->patterns_reused += t->patterns_reused;
}

/* Rules of `size` the solver would take: candidates, or with recheck any. */
static xf_status count_left(xf_rulesdb *db, int size, int recheck, int64_t *n, xf_error *err)
{
    xf_rulesdb_filter f;
    memset(&f, 0, sizeof f);
    f.any_status = recheck;
    f.status = XF_RULE_CANDIDATE;
    f.size = size;
    return xf_rulesdb_count_rules(db, &f, n, err);
}

/* Adds a later derive pass's tally to the size's; what it derived also
 * to *part (the size's later or after). */
static void add_derive(xf_derive_tally *sum, const xf_derive_tally *t, int64_t *part)
{
    sum->derived += t->derived;
    *part += t->derived;
    sum->states += t->states;
    sum->unreversed += t->unreversed;
    sum->met += t->met;
    sum->rules = t->rules;
    sum->actions = t->actions;
    sum->elapsed_s += t->elapsed_s;
}

/* One solver call on the candidates of `size` (only those in only[0..n)
 * when only is not NULL), within what is left of the limit. */
static xf_status solve(xf_rulesdb *db, const char *path, const xf_derive_verify_options *o,
                       int size, const int64_t *only, int64_t n_only, xf_verify_tally *sum,
                       xf_verify_tally *total, xf_error *err)
{
    xf_verify_db_options vopt = o->vopt;
    vopt.size = size;
    vopt.only = only;
    vopt.n_only = n_only;
    if (o->vopt.limit > 0) {
        vopt.limit = o->vopt.limit - total->done;
        if (vopt.limit <= 0) return XF_OK;
    }
    xf_verify_tally vt;
    xf_status st = xf_verify_db(db, path, &vopt, &vt, err);
    add_tally(sum, &vt);
    add_tally(total, &vt);
    sum->elapsed_s += vt.elapsed_s;
    return st;
}

/* The derive passes take the solver's workers (they never run at once);
 * under MPI this process only records, so it searches alone. */
static int derive_jobs(const xf_derive_verify_options *o)
{
    return o->vopt.mpi ? 1 : o->vopt.jobs;
}

static int cmp_id(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The candidates of the pass after the first `done` firsts of p were
 * decided (decided: those, ascending), above o->firsts_up_to operators:
 * into only (room for p->n_others + p->n_firsts) the other shapes of the
 * forms decided (those of forms still to be decided wait for the pass
 * after their first) and, with o->firsts_depth, the later firsts, which
 * also go to shallow (room for p->n_firsts) to be searched that deep;
 * both ascending. */
static void plan_pass(const derive_plan *p, const xf_derive_verify_options *o,
                      const int64_t *decided, int64_t done, int64_t *only, int64_t *shallow,
                      xf_derive_db_options *dopt)
{
    int64_t k = 0, later = o->firsts_depth > 0 ? p->n_firsts - done : 0;
    for (int64_t i = 0; i < p->n_others; i++)
        if (bsearch(&p->first_of[i], decided, (size_t)done, sizeof *decided, cmp_id))
            only[k++] = p->others[i];
    if (later > 0) {
        memcpy(shallow, p->firsts + done, sizeof *shallow * (size_t)later);
        qsort(shallow, (size_t)later, sizeof *shallow, cmp_id);
        memcpy(only + k, shallow, sizeof *only * (size_t)later);
        k += later;
        qsort(only, (size_t)k, sizeof *only, cmp_id);
        dopt->shallow = shallow;
        dopt->n_shallow = later;
        dopt->shallow_depth = o->firsts_depth;
    }
    dopt->only = only;
    dopt->n_only = k;
}

/* The solver's rounds at one size, after the first derive pass: the first
 * candidate of each compiled form (forms.c) in o->rounds chunks of equal
 * size, smaller side's operators first (the rest are more often joined by
 * those: docs/derive.md), each followed by a derive pass that also steps
 * by the rules of the size proved so far; then the rest. Above
 * o->firsts_up_to operators the passes before the last round search the
 * later rounds' firsts only o->firsts_depth deep (0: not at all) and, at
 * the round depth, the other shapes of the forms decided so far only: at
 * 4 operators the firsts' deeper searches cost about what the solver
 * calls they saved, and the other shapes of an undecided form wait for
 * it (docs/derive.md). */
static xf_status solve_in_rounds(xf_rulesdb *db, const char *path,
                                 const xf_derive_verify_options *o, int size, xf_derive_tally *dt,
                                 xf_verify_tally *vt, xf_verify_tally *total, xf_error *err)
{
    int64_t *first = NULL, *steps = NULL, *only = NULL, *shallow = NULL, n_first = 0, left = 0,
            done = 0;
    derive_plan plan;
    xf_status st = derive_plan_forms(db, size, &plan, err);
    first = plan.firsts;
    n_first = plan.n_firsts;
    int shallow_firsts = o->firsts_up_to > 0 && size > o->firsts_up_to;
    if (st == XF_OK && n_first > 0 && !(steps = xf_malloc(sizeof *steps * (size_t)n_first)))
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory planning %lld rules", (long long)n_first);
    if (st == XF_OK && shallow_firsts &&
        (!(only = xf_malloc(sizeof *only * (size_t)(plan.n_others + n_first + 1))) ||
         !(shallow = xf_malloc(sizeof *shallow * (size_t)(n_first + 1)))))
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory planning %lld rules",
                     (long long)(plan.n_others + n_first));
    for (int k = 0; st == XF_OK && k < o->rounds && done < n_first; k++) {
        int64_t end = n_first * (k + 1) / o->rounds;
        qsort(first + done, (size_t)(end - done), sizeof *first, cmp_id);
        /* the part's candidates (a resumed run: those still undecided) */
        st = solve(db, path, o, size, first + done, end - done, vt, total, err);
        done = end;
        /* the pass after it steps by what the parts so far proved, no more:
         * a resumed run has the same steps as a clean one here */
        memcpy(steps, first, sizeof *steps * (size_t)done);
        qsort(steps, (size_t)done, sizeof *steps, cmp_id);
        if (st == XF_OK) st = count_left(db, size, 0, &left, err);
        if (st == XF_OK && left > 0) {
            xf_derive_db_options dopt = o->dopt;
            dopt.size = size;
            dopt.same_size = 1;
            dopt.same_ids = steps;
            dopt.n_same_ids = done;
            dopt.jobs = derive_jobs(o);
            if (o->round_depth > 0 && o->round_depth < dopt.d.max_depth)
                dopt.d.max_depth = o->round_depth;
            if (shallow_firsts && done < n_first) /* before the last round */
                plan_pass(&plan, o, steps, done, only, shallow, &dopt);
            xf_derive_tally later;
            st = xf_derive_db(db, &dopt, &later, err);
            add_derive(dt, &later, &dt->later);
        }
    }
    derive_plan_free(&plan);
    xf_free(steps);
    xf_free(only);
    xf_free(shallow);
    if (st == XF_OK) st = count_left(db, size, 0, &left, err);
    if (st == XF_OK && left > 0) st = solve(db, path, o, size, NULL, 0, vt, total, err);
    return st;
}

/* The size's unknown rules searched again at full depth, with every rule
 * of the size the solver proved as a step too. */
static xf_status derive_unknowns(xf_rulesdb *db, const xf_derive_verify_options *o, int size,
                                 xf_derive_tally *dt, xf_error *err)
{
    xf_derive_db_options dopt = o->dopt;
    dopt.size = size;
    dopt.same_size = 1;
    dopt.unknowns = 1;
    dopt.jobs = derive_jobs(o);
    xf_derive_tally after;
    xf_status st = xf_derive_db(db, &dopt, &after, err);
    add_derive(dt, &after, &dt->after);
    return st;
}

xf_status xf_derive_verify_db(xf_rulesdb *db, const char *path, const xf_derive_verify_options *o,
                              xf_verify_tally *total, int64_t *derived, xf_error *err)
{
    memset(total, 0, sizeof *total);
    *derived = 0;
    double t0 = xf_clock_now();
    xf_rulesdb_count *sizes = NULL;
    int n_sizes = 0;
    xf_status st = xf_rulesdb_count_by(db, XF_RULESDB_BY_SIZE, &sizes, &n_sizes, err);
    for (int i = 0; st == XF_OK && i < n_sizes; i++) {
        int size = atoi(sizes[i].key);
        if (size < 1 || (o->max_size > 0 && size > o->max_size) ||
            (o->vopt.limit > 0 && o->vopt.limit <= total->done))
            continue;
        if (o->on_start) o->on_start(o->user, size);
        xf_derive_tally dt;
        memset(&dt, 0, sizeof dt);
        if (o->derive) {
            xf_derive_db_options dopt = o->dopt;
            dopt.size = size;
            dopt.same_size = 0;
            dopt.jobs = derive_jobs(o);
            st = xf_derive_db(db, &dopt, &dt, err);
        }
        int64_t left = 0;
        xf_verify_tally vt;
        memset(&vt, 0, sizeof vt);
        if (st == XF_OK) st = count_left(db, size, o->vopt.recheck, &left, err);
        if (st == XF_OK && left > 0 && o->derive && o->rounds > 0 && !o->vopt.recheck)
            st = solve_in_rounds(db, path, o, size, &dt, &vt, total, err);
        else if (st == XF_OK && left > 0)
            st = solve(db, path, o, size, NULL, 0, &vt, total, err);
        if (st == XF_OK && o->derive && !o->vopt.recheck)
            st = derive_unknowns(db, o, size, &dt, err);
        *derived += dt.derived;
        total->elapsed_s = xf_clock_now() - t0;
        if (o->on_size) o->on_size(o->user, size, o->derive ? &dt : NULL, left > 0 ? &vt : NULL);
    }
    total->elapsed_s = xf_clock_now() - t0;
    xf_free(sizes);
    return st;
}
