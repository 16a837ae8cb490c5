/*
 * patterns_internal.h — private to verify/: operator patterns, what the
 * bounded check's elaboration (bounded_ops.c) reads off an operator's float
 * kernel by probing it (which operand elements, with which coefficients,
 * make up each output element), kept per form: the operator, its
 * parameters and its operands' and results' shapes, on which alone the
 * kernel's answer depends. An operator met again, later in the rule or in a
 * later worker's rule, is not probed again (bounded_patterns.c). Only a
 * forked worker keeps what it reads (bounded.c; the memory goes with the
 * process) and sends it back after its verdict (worker.c), and the forking
 * process keeps that for the workers it forks after (forks.c).
 */
#ifndef XF_VERIFY_PATTERNS_INTERNAL_H
#define XF_VERIFY_PATTERNS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* One step of an elaboration, in the order its Z3 terms are built, so that
 * a pattern found builds exactly the terms, in exactly the order, that
 * probing builds. What the fields mean is the reading's (bounded_ops.c):
 * e.g. "output `out`'s element `at` gains coef times element `elem` of
 * operand `in`". */
typedef struct vf_pattern_step {
    int32_t in, elem;
    int32_t out, at;
    double coef;
} vf_pattern_step;

typedef struct vf_patterns vf_patterns;

vf_patterns *vf_patterns_new(void); /* NULL: out of memory */
void vf_patterns_free(vf_patterns *p); /* NULL: no-op */

/* The steps kept under key (*n of them; valid until the next keep or
 * merge), or NULL. */
const vf_pattern_step *vf_patterns_find(vf_patterns *p, const void *key, size_t key_len,
                                        int64_t *n);
/* Keeps a copy of steps under key as this process's own. Best effort: a
 * pattern beyond the size limits, or one that finds no memory, is not
 * kept (it is read again when met again). */
void vf_patterns_keep(vf_patterns *p, const void *key, size_t key_len,
                      const vf_pattern_step *steps, int64_t n);

/* A forked worker begins: what it keeps from now on is what it sends. */
void vf_patterns_forked(vf_patterns *p);
/* The patterns this process kept since it was forked, as bytes to send
 * (*len; NULL when none), and *reused: the patterns it found among those
 * earlier workers sent. */
const uint8_t *vf_patterns_own(const vf_patterns *p, size_t *len, int64_t *reused);
/* Keeps the patterns a worker sent (vf_patterns_own's bytes) for the
 * workers forked after; an entry that does not check out (a checksum over
 * its key and steps), or that is there already, is skipped. */
void vf_patterns_merge(vf_patterns *p, const uint8_t *bytes, size_t len);
/* Bytes of the patterns kept from workers (what every fork inherits). */
size_t vf_patterns_kept_bytes(const vf_patterns *p);

#endif
