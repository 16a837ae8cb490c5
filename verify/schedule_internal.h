/*
 * schedule_internal.h — private to verify/: the state of one xf_verify_db call on
 * the process that owns the database (schedule.c), shared with the MPI
 * dispatcher (mpi.c), which feeds it the outcomes that other ranks send.
 */
#ifndef XF_VERIFY_SCHEDULE_INTERNAL_H
#define XF_VERIFY_SCHEDULE_INTERNAL_H

#include "pending_internal.h"
#include "worker_internal.h"

typedef struct xv_sched {
    xf_rulesdb *db;
    const xf_verify_db_options *o;
    const xf_rule_status *was; /* per selected rule: its status before this run */
    xf_verify_tally *t;
    double t0;
    xv_pending q; /* verdicts not yet written */
} xv_sched;

/* Turns a worker's outcome (oc->index: the rule's position in the
 * selection) into a verdict waiting to be written, or a report (on_kept),
 * and updates the tally. */
xf_status vf_record(xv_sched *c, const xv_outcome *oc, const uint8_t *msg, xf_error *err);
/* Writes the waiting verdicts when they are due (pending_internal.h). */
xf_status vf_flush_due(xv_sched *c, xf_error *err);

#ifdef XF_HAVE_MPI
/* Decides rules ids[0..t->total) on the other MPI ranks (mpi.c). */
xf_status vf_mpi_dispatch(xv_sched *c, const char *path, const int64_t *ids, xf_error *err);
#endif

#endif
