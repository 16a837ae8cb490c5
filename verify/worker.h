/*
 * worker.h — private to verify/: the message a worker process sends back
 * to the scheduler (schedule.c) over its pipe, and the worker itself.
 */
#ifndef XF_VERIFY_WORKER_H
#define XF_VERIFY_WORKER_H

#include <stddef.h>
#include <stdint.h>

#include "verify/verify.h"

/* One rule's outcome; followed on the pipe by cex_len counterexample bytes. */
typedef struct xv_msg {
    int failed;                /* 1: an error stopped the worker (errmsg) */
    int broken;                /* 1 (with failed): the rule itself did not load */
    xf_proof_result proof;
    xf_bounded_result bounded;
    double proof_ms, bounded_ms;
    int bounded_shape;         /* refuted: the refuting shape, 0 = the rule's own */
    char core[1024];           /* axioms the proof used */
    char proof_detail[256], bounded_detail[256];
    char errmsg[512];
    uint32_t cex_len;
} xv_msg;

/* Runs in a forked child: loads rule `id` from db_path, proves it and
 * checks it with v (the scheduler's prepared verifier, inherited through
 * fork, so no worker pays the solver's set-up), writes the message to fd.
 * Returns the process exit code. */
int xv_worker(const char *db_path, int64_t id, xf_verifier *v, int fd);

#endif
