/*
 * pipeline.c — xferverify's whole run: the rules of a database decided
 * size by size, smallest first, so that when the candidates of size k are
 * tried, every rule below k that can be proved has been. At each size the
 * derive pass (derive_db.c) joins what follows from the smaller rules, and
 * only the candidates left go to the solver (xf_verify_db, verify/, with
 * its size selection). --recheck leaves the derive pass with nothing new
 * and has the solver decide every rule of the size again.
 */
#include <stdlib.h>
#include <string.h>

#include "derive_impl.h"

void xf_derive_verify_options_init(xf_derive_verify_options *o)
{
    memset(o, 0, sizeof *o);
    o->derive = 1;
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
    sum->broken += t->broken;
    sum->kept += t->kept;
    sum->killed += t->killed;
    for (int w = 0; w <= XF_WHY_UNSUPPORTED; w++) sum->unknown_why[w] += t->unknown_why[w];
    sum->cpu_s += t->cpu_s;
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
        long long room = o->vopt.limit > 0 ? o->vopt.limit - total->done : 0;
        if (size < 1 || (o->max_size > 0 && size > o->max_size) ||
            (o->vopt.limit > 0 && room <= 0))
            continue;
        if (o->on_start) o->on_start(o->user, size);
        xf_derive_tally dt;
        memset(&dt, 0, sizeof dt);
        if (o->derive) {
            xf_derive_db_options dopt = o->dopt;
            dopt.size = size;
            st = xf_derive_db(db, &dopt, &dt, err);
            *derived += dt.derived;
            if (st != XF_OK) break;
        }
        int64_t left = 0;
        xf_verify_tally vt;
        memset(&vt, 0, sizeof vt);
        st = count_left(db, size, o->vopt.recheck, &left, err);
        if (st == XF_OK && left > 0) {
            xf_verify_db_options vopt = o->vopt;
            vopt.size = size;
            vopt.limit = room;
            st = xf_verify_db(db, path, &vopt, &vt, err);
            add_tally(total, &vt);
        }
        total->elapsed_s = xf_clock_now() - t0;
        if (o->on_size) o->on_size(o->user, size, o->derive ? &dt : NULL, left > 0 ? &vt : NULL);
    }
    total->elapsed_s = xf_clock_now() - t0;
    xf_free(sizes);
    return st;
}
