/*
 * ranks_internal.h — private to enumerate/: what the level loop (run.c) shares with
 * its MPI side (mpi.c, built only with MPI: XF_HAVE_MPI).
 *
 * Under `mpirun -n N xfergen`, rank 0 runs the level loop exactly as one
 * process does (class table, merge in parent order, spill, checkpoint,
 * candidates to the database) and the other ranks do its two parallel
 * phases: building the children of a range of parents (extend.c) and
 * confirming a list of collisions (confirm.c). Those are handed out as
 * pieces from a dynamic queue and their results put back in order, so
 * rank 0 sees the same children and candidates in the same order as with
 * threads, and the database is identical.
 */
#ifndef XF_ENUMERATE_RANKS_INTERNAL_H
#define XF_ENUMERATE_RANKS_INTERNAL_H

#include "extend_internal.h"

/* A collision to confirm: child c has the fingerprint of class rep. */
typedef struct collision {
    child c;
    centry rep;
    confirm_result result;
    xf_enum_candidate cand;
    /* Records taken (xf_enum_options.take_records): 1 + its record's index
     * in the list of the thread that confirmed it (rec_thread), or under
     * MPI in the worker ranks' list (en_ranks_record); 0 none */
    size_t rec;
    int rec_thread;
} collision;

/* Adds the structural hash of every class representative of level l to
 * reps and, when classes is not NULL, the class itself (resuming, and a
 * worker rank receiving the levels). */
xf_status en_add_reps(const xf_enum_config *cfg, const glevel *levels, int l, hset *reps,
                        ctable *classes, xf_error *err);

#ifdef XF_HAVE_MPI
/* Counters the workers' extension adds to the run's statistics. */
typedef struct extend_counts {
    uint64_t reducible, memo_hits, memo_misses;
} extend_counts;

/* Rank 0's side of the worker ranks. */
typedef struct enum_ranks enum_ranks;

/* Needs at least two ranks (rank 0 and one worker). */
/* take_records: confirmed candidates stay records (xf_enum_options). */
xf_status en_ranks_open(const xf_enum_config *cfg, int take_records, enum_ranks **out,
                          xf_error *err);
void en_ranks_close(enum_ranks *m);
/* Start of level lc->level: every worker gets the stored levels below it. */
xf_status en_ranks_level(enum_ranks *m, const level_ctx *lc, xf_error *err);
/* The children of parents [lo, hi), in parent order, as *n_bufs buffers
 * (owned by the caller: xf_free each .v and the array). */
xf_status en_ranks_extend(enum_ranks *m, const level_ctx *lc, uint64_t lo, uint64_t hi,
                            childbuf **bufs, uint64_t *n_bufs, extend_counts *counts,
                            xf_error *err);
/* A collision as a worker rank confirms it: the colliding child, its class
 * representative and the class key they share (en_confirm's fp). */
typedef struct confirm_pair {
    egraph src, dst;
    uint64_t fp;
} confirm_pair;

/* Confirms cols[0..n) whose graphs are pairs[i]: sets result and, for
 * CONFIRM_OK, cand (the caller frees its rule) or, taking records, rec. */
xf_status en_ranks_confirm(enum_ranks *m, const confirm_pair *pairs, collision *cols, size_t n,
                             xf_error *err);
/* Record i of the last en_ranks_confirm call's candidates. */
const uint8_t *en_ranks_record(const enum_ranks *m, size_t i, size_t *len);
/* Figures of the run so far, for xf_enum_stats. */
void en_ranks_stats(const enum_ranks *m, xf_enum_stats *s);
#endif

#endif /* XF_ENUMERATE_RANKS_INTERNAL_H */
