/*
 * valmemo_internal.h — private: per-worker memo of what a new node computes, keyed
 * by its variant and the hashes of the values it reads.
 *
 * Appending a node to a parent only needs the hash of the node's output
 * (the child's class key is built from output hashes), and the same node
 * on the same values recurs across parents: every parent holding relu(x0)
 * offers conv(relu(x0), w0) again. A node's output is fixed by its variant
 * and its input values (the concrete parameters follow from the input
 * shapes, which the value hashes cover), so the memo answers with the
 * output hashes the first evaluation produced and the kernel (a convolution
 * is most of the enumeration's time) does not run again. It is a
 * direct-mapped cache: a newer entry replaces an older one in its slot,
 * and a hit needs the whole key to match.
 */
#ifndef XF_ENUMERATE_VALMEMO_INTERNAL_H
#define XF_ENUMERATE_VALMEMO_INTERNAL_H

#include "enumerate_internal.h"

typedef struct vm_entry {
    uint64_t in[MAX_NODE_INPUTS]; /* input value hashes (0 past the arity) */
    uint64_t out[NODE_OUTS];      /* output value hashes */
    uint32_t var;                 /* variant + 1; 0: empty slot */
    uint32_t n_in;
} vm_entry;

typedef struct valmemo {
    vm_entry *slots;
    size_t mask;
    uint64_t hits, misses;
} valmemo;

/* 2^log2_slots entries (48 bytes each). */
xf_status en_valmemo_init(valmemo *m, int log2_slots, xf_error *err);
void en_valmemo_free(valmemo *m);
/* Starts loading the slot of (var, in): the memo is probed at random and
 * misses the caches. */
void en_valmemo_prefetch(const valmemo *m, int var, int n_in, const uint64_t *in);
/* 1 and the output hashes into out when (var, in) is known. */
int en_valmemo_get(valmemo *m, int var, int n_in, const uint64_t *in, uint64_t *out);
void en_valmemo_put(valmemo *m, int var, int n_in, const uint64_t *in, const uint64_t *out);

#endif /* XF_ENUMERATE_VALMEMO_INTERNAL_H */
