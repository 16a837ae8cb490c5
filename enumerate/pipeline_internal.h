/*
 * pipeline_internal.h — private to enumerate/: the list of candidates an xfergen run
 * collects from the enumerator (pipeline.c), which is also the checkpoint
 * blob that keeps them in the rules database across an interruption
 * (cands.c).
 */
#ifndef XF_ENUMERATE_PIPELINE_INTERNAL_H
#define XF_ENUMERATE_PIPELINE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "enumerate/enumerate.h"

/* Candidates in emission order, stored compactly (an xf_rule takes
 * kilobytes, its serialization a hundred bytes or so): `buf` is the
 * checkpoint blob itself, a header followed by one record per candidate. */
typedef struct cand_list {
    uint8_t *buf;
    size_t len, cap;
    size_t *off; /* start of record i in buf */
    size_t n, cap_off;
    double enum_seconds; /* enumeration time of earlier, interrupted calls */
} cand_list;

void en_cand_list_free(cand_list *c);
/* Empties c, keeping its buffers (a confirming thread's records, batch
 * after batch). */
void en_cand_list_clear(cand_list *c);
/* Appends a serialization of r. */
xf_status en_cand_list_push(cand_list *c, const xf_rule *r, xf_error *err);
/* Candidate i's record, *len bytes (valid until the list changes). */
const uint8_t *en_cand_list_record(const cand_list *c, size_t i, size_t *len);
/* Appends a record as en_cand_list_record gives it (of another list: an MPI
 * worker's candidates reach rank 0 as records and stay records). */
xf_status en_cand_list_push_record(cand_list *c, const uint8_t *rec, size_t len, xf_error *err);
/* Rebuilds candidate i into out (initialised here; inputs named, fingerprint set). */
xf_status en_cand_list_get(const cand_list *c, size_t i, xf_rule *out, xf_error *err);
/* Feeds candidate i's sides to src and dst (ir.h, xf_graph_sink; inputs
 * named) straight from its record, without building the graphs: what
 * pruning reads. */
xf_status en_cand_list_feed(const cand_list *c, size_t i, const xf_graph_sink *src,
                            const xf_graph_sink *dst, xf_error *err);

/* Checkpoint blob layout (little-endian): "XFGC", u32 version, u64 count,
 * f64 enumeration seconds; per candidate: u64 fingerprint, u32 input count,
 * per input u16 name length + bytes, u32 + source graph, u32 + target graph
 * (graphs in xf_rulesdb_graph_serialize form). The blob is c->buf with its
 * header brought up to date; *len its length. */
const uint8_t *en_cand_list_blob(cand_list *c, size_t *len);
/* Replaces c's contents with a copy of the blob's. */
xf_status en_cand_list_blob_read(const uint8_t *blob, size_t len, cand_list *c, xf_error *err);

/* The enumeration configuration xfergen's options describe (also built
 * by every MPI worker rank from the same options). */
xf_status en_generate_config(const xf_enum_generate_options *o, xf_enum_config *c,
                               xf_error *err);

#endif /* XF_ENUMERATE_PIPELINE_INTERNAL_H */
