/*
 * cluster.h — the MPI transport that xfergen (enumerate/mpi.c) and
 * xferverify (verify/mpi.c) share: starting and stopping MPI, byte
 * buffers for messages, waiting for a message without spinning, receiving
 * one whole, and MPI errors as xf_error. Each tool keeps its own protocol
 * (tags, message layouts, who works on what); rank 0 owns the rules
 * database in both and the other ranks serve it until it sends
 * XF_CLUSTER_TAG_STOP (xf_cluster_finish).
 *
 * Built only when CMake finds MPI (XF_HAVE_MPI); ranks run the same binary,
 * so structs travel as bytes.
 */
#ifndef XF_CLUSTER_H
#define XF_CLUSTER_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/ir.h"

/* Tag of the message that ends a worker rank's serving loop; the tools'
 * own tags avoid it. */
#define XF_CLUSTER_TAG_STOP 3

/* A growable message buffer (xf_malloc'd; zero-initialise). */
typedef struct xf_cluster_buf {
    uint8_t *p;
    size_t len, cap;
} xf_cluster_buf;

/* Makes room for `more` bytes after len; 0, or -1 out of memory. */
int xf_cluster_buf_reserve(xf_cluster_buf *b, size_t more);
/* Appends n bytes; 0, or -1 out of memory. */
int xf_cluster_buf_append(xf_cluster_buf *b, const void *p, size_t n);
void xf_cluster_buf_free(xf_cluster_buf *b);

/* Whether mpirun (or another MPI launcher) started this process. */
int xf_cluster_launched(void);
/* MPI_Init (errors returned, not fatal); *rank and *size of MPI_COMM_WORLD. */
xf_status xf_cluster_init(int *argc, char ***argv, int *rank, int *size, xf_error *err);
/* Rank 0 sends XF_CLUSTER_TAG_STOP to every other rank; every rank then
 * finalizes MPI. */
void xf_cluster_finish(void);
/* An MPI return code as an error: "MPI failed while <what>: <MPI's text>". */
xf_status xf_cluster_fail(xf_error *err, int rc, const char *what);

/* Called while waiting (about every 2 ms); non-OK ends the wait with it. */
typedef xf_status (*xf_cluster_idle_fn)(void *user, xf_error *err);
/* Waits for a message from `src` (or MPI_ANY_SOURCE) without spinning:
 * Open MPI's blocking receive polls a core at 100%, which on a machine with
 * as many ranks as cores takes it from a worker; here a probe and a 2 ms
 * sleep alternate, and `idle` (may be NULL) runs between them. */
xf_status xf_cluster_wait(int src, MPI_Status *s, xf_cluster_idle_fn idle, void *user,
                          xf_error *err);
/* Receives the message s announced into b (b->len: its size; a NUL follows
 * it, so a text message reads as a string). */
xf_status xf_cluster_recv(xf_cluster_buf *b, const MPI_Status *s, xf_error *err);
/* Sends n bytes (at most INT_MAX) to rank `dest` with `tag`; returns when
 * the buffer may be reused, napping rather than spinning while a large
 * message waits for the receiver. */
xf_status xf_cluster_send(const void *p, size_t n, int dest, int tag, xf_error *err);

#endif /* XF_CLUSTER_H */
