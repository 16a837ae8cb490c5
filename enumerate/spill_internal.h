/*
 * spill_internal.h — private to enumerate/: the last level's fingerprints on disk.
 *
 * The graphs of the last level (max_ops operators) are never extended, so
 * the only thing the run needs of them is which ones share a fingerprint.
 * Keeping a class-table entry for each (16 bytes, ~95 M at four operators:
 * 2 GB with the table's slack) was most of xfergen's memory. Instead, while
 * the level is built, every child whose fingerprint is not a lower level's
 * class is appended (24 bytes) to one of SPILL_BUCKETS files chosen by the
 * fingerprint's top bits, and every child that collides with a lower
 * level's class goes to a "pending" file with that class. When the level is
 * complete each bucket is read back on its own (1/64 of the level) and its
 * repeated fingerprints become collisions with the bucket's first graph of
 * that fingerprint — exactly the representative an in-memory table would
 * have chosen, since records are appended in the level's order. Collisions
 * of both kinds are then sorted by their position in the level (`seq`), so
 * candidates come out in the same order as before.
 *
 * The files sit next to the enumerator's checkpoint ("<ckpt>.spill.NN") so
 * an interrupted level resumes: the checkpoint records their lengths and a
 * resumed run cuts them back to those lengths. They stay until the caller
 * removes the checkpoint (xf_enum_checkpoint_remove), so the last
 * checkpoint stays usable until the candidates are durable. Without a
 * checkpoint they are anonymous temporary files.
 */
#ifndef XF_ENUMERATE_SPILL_INTERNAL_H
#define XF_ENUMERATE_SPILL_INTERNAL_H

#include <stdio.h>

#include "extend_internal.h"

typedef struct spill {
    FILE *f[SPILL_FILES];
    char *base;                 /* "<ckpt>.spill", NULL: temporary files */
    uint64_t len[SPILL_FILES];  /* bytes written to each */
} spill;

/* A collision of the last level: child `c` (its position `seq` in the
 * level) has the fingerprint of class `rep`. */
typedef struct spill_collision {
    uint64_t seq;
    child c;
    centry rep;
} spill_collision;

/* What reading the buckets back found. */
typedef struct spill_result {
    spill_collision *cols; /* every collision with at most max_outputs outputs, by seq (owned) */
    size_t n_cols;
    uint64_t classes;          /* distinct fingerprints in the buckets */
    uint64_t collisions;       /* repeated ones (the pending file's are counted when added) */
    uint64_t too_many_outputs; /* of those, not paired */
    double helper_cpu;         /* CPU seconds of the threads besides the caller's */
} spill_result;

/* Opens the files: fresh (lens NULL) or, resuming, cut back to lens. */
xf_status en_spill_open(spill *s, const char *ckpt, const uint64_t *lens, xf_error *err);
/* Appends a child whose fingerprint no lower level has. */
xf_status en_spill_add_class(spill *s, const child *c, uint64_t seq, xf_error *err);
/* Appends a child that collides with lower-level class `rep`. */
xf_status en_spill_add_pending(spill *s, const child *c, uint64_t seq, const centry *rep,
                            xf_error *err);
/* Makes everything appended so far durable; lens gets each file's length. */
xf_status en_spill_flush(spill *s, uint64_t *lens, xf_error *err);
/* Reads everything back (see above), `threads` buckets at a time (the
 * result does not depend on it); `progress` (may be NULL) is called from
 * the calling thread with the buckets done so far. */
xf_status en_spill_finish(spill *s, int max_outputs, int threads, spill_result *res,
                       void (*progress)(void *user, int done), void *user, xf_error *err);
void en_spill_result_free(spill_result *r);
/* Closes the files (temporary ones vanish; named ones stay for a resume:
 * xf_enum_checkpoint_remove deletes them). */
void en_spill_close(spill *s);

#endif /* XF_ENUMERATE_SPILL_INTERNAL_H */
