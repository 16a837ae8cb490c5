/*
 * worker_internal.h — private to verify/: the message a worker process sends back
 * to the scheduler (schedule.c) over its pipe, the rule as the forking
 * process loaded it for the worker, the worker itself (worker.c), and the
 * loop that forks workers for a list of rules (forks.c), shared by a
 * single-process run and by each MPI worker rank (mpi.c).
 */
#ifndef XF_VERIFY_WORKER_INTERNAL_H
#define XF_VERIFY_WORKER_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "verify/verify.h"

/* One rule's outcome; followed on the pipe by cex_len counterexample bytes. */
typedef struct xv_msg {
    int failed;                /* 1: an error stopped the worker (errmsg) */
    int broken;                /* 1 (with failed): the rule itself did not load */
    xf_proof_result proof;
    xf_bounded_result bounded;
    int bounded_proves;        /* the bounded check is a proof (xf_bounded.proves) */
    double proof_ms, bounded_ms;
    int bounded_shape;         /* refuted: the refuting shape, 0 = the rule's own */
    xf_verify_why proof_why, bounded_why; /* not decided: the class of the reason */
    uint64_t rlimit_used;      /* Z3 resource units of both checks */
    char core[1024];           /* axioms the proof used */
    char proof_detail[256], bounded_detail[320];
    char errmsg[512];
    int has_domain;            /* domain holds the rule's validity domain (ir/domain.c) */
    char domain[1024];         /* as text, with the rule's input names */
    uint32_t cex_len;
    uint32_t patterns_len;     /* operator patterns this worker read off its kernels,
                                  after the counterexample (vf_patterns_own) */
    int64_t patterns_reused;   /* patterns it took from earlier workers */
} xv_msg;

/* Rule `id` as the forking process loaded it from the database, just
 * before forking its worker: opening the database was each worker's
 * largest fixed cost after the fork. st != XF_OK: it did not load (err
 * says why; broken: the rule itself, a corrupt blob or a missing graph, not
 * the database or the memory). */
typedef struct vf_loaded {
    int64_t id;
    xf_status st;
    int broken;
    xf_error err;
    xf_rule rule;
} vf_loaded;

/* Runs in a forked child: proves and checks the rule the parent loaded
 * (its copy is this process's alone) with v (the scheduler's prepared
 * verifier, inherited through fork, so no worker pays the solver's set-up),
 * writes the message to fd. Returns the process exit code. */
int vf_worker(vf_loaded *job, xf_verifier *v, int fd);

/* How one forked worker ended; followed (in memory, or in an MPI result
 * message) by its `len` message bytes (an xv_msg and the counterexample,
 * or fewer when it crashed or was killed). A plain struct: MPI ranks run
 * the same binary. */
typedef struct xv_outcome {
    int64_t id;
    int64_t index;   /* the rule's position in the list given to vf_run_forks */
    int32_t wstatus; /* waitpid status */
    int32_t killed;  /* 1: killed at its hard deadline */
    double time_ms;  /* the worker's wall time */
    double cpu_ms;   /* its CPU time (user and system): the cost without the load */
    double limit_s;  /* its hard deadline, from its start */
    uint32_t len;
    uint32_t reserved;
} xv_outcome;

/* Called as each worker ends; a non-OK status stops vf_run_forks. */
typedef xf_status (*xv_done_fn)(void *user, const xv_outcome *oc, const uint8_t *msg,
                                xf_error *err);
/* Called about every 200 ms and after each worker ends (may be NULL). */
typedef xf_status (*xv_tick_fn)(void *user, xf_error *err);

/* Decides rules ids[0..n) of the database at db_path, each in its own
 * process forked from v (prepared), at most `jobs` at a time, calling done
 * for each. A worker alive past 6 x timeout_ms + 10 s is killed (the rule
 * is reported killed). On an error every worker still running is killed. */
xf_status vf_run_forks(const char *db_path, xf_verifier *v, unsigned timeout_ms, int jobs,
                       const int64_t *ids, int64_t n, xv_done_fn done, xv_tick_fn tick,
                       void *user, xf_error *err);

#endif
