/*
 * xfergen.h — private to the xfergen tool: its parsed options, the list of
 * candidates collected from the enumerator (which is also the checkpoint
 * blob that keeps them in the rules database across an interruption), and
 * the pipeline (enumerate -> prune -> write).
 */
#ifndef XF_XFERGEN_H
#define XF_XFERGEN_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "enumerate/enumerate.h"
#include "ir/ir.h"

typedef struct xfergen_opts {
    int max_ops;
    const char *vocab;  /* "default", "taso" or a file */
    const char *inputs; /* spec, NULL: the preset's */
    int threads;
    uint64_t seed;
    const char *out;    /* rules database */
    int resume;
    int quiet;
    long stop_after;    /* test hook (XF_XFERGEN_STOP_AFTER): stop after N new candidates; -1 off */
} xfergen_opts;

/* Candidates in emission order, stored compactly (an xf_rule takes
 * kilobytes, its serialization a hundred bytes or so): `buf` is the
 * checkpoint blob itself, a header followed by one record per candidate. */
typedef struct xfergen_cands {
    uint8_t *buf;
    size_t len, cap;
    size_t *off; /* start of record i in buf */
    size_t n, cap_off;
    double enum_seconds; /* enumeration time of earlier, interrupted calls */
} xfergen_cands;

void xfergen_cands_free(xfergen_cands *c);
/* Appends a serialization of r. */
xf_status xfergen_cands_push(xfergen_cands *c, const xf_rule *r, xf_error *err);
/* Rebuilds candidate i into out (initialised here; inputs named, fingerprint set). */
xf_status xfergen_cands_get(const xfergen_cands *c, size_t i, xf_rule *out, xf_error *err);

/* Checkpoint blob layout (little-endian): "XFGC", u32 version, u64 count,
 * f64 enumeration seconds; per candidate: u64 fingerprint, u32 input count,
 * per input u16 name length + bytes, u32 + source graph, u32 + target graph
 * (graphs in xf_rulesdb_graph_serialize form). The blob is c->buf with its
 * header brought up to date; *len its length. */
const uint8_t *xfergen_blob(xfergen_cands *c, size_t *len);
/* Replaces c's contents with a copy of the blob's. */
xf_status xfergen_blob_read(const uint8_t *blob, size_t len, xfergen_cands *c, xf_error *err);

/* Set by SIGINT/SIGTERM; the enumerator stops at the next batch boundary. */
extern volatile sig_atomic_t xfergen_stop;

/* Outcome of a run: 0 done, 1 interrupted or failed, 2 bad input. */
int xfergen_run(const xfergen_opts *o);

#endif /* XF_XFERGEN_H */
