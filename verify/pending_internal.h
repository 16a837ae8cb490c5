/*
 * pending_internal.h — private to verify/: verdicts decided but not yet written
 * (pending.c). The scheduler gathers them in memory and writes them in
 * short transactions, so the rules database's write lock is held only while
 * writing, never while the workers think.
 */
#ifndef XF_VERIFY_PENDING_INTERNAL_H
#define XF_VERIFY_PENDING_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "rulesdb/rulesdb.h"

/* Write when this many verdicts wait, or when the oldest has waited this
 * long; between two writes the lock is free for other writers. */
#define XV_PENDING_MAX 64
#define XV_PENDING_MAX_AGE_S 0.5

typedef struct xv_verdict {
    int64_t id;
    xf_rule_status status;
    double time_ms;
    char *axioms, *detail; /* NULL: none */
    uint8_t *cex;          /* NULL: none */
    size_t cex_len;
    char *domain;          /* NULL: not recorded */
} xv_verdict;

typedef struct xv_pending {
    xv_verdict *v;
    int n, cap;
    double oldest; /* xf_clock_now() when v[0] was added */
} xv_pending;

/* Keeps a copy of verdict `v` of rule `id`. XF_ERR_NOMEM when it cannot. */
xf_status vf_pending_add(xv_pending *q, int64_t id, const xf_rulesdb_verdict *v, xf_error *err);
/* Whether the verdicts waiting should be written now. */
int vf_pending_due(const xv_pending *q, double now);
/* Writes every waiting verdict in one transaction (BEGIN IMMEDIATE waits
 * for another writer up to the busy timeout) and empties the queue; on
 * failure nothing of it is written and the queue is kept. */
xf_status vf_pending_flush(xv_pending *q, xf_rulesdb *db, xf_error *err);
void vf_pending_free(xv_pending *q);

#endif
