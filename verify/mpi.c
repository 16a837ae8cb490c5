/*
 * mpi.c — xf_verify_db across MPI ranks (built only when CMake finds MPI:
 * XF_HAVE_MPI). Rank 0 owns the rules database: it selects the rules,
 * hands them out and records every verdict (schedule.c's vf_record and
 * pending batches, so a killed run keeps what was written and a rerun
 * resumes). Every other rank serves: it receives a batch of rule ids with
 * the verifier options and decides them with forked workers exactly as a
 * single-process run does (forks.c: a crash or hang costs one rule), then
 * sends the outcomes back in one message.
 *
 * The queue is dynamic: a rank gets its next batch when it returns one, and
 * a batch holds as many rules as take about XV_MPI_BATCH_MS by the mean
 * time per rule seen so far (1 at the start), at most a quarter of each
 * rank's share of what is left (so the last batches are small and the
 * ranks finish together) and at most XV_MPI_BATCH_MAX. Costs per rule vary
 * by four orders of magnitude, which a static split cannot balance.
 *
 * Protocol (rank 0 -> r: TAG_BATCH, TAG_STOP; r -> rank 0: TAG_RESULT,
 * TAG_FAIL): a batch is a batch_head, n rule ids and the database path; a
 * result is a sequence of (xv_outcome, its message bytes); a failure is a
 * message text. Ranks run the same binary, so the structs go as bytes.
 * Workers serve until rank 0 says stop (xf_verify_mpi_finish), so one run
 * may call xf_verify_db several times. The transport (start, stop,
 * buffers, a wait that sleeps instead of spinning) is cluster.h's, shared
 * with xfergen.
 */
#include "schedule_internal.h"
#include "verify_internal.h"

#include "cluster/cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TAG_BATCH = 1, TAG_RESULT = 2, TAG_STOP = XF_CLUSTER_TAG_STOP, TAG_FAIL = 4 };

#define XV_MPI_BATCH_MS 500.0
#define XV_MPI_BATCH_MAX 256

typedef struct batch_head {
    xf_verify_options vo;
    int32_t jobs;
    uint32_t path_len; /* with its NUL */
    int64_t n;
} batch_head;

typedef xf_cluster_buf buf;

/* vf_flush_due as xf_cluster_wait's idle callback. */
static xf_status flush_due(void *user, xf_error *err)
{
    return vf_flush_due(user, err);
}

/* Waits for a message from `src`; while it waits, rank 0 (c not NULL)
 * writes the verdicts that are due. */
static xf_status wait_msg(int src, MPI_Status *s, xv_sched *c, xf_error *err)
{
    return xf_cluster_wait(src, s, c ? flush_due : NULL, c, err);
}

/* ------------------------------------------------------------- workers */

static xf_status on_done(void *user, const xv_outcome *oc, const uint8_t *msg, xf_error *err)
{
    buf *out = user;
    if (xf_cluster_buf_append(out, oc, sizeof *oc) || xf_cluster_buf_append(out, msg, oc->len))
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory keeping the outcome of rule %lld",
                       (long long)oc->id);
    return XF_OK;
}

/* Decides one batch into out (a TAG_RESULT body); v is kept for the next
 * batch with the same options. */
static xf_status serve_batch(const buf *in, xf_verifier **v, buf *out, xf_error *err)
{
    batch_head h;
    if (in->len < sizeof h) return XF_FAIL(err, XF_ERR_INVALID, "MPI: a batch without a header");
    memcpy(&h, in->p, sizeof h);
    size_t ids_len = (size_t)h.n * sizeof(int64_t);
    if (h.n < 0 || in->len != sizeof h + ids_len + h.path_len || h.path_len == 0)
        return XF_FAIL(err, XF_ERR_INVALID, "MPI: a batch of %zu bytes does not match its header",
                       in->len);
    int64_t *ids = xf_malloc(ids_len + 1);
    if (!ids) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory for a batch of %lld rules",
                             (long long)h.n);
    memcpy(ids, in->p + sizeof h, ids_len);
    const char *path = (const char *)in->p + sizeof h + ids_len;
    xf_status st = XF_OK;
    if (*v && memcmp(vf_verifier_options(*v), &h.vo, sizeof h.vo) != 0) {
        xf_verifier_free(*v);
        *v = NULL;
    }
    if (!*v) {
        st = xf_verifier_new(&h.vo, v, err);
        if (st == XF_OK) st = xf_verifier_prepare(*v, err);
    }
    out->len = 0;
    if (st == XF_OK)
        st = vf_run_forks(path, *v, h.vo.timeout_ms, h.jobs, ids, h.n, on_done, NULL, out, err);
    xf_free(ids);
    return st;
}

xf_status xf_verify_mpi_serve(xf_error *err)
{
    buf in = {0}, out = {0};
    xf_verifier *v = NULL;
    xf_status st = XF_OK;
    for (;;) {
        MPI_Status s;
        st = wait_msg(0, &s, NULL, err);
        if (st == XF_OK) st = xf_cluster_recv(&in, &s, err);
        if (st != XF_OK || s.MPI_TAG == TAG_STOP) break;
        xf_error e;
        xf_error_clear(&e);
        if (serve_batch(&in, &v, &out, &e) == XF_OK)
            st = xf_cluster_send(out.p, out.len, 0, TAG_RESULT, err);
        else
            st = xf_cluster_send(e.msg, strlen(e.msg), 0, TAG_FAIL, err);
        if (st != XF_OK) break;
    }
    xf_verifier_free(v);
    xf_free(in.p);
    xf_free(out.p);
    return st;
}

