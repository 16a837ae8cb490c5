/*
 * cluster.c — the shared MPI transport (cluster.h): buffers, start and
 * stop, a wait and a send that nap instead of spinning, whole-message
 * receive.
 */
#include "cluster.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int xf_cluster_buf_reserve(xf_cluster_buf *b, size_t more)
{
    if (b->len + more <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + more) cap *= 2;
    uint8_t *p = xf_realloc(b->p, cap);
    if (!p) return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

int xf_cluster_buf_append(xf_cluster_buf *b, const void *p, size_t n)
{
    if (xf_cluster_buf_reserve(b, n)) return -1;
    if (n) memcpy(b->p + b->len, p, n);
    b->len += n;
    return 0;
}

void xf_cluster_buf_free(xf_cluster_buf *b)
{
    xf_free(b->p);
    memset(b, 0, sizeof *b);
}

xf_status xf_cluster_fail(xf_error *err, int rc, const char *what)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) snprintf(msg, sizeof msg, "code %d", rc);
    return XF_FAIL(err, XF_ERR_INTERNAL, "MPI failed while %s: %s", what, msg);
}

int xf_cluster_launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
}

xf_status xf_cluster_init(int *argc, char ***argv, int *rank, int *size, xf_error *err)
{
    *rank = 0;
    *size = 1;
    int rc = MPI_Init(argc, argv);
    if (rc != MPI_SUCCESS) return xf_cluster_fail(err, rc, "starting (MPI_Init)");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    return XF_OK;
}

void xf_cluster_finish(void)
{
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int r = 1; rank == 0 && r < size; r++)
        MPI_Send(NULL, 0, MPI_BYTE, r, XF_CLUSTER_TAG_STOP, MPI_COMM_WORLD);
    MPI_Finalize();
}

xf_status xf_cluster_wait(int src, MPI_Status *s, xf_cluster_idle_fn idle, void *user,
                          xf_error *err)
{
    for (;;) {
        int flag = 0;
        int rc = MPI_Iprobe(src, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, s);
        if (rc != MPI_SUCCESS) return xf_cluster_fail(err, rc, "waiting for a message");
        if (flag) return XF_OK;
        if (idle) {
            xf_status st = idle(user, err);
            if (st != XF_OK) return st;
        }
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
}

xf_status xf_cluster_recv(xf_cluster_buf *b, const MPI_Status *s, xf_error *err)
{
    int count = 0;
    MPI_Status st2 = *s;
    MPI_Get_count(&st2, MPI_BYTE, &count);
    b->len = 0;
    if (xf_cluster_buf_reserve(b, (size_t)count + 1))
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory receiving %d bytes from rank %d", count,
                       s->MPI_SOURCE);
    int rc = MPI_Recv(b->p, count, MPI_BYTE, s->MPI_SOURCE, s->MPI_TAG, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) return xf_cluster_fail(err, rc, "receiving a message");
    b->len = (size_t)count;
    b->p[b->len] = 0;
    return XF_OK;
}

xf_status xf_cluster_send(const void *p, size_t n, int dest, int tag, xf_error *err)
{
    if (n > INT_MAX)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                       "MPI: a message of %zu bytes to rank %d is over MPI's 2 GiB limit", n, dest);
    /* MPI_Send of a large message spins until the receiver takes it, and
     * rank 0 takes results only between its own work: a worker spent a
     * third of its CPU time there. Test and nap instead (0.1 ms: the
     * transfer moves on only inside MPI calls). */
    MPI_Request req;
    int rc = MPI_Isend(p, (int)n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &req);
    for (int done = 0; rc == MPI_SUCCESS;) {
        rc = MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        if (done) break;
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    if (rc != MPI_SUCCESS) return xf_cluster_fail(err, rc, "sending a message");
    return XF_OK;
}