/* -------------------------------------------------------------- rank 0 */

/* Rules in the next batch: about XV_MPI_BATCH_MS of work at the mean time
 * per rule so far (one rule while nothing is known), times the jobs each
 * rank runs at once, at most a quarter of each rank's share of what is
 * left, and at least one. */
static int64_t batch_size(int64_t left, int ranks, int jobs, double mean_ms)
{
    double want = mean_ms > 0 ? XV_MPI_BATCH_MS / mean_ms * jobs : 1;
    int64_t b = want > XV_MPI_BATCH_MAX ? XV_MPI_BATCH_MAX : (int64_t)want;
    int64_t fair = left / (4 * (int64_t)ranks);
    if (b > fair) b = fair;
    if (b < 1) b = 1;
    return b > left ? left : b;
}

typedef struct dispatch {
    xv_sched *c;
    const char *path;
    const int64_t *ids;
    int64_t next, total;
    int ranks;
    int64_t *start, *count; /* per rank: its batch in the selection (count 0: idle) */
    double sum_ms;          /* worker time of the outcomes so far */
    int64_t n_ms;
    buf msg;
} dispatch;

static xf_status send_batch(dispatch *d, int r, xf_error *err)
{
    const xf_verify_db_options *o = d->c->o;
    int64_t n = batch_size(d->total - d->next, d->ranks, o->jobs,
                           d->n_ms ? d->sum_ms / (double)d->n_ms : 0);
    batch_head h;
    memset(&h, 0, sizeof h);
    h.vo = o->vo;
    h.jobs = o->jobs;
    h.path_len = (uint32_t)strlen(d->path) + 1;
    h.n = n;
    d->msg.len = 0;
    if (xf_cluster_buf_append(&d->msg, &h, sizeof h) ||
        xf_cluster_buf_append(&d->msg, d->ids + d->next, (size_t)n * sizeof(int64_t)) ||
        xf_cluster_buf_append(&d->msg, d->path, h.path_len))
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory for a batch of %lld rules", (long long)n);
    xf_status st = xf_cluster_send(d->msg.p, d->msg.len, r, TAG_BATCH, err);
    if (st != XF_OK) return st;
    d->start[r] = d->next;
    d->count[r] = n;
    d->next += n;
    return XF_OK;
}

/* Records the outcomes of rank r's batch (body in d->msg). */
static xf_status take_result(dispatch *d, int r, xf_error *err)
{
    size_t at = 0;
    int64_t got = 0;
    while (at < d->msg.len) {
        xv_outcome oc;
        if (d->msg.len - at < sizeof oc) break;
        memcpy(&oc, d->msg.p + at, sizeof oc);
        at += sizeof oc;
        if (d->msg.len - at < oc.len || oc.index < 0 || oc.index >= d->count[r]) break;
        oc.index += d->start[r];
        d->sum_ms += oc.time_ms;
        d->n_ms++;
        got++;
        xf_status st = vf_record(d->c, &oc, d->msg.p + at, err);
        if (st != XF_OK) return st;
        at += oc.len;
    }
    if (at != d->msg.len || got != d->count[r])
        return XF_FAIL(err, XF_ERR_INTERNAL,
                       "MPI: rank %d returned %lld outcomes in %zu bytes for a batch of %lld", r,
                       (long long)got, d->msg.len, (long long)d->count[r]);
    return XF_OK;
}

xf_status vf_mpi_dispatch(xv_sched *c, const char *path, const int64_t *ids, xf_error *err)
{
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2)
        return XF_FAIL(err, XF_ERR_INVALID,
                       "MPI: one rank; run under mpirun -n 2 or more (rank 0 records, the "
                       "others decide) or without MPI");
    dispatch d;
    memset(&d, 0, sizeof d);
    d.c = c;
    d.path = path;
    d.ids = ids;
    d.total = c->t->total;
    d.ranks = size - 1;
    d.start = xf_calloc((size_t)size, sizeof *d.start);
    d.count = xf_calloc((size_t)size, sizeof *d.count);
    xf_status st = d.start && d.count ? XF_OK
                                      : XF_FAIL(err, XF_ERR_NOMEM, "out of memory for %d ranks", size);
    int busy = 0;
    for (int r = 1; r < size && st == XF_OK && d.next < d.total; r++, busy++)
        st = send_batch(&d, r, err);
    /* After an error, stop handing out rules but collect every batch out,
     * so no stale result reaches a later call. */
    while (busy > 0) {
        MPI_Status s;
        xf_error e;
        xf_status rs = wait_msg(MPI_ANY_SOURCE, &s, st == XF_OK ? c : NULL, &e);
        if (rs == XF_OK) rs = xf_cluster_recv(&d.msg, &s, &e);
        if (rs != XF_OK) { /* MPI itself failed: nothing more will come */
            if (st == XF_OK && err) *err = e;
            if (st == XF_OK) st = rs;
            break;
        }
        int r = s.MPI_SOURCE;
        busy--;
        if (s.MPI_TAG == TAG_FAIL && st == XF_OK)
            st = XF_FAIL(err, XF_ERR_INTERNAL, "MPI rank %d: %s", r, (const char *)d.msg.p);
        else if (s.MPI_TAG == TAG_RESULT && st == XF_OK)
            st = take_result(&d, r, err);
        d.count[r] = 0;
        if (st == XF_OK) st = vf_flush_due(c, err);
        if (st == XF_OK && d.next < d.total) {
            st = send_batch(&d, r, err);
            busy += st == XF_OK;
        }
    }
    xf_free(d.start);
    xf_free(d.count);
    xf_free(d.msg.p);
    return st;
}
