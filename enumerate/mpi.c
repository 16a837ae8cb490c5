/*
 * mpi.c — xf_enum_run across MPI ranks (ranks_internal.h; built only when CMake
 * finds MPI). Rank 0 keeps the level loop, the class table, the checkpoint
 * and the database; the other ranks serve (xf_enum_mpi_serve) the two
 * phases of a batch that need no shared state beyond the stored levels:
 *   - EXTEND: the children of parents [lo, hi) of a level (extend.c), sent
 *     back in parent order with the counters extension keeps;
 *   - CONFIRM: pairs of graphs (a colliding child and its class
 *     representative, built by rank 0 so a worker needs no class table,
 *     with the class key they share)
 *     confirmed by confirm.c; the candidates go back as cands.c records.
 * At the start of each level rank 0 sends every worker the stored levels
 * below it (LEVELS, in chunks); the worker rebuilds the representatives'
 * structural hashes from them, which is all extension reads besides the
 * levels.
 *
 * The queue is dynamic: a piece holds as many items as take about PIECE_MS
 * by the mean time per item measured so far on this level (a few while
 * nothing is known), at most a quarter of each worker's share of what is
 * left, so the last pieces are small; each worker has up to two pieces
 * out so it never waits for a round trip. Results are stored by piece and
 * so come back in item order whatever order the ranks finish in. Worker
 * ranks run one thread each: under mpirun a rank is a core.
 *
 * Protocol (rank 0 -> r: TAG_LEVELS, TAG_EXTEND, TAG_CONFIRM, STOP;
 * r -> rank 0: TAG_RESULT, TAG_FAIL with the error text). The transport is
 * cluster.h's, shared with xferverify.
 */
#include "pipeline_internal.h"
#include "ranks_internal.h"

#include "cluster/cluster.h"

#include <stddef.h>
#include <string.h>

enum { TAG_LEVELS = 11, TAG_EXTEND = 12, TAG_CONFIRM = 13, TAG_RESULT = 14, TAG_FAIL = 15 };

#define PIECE_MS 40.0
#define PIECE_MAX 65536
#define OUTSTANDING 2 /* pieces a worker has at once */

/* Stored levels go out in messages of at most LEVEL_CHUNK records (384 KiB):
 * MPI counts bytes in an int, and at five operators level 4 alone would be
 * 2.2 GB; small chunks also keep a worker's receive buffer small. */
#define LEVEL_CHUNK ((uint64_t)1 << 14)

/* LEVELS: records [at, at + count) of level l (of `total`), for building
 * level `level`; the last chunk of level level-1 completes the set. */
typedef struct levels_head {
    uint64_t cfg_hash;
    int32_t level, l;
    uint64_t total, at, count;
} levels_head;

typedef struct extend_head {
    int32_t level;
    uint64_t lo, hi;
} extend_head;

typedef struct result_head {
    double ms; /* the worker's time on the piece */
    uint64_t n;
    extend_counts counts; /* EXTEND */
} result_head;

typedef struct confirm_item {
    int32_t result, src_ops, dst_ops;
    double float_max_abs;
} confirm_item;

/* ------------------------------------------------------------- rank 0 */

typedef struct piece {
    uint64_t lo, hi;
} piece;

/* A piece out at a worker: its message stays until the send completes. */
typedef struct slot {
    size_t piece;
    xf_cluster_buf buf;
    MPI_Request req;
} slot;

struct enum_ranks {
    const xf_enum_config *cfg;
    int size;
    xf_cluster_buf msg; /* LEVELS, and each result received */
    /* per rank: a ring of its pieces out, oldest at head */
    slot (*out)[OUTSTANDING];
    int *head, *n_out;
    double ms_sum[2]; /* per kind (0 extend, 1 confirm): worker time and items this level */
    uint64_t items[2];
    int take_records;
    cand_list recs;   /* the last confirmation's candidates, taking records */
    double wait_s;    /* rank 0's time waiting for results */
    uint64_t pieces;
};

xf_status en_ranks_open(const xf_enum_config *cfg, int take_records, enum_ranks **out,
                          xf_error *err)
{
    int size = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2)
        return XF_FAIL(err, XF_ERR_INVALID,
                       "MPI: one rank; run under mpirun -n 2 or more (rank 0 keeps the database, "
                       "the others enumerate) or without MPI");
    enum_ranks *m = xf_calloc(1, sizeof *m);
    if (m) {
        m->out = xf_calloc((size_t)size, sizeof *m->out);
        m->head = xf_calloc((size_t)size, sizeof *m->head);
        m->n_out = xf_calloc((size_t)size, sizeof *m->n_out);
    }
    if (!m || !m->out || !m->head || !m->n_out) {
        en_ranks_close(m);
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory for %d MPI ranks", size);
    }
    for (int r = 0; r < size; r++)
        for (int k = 0; k < OUTSTANDING; k++) m->out[r][k].req = MPI_REQUEST_NULL;
    m->cfg = cfg;
    m->size = size;
    m->take_records = take_records;
    *out = m;
    return XF_OK;
}

void en_ranks_close(enum_ranks *m)
{
    if (!m) return;
    xf_cluster_buf_free(&m->msg);
    en_cand_list_free(&m->recs);
    for (int r = 0; m->out && r < m->size; r++)
        for (int k = 0; k < OUTSTANDING; k++) xf_cluster_buf_free(&m->out[r][k].buf);
    xf_free(m->out);
    xf_free(m->head);
    xf_free(m->n_out);
    xf_free(m);
}

const uint8_t *en_ranks_record(const enum_ranks *m, size_t i, size_t *len)
{
    return en_cand_list_record(&m->recs, i, len);
}

void en_ranks_stats(const enum_ranks *m, xf_enum_stats *s)
{
    s->ranks = m->size;
    s->rank0_wait_seconds = m->wait_s;
    s->pieces = m->pieces;
}

xf_status en_ranks_level(enum_ranks *m, const level_ctx *lc, xf_error *err)
{
    levels_head h;
    memset(&h, 0, sizeof h);
    h.cfg_hash = xf_enum_config_hash(m->cfg);
    h.level = lc->level;
    xf_status st = XF_OK;
    for (int l = 0; l < lc->level && st == XF_OK; l++) {
        h.l = l;
        h.total = lc->levels[l].n;
        h.at = 0;
        do { /* at least one message a level, even an empty one */
            h.count = h.total - h.at < LEVEL_CHUNK ? h.total - h.at : LEVEL_CHUNK;
            m->msg.len = 0;
            if (xf_cluster_buf_append(&m->msg, &h, sizeof h) ||
                xf_cluster_buf_append(&m->msg, lc->levels[l].v + h.at, h.count * sizeof(grec)))
                return XF_FAIL(err, XF_ERR_NOMEM, "out of memory sending level %d to the ranks", l);
            for (int r = 1; r < m->size && st == XF_OK; r++)
                st = xf_cluster_send(m->msg.p, m->msg.len, r, TAG_LEVELS, err);
            h.at += h.count;
        } while (st == XF_OK && h.at < h.total);
    }
    m->ms_sum[0] = m->ms_sum[1] = 0;
    m->items[0] = m->items[1] = 0;
    return st;
}

/* One call's queue: items [0, n) of one kind, cut into pieces. */
typedef struct queue {
    enum_ranks *m;
    int kind;        /* 0 extend, 1 confirm */
    uint64_t n, next;
    piece *pieces;
    size_t n_pieces, cap;
    const level_ctx *lc;  /* extend */
    uint64_t base;        /* extend: first parent */
    childbuf *bufs;       /* extend: one per piece */
    extend_counts counts;
    const confirm_pair *pairs; /* confirm */
    collision *cols;
} queue;

static uint64_t piece_size(const queue *q)
{
    const enum_ranks *m = q->m;
    uint64_t left = q->n - q->next;
    double mean = m->items[q->kind] ? m->ms_sum[q->kind] / (double)m->items[q->kind] : 0;
    double want = mean > 0 ? PIECE_MS / mean : 4;
    uint64_t b = want > PIECE_MAX ? PIECE_MAX : (uint64_t)want;
    uint64_t fair = left / (4 * (uint64_t)(m->size - 1));
    if (b > fair) b = fair;
    if (b < 1) b = 1;
    return b > left ? left : b;
}

static xf_status send_piece(queue *q, int r, xf_error *err)
{
    enum_ranks *m = q->m;
    if (q->n_pieces == q->cap) {
        size_t cap = q->cap ? 2 * q->cap : 64;
        piece *p = xf_realloc(q->pieces, cap * sizeof *p);
        childbuf *b = q->kind == 0 ? xf_realloc(q->bufs, cap * sizeof *b) : NULL;
        if (p) q->pieces = p;
        if (b) {
            memset(b + q->cap, 0, (cap - q->cap) * sizeof *b);
            q->bufs = b;
        }
        if (!p || (q->kind == 0 && !b))
            return XF_FAIL(err, XF_ERR_NOMEM, "out of memory for %zu pieces of work", cap);
        q->cap = cap;
    }
    piece pc = {q->next, q->next + piece_size(q)};
    /* Sent without blocking: a worker may be busy sending its last result
     * to this rank, which only receives it after this send returns. */
    slot *sl = &m->out[r][(m->head[r] + m->n_out[r]) % OUTSTANDING];
    sl->buf.len = 0;
    int bad, tag;
    if (q->kind == 0) {
        extend_head h = {q->lc->level, q->base + pc.lo, q->base + pc.hi};
        bad = xf_cluster_buf_append(&sl->buf, &h, sizeof h);
        tag = TAG_EXTEND;
    } else {
        bad = xf_cluster_buf_append(&sl->buf, q->pairs + pc.lo,
                                    (pc.hi - pc.lo) * sizeof(confirm_pair));
        tag = TAG_CONFIRM;
    }
    if (bad) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory for a piece of work");
    int rc = MPI_Isend(sl->buf.p, (int)sl->buf.len, MPI_BYTE, r, tag, MPI_COMM_WORLD, &sl->req);
    if (rc != MPI_SUCCESS) return xf_cluster_fail(err, rc, "sending a piece of work");
    sl->piece = q->n_pieces;
    m->n_out[r]++;
    q->pieces[q->n_pieces++] = pc;
    q->next = pc.hi;
    m->pieces++;
    return XF_OK;
}

/* Takes rank r's result of piece pc (body in m->msg). */
static xf_status take_result(queue *q, int r, size_t k, xf_error *err)
{
    enum_ranks *m = q->m;
    piece pc = q->pieces[k];
    uint64_t n_items = pc.hi - pc.lo;
    result_head h;
    if (m->msg.len < sizeof h) goto bad;
    memcpy(&h, m->msg.p, sizeof h);
    const uint8_t *body = m->msg.p + sizeof h;
    size_t len = m->msg.len - sizeof h;
    m->ms_sum[q->kind] += h.ms;
    m->items[q->kind] += n_items;
    if (q->kind == 0) {
        if (len != h.n * sizeof(child)) goto bad;
        childbuf *b = &q->bufs[k];
        b->v = xf_malloc(len + 1);
        if (!b->v) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory for %llu new graphs",
                                  (unsigned long long)h.n);
        memcpy(b->v, body, len);
        b->n = b->cap = h.n;
        q->counts.reducible += h.counts.reducible;
        q->counts.memo_hits += h.counts.memo_hits;
        q->counts.memo_misses += h.counts.memo_misses;
        return XF_OK;
    }
    if (h.n != n_items || len < n_items * sizeof(confirm_item)) goto bad;
    cand_list cl;
    memset(&cl, 0, sizeof cl);
    xf_status st = en_cand_list_blob_read(body + n_items * sizeof(confirm_item),
                                       len - n_items * sizeof(confirm_item), &cl, err);
    size_t at = 0;
    for (uint64_t i = 0; i < n_items && st == XF_OK; i++) {
        confirm_item it;
        memcpy(&it, body + i * sizeof it, sizeof it);
        collision *c = &q->cols[pc.lo + i];
        if (it.result == CONFIRM_OK) {
            if (at >= cl.n) {
                st = XF_FAIL(err, XF_ERR_INTERNAL, "MPI: rank %d sent fewer candidates than it confirmed", r);
                break;
            }
            if (m->take_records) {
                size_t rl;
                const uint8_t *rec = en_cand_list_record(&cl, at++, &rl);
                st = en_cand_list_push_record(&m->recs, rec, rl, err);
                c->rec = m->recs.n;
            } else {
                st = en_cand_list_get(&cl, at++, &c->cand.rule, err);
            }
            if (st != XF_OK) break;
            c->cand.src_ops = it.src_ops;
            c->cand.dst_ops = it.dst_ops;
            c->cand.float_max_abs = it.float_max_abs;
        }
        c->result = (confirm_result)it.result;
    }
    en_cand_list_free(&cl);
    return st;
bad:
    return XF_FAIL(err, XF_ERR_INTERNAL, "MPI: rank %d sent a result of %zu bytes that does not match its piece",
                   r, m->msg.len);
}

static xf_status run_queue(queue *q, xf_error *err)
{
    enum_ranks *m = q->m;
    xf_status st = XF_OK;
    int busy = 0;
    for (int k = 0; k < OUTSTANDING; k++)
        for (int r = 1; r < m->size && st == XF_OK && q->next < q->n; r++) {
            st = send_piece(q, r, err);
            busy += st == XF_OK; /* a piece that did not go out gets no answer */
        }
    /* After an error, hand out nothing more but collect every piece out,
     * so no stale result reaches a later call. */
    while (busy > 0) {
        MPI_Status s;
        xf_error e;
        double t = xf_clock_now();
        xf_status rs = xf_cluster_wait(MPI_ANY_SOURCE, &s, NULL, NULL, &e);
        if (rs == XF_OK) rs = xf_cluster_recv(&m->msg, &s, &e);
        m->wait_s += xf_clock_now() - t;
        if (rs != XF_OK) { /* MPI itself failed: nothing more will come */
            if (st == XF_OK && err) *err = e;
            if (st == XF_OK) st = rs;
            break;
        }
        int r = s.MPI_SOURCE;
        if (r < 1 || r >= m->size || m->n_out[r] == 0) {
            if (st == XF_OK) st = XF_FAIL(err, XF_ERR_INTERNAL, "MPI: an unexpected message from rank %d", r);
            continue;
        }
        slot *sl = &m->out[r][m->head[r]];
        size_t k = sl->piece;
        MPI_Wait(&sl->req, MPI_STATUS_IGNORE); /* it has arrived: r answered it */
        m->head[r] = (m->head[r] + 1) % OUTSTANDING;
        m->n_out[r]--;
        busy--;
        if (s.MPI_TAG == TAG_FAIL && st == XF_OK)
            st = XF_FAIL(err, XF_ERR_INTERNAL, "MPI rank %d: %s", r, (const char *)m->msg.p);
        else if (s.MPI_TAG == TAG_RESULT && st == XF_OK)
            st = take_result(q, r, k, err);
        if (st == XF_OK && q->next < q->n) {
            st = send_piece(q, r, err);
            busy += st == XF_OK;
        }
    }
    return st;
}

xf_status en_ranks_extend(enum_ranks *m, const level_ctx *lc, uint64_t lo, uint64_t hi,
                            childbuf **bufs, uint64_t *n_bufs, extend_counts *counts,
                            xf_error *err)
{
    queue q;
    memset(&q, 0, sizeof q);
    q.m = m;
    q.kind = 0;
    q.n = hi - lo;
    q.lc = lc;
    q.base = lo;
    xf_status st = run_queue(&q, err);
    xf_free(q.pieces);
    if (st != XF_OK) {
        for (size_t k = 0; k < q.n_pieces; k++) xf_free(q.bufs[k].v);
        xf_free(q.bufs);
        return st;
    }
    *bufs = q.bufs;
    *n_bufs = q.n_pieces;
    *counts = q.counts;
    return XF_OK;
}

xf_status en_ranks_confirm(enum_ranks *m, const confirm_pair *pairs, collision *cols, size_t n,
                             xf_error *err)
{
    queue q;
    memset(&q, 0, sizeof q);
    q.m = m;
    q.kind = 1;
    q.n = n;
    q.pairs = pairs;
    q.cols = cols;
    m->recs.len = m->recs.n = 0;
    xf_status st = run_queue(&q, err);
    xf_free(q.pieces);
    return st;
}

/* -------------------------------------------------------- worker ranks */

typedef struct server {
    xf_enum_config cfg;
    evalue in0[XF_ENUM_MAX_INPUTS], in1[XF_ENUM_MAX_INPUTS];
    worker w;
    confirmer conf;
    glevel levels[XF_ENUM_MAX_OPS + 1];
    hset reps;
    int level; /* levels below it received */
    xf_cluster_buf out;
    childbuf children;
    cand_list cands;
} server;

/* Takes one chunk of the stored levels; the first chunk (of level 0)
 * replaces what the worker had, the last one (of level level-1) makes the
 * representatives' hashes and the levels usable. */
static xf_status take_levels(server *s, const xf_cluster_buf *in, xf_error *err)
{
    levels_head h;
    if (in->len < sizeof h) return XF_FAIL(err, XF_ERR_INVALID, "MPI: a level message without a header");
    memcpy(&h, in->p, sizeof h);
    if (h.cfg_hash != xf_enum_config_hash(&s->cfg))
        return XF_FAIL(err, XF_ERR_INVALID,
                       "MPI: this rank's configuration differs from rank 0's (the vocabulary or "
                       "inputs file must read the same on every rank)");
    if (h.level < 1 || h.level > s->cfg.max_ops || h.l < 0 || h.l >= h.level || h.at > h.total ||
        h.count > h.total - h.at || (in->len - sizeof h) / sizeof(grec) != h.count)
        return XF_FAIL(err, XF_ERR_INVALID, "MPI: a malformed level message");
    if (h.l == 0 && h.at == 0) {
        s->level = 0;
        for (int l = 0; l <= XF_ENUM_MAX_OPS; l++) s->levels[l].n = 0;
    }
    glevel *lv = &s->levels[h.l];
    if (lv->n != h.at) return XF_FAIL(err, XF_ERR_INVALID, "MPI: level %d arrived out of order", h.l);
    if (lv->cap < h.total) {
        grec *v = xf_realloc(lv->v, h.total * sizeof *v);
        if (!v) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory for %llu graphs of level %d",
                               (unsigned long long)h.total, h.l);
        lv->v = v;
        lv->cap = h.total;
    }
    if (h.count) memcpy(lv->v + h.at, in->p + sizeof h, h.count * sizeof(grec));
    lv->n = h.at + h.count;
    if (h.l != h.level - 1 || lv->n != h.total) return XF_OK;
    en_hset_free(&s->reps);
    xf_status st = en_hset_init(&s->reps, 1 << 16, err);
    for (int l = 0; l < h.level && st == XF_OK; l++)
        st = en_add_reps(&s->cfg, s->levels, l, &s->reps, NULL, err);
    if (st == XF_OK) s->level = h.level;
    return st;
}

static xf_status do_extend(server *s, const xf_cluster_buf *in, xf_error *err)
{
    extend_head h;
    if (in->len != sizeof h) return XF_FAIL(err, XF_ERR_INVALID, "MPI: a malformed extension piece");
    memcpy(&h, in->p, sizeof h);
    if (h.level != s->level || h.lo > h.hi || h.hi > s->levels[h.level - 1].n)
        return XF_FAIL(err, XF_ERR_INTERNAL,
                       "MPI: parents %llu..%llu of level %d asked of a rank that has level %d",
                       (unsigned long long)h.lo, (unsigned long long)h.hi, (int)h.level, s->level);
    level_ctx lc = {&s->cfg, s->levels, &s->reps, h.level,
                    s->cfg.max_outputs + s->cfg.max_ops - h.level};
    s->children.n = 0;
    xf_status st = XF_OK;
    for (uint64_t i = h.lo; i < h.hi && st == XF_OK; i++)
        st = en_extend_parent(&s->w, &lc, (uint32_t)i, &s->children, err);
    if (st != XF_OK) return st;
    result_head r;
    memset(&r, 0, sizeof r);
    r.n = s->children.n;
    r.counts.reducible = s->w.reducible;
    r.counts.memo_hits = s->w.memo.hits;
    r.counts.memo_misses = s->w.memo.misses;
    s->w.reducible = s->w.memo.hits = s->w.memo.misses = 0;
    s->out.len = sizeof r;
    if (xf_cluster_buf_reserve(&s->out, 0) ||
        xf_cluster_buf_append(&s->out, s->children.v, s->children.n * sizeof(child)))
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory sending %zu new graphs", s->children.n);
    memcpy(s->out.p, &r, sizeof r);
    return XF_OK;
}

static xf_status do_confirm(server *s, const xf_cluster_buf *in, xf_error *err)
{
    if (in->len % sizeof(confirm_pair))
        return XF_FAIL(err, XF_ERR_INVALID, "MPI: a malformed confirmation piece");
    size_t n = in->len / sizeof(confirm_pair);
    result_head r;
    memset(&r, 0, sizeof r);
    r.n = n;
    s->out.len = 0;
    if (xf_cluster_buf_append(&s->out, &r, sizeof r) ||
        xf_cluster_buf_reserve(&s->out, n * sizeof(confirm_item)))
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory for %zu confirmations", n);
    s->out.len += n * sizeof(confirm_item);
    s->cands.len = s->cands.n = 0;
    xf_status st = XF_OK;
    for (size_t i = 0; i < n && st == XF_OK; i++) {
        confirm_pair g;
        memcpy(&g, in->p + i * sizeof g, sizeof g);
        xf_enum_candidate cand;
        memset(&cand, 0, sizeof cand);
        confirm_item it;
        memset(&it, 0, sizeof it);
        it.result = (int32_t)en_confirm(&s->cfg, &s->conf, &g.src, &g.dst, g.fp, &cand, err);
        if (it.result == CONFIRM_ERROR) {
            st = err && err->code ? err->code : XF_ERR_INTERNAL;
            break;
        }
        if (it.result == CONFIRM_OK) {
            it.src_ops = cand.src_ops;
            it.dst_ops = cand.dst_ops;
            it.float_max_abs = cand.float_max_abs;
            st = en_cand_list_push(&s->cands, &cand.rule, err);
            xf_rule_free(&cand.rule);
        }
        memcpy(s->out.p + sizeof r + i * sizeof it, &it, sizeof it);
    }
    if (st != XF_OK) return st;
    size_t blob_len = 0;
    const uint8_t *blob = s->cands.n ? en_cand_list_blob(&s->cands, &blob_len) : NULL;
    if (s->cands.n && !blob) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory sending candidates");
    if (xf_cluster_buf_append(&s->out, blob, blob_len))
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory sending %zu candidates", s->cands.n);
    return XF_OK;
}

static xf_status server_init(server *s, const xf_enum_generate_options *o, xf_error *err)
{
    xf_enum_config_init(&s->cfg);
    xf_status st = en_generate_config(o, &s->cfg, err);
    if (st == XF_OK) st = en_make_inputs(&s->cfg, 0, s->in0, err);
    if (st == XF_OK) st = en_make_inputs(&s->cfg, 1, s->in1, err);
    if (st == XF_OK) st = en_worker_init(&s->w, &s->cfg, s->in0, err);
    if (st == XF_OK) st = en_confirmer_init(&s->conf, &s->cfg, s->in0, s->in1, err);
    if (st == XF_OK) st = en_hset_init(&s->reps, 1 << 16, err);
    return st;
}

static void server_free(server *s)
{
    for (int i = 0; i < XF_ENUM_MAX_INPUTS; i++) {
        xf_free(s->in0[i].d);
        xf_free(s->in1[i].d);
    }
    en_worker_free(&s->w);
    en_confirmer_free(&s->conf);
    en_hset_free(&s->reps);
    for (int l = 0; l <= XF_ENUM_MAX_OPS; l++) en_glevel_free(&s->levels[l]);
    xf_cluster_buf_free(&s->out);
    xf_free(s->children.v);
    en_cand_list_free(&s->cands);
    xf_enum_config_free(&s->cfg);
}

xf_status xf_enum_mpi_serve(const xf_enum_generate_options *o, xf_enum_mpi_figures *fig,
                            xf_error *err)
{
    server s;
    memset(&s, 0, sizeof s);
    memset(fig, 0, sizeof *fig);
    /* A configuration error is reported when work arrives, so rank 0 hears of it. */
    xf_error setup_err;
    xf_error_clear(&setup_err);
    xf_status setup = server_init(&s, o, &setup_err);
    xf_cluster_buf in = {0};
    xf_error level_err;
    xf_error_clear(&level_err);
    xf_status level_st = XF_OK;
    xf_status st = XF_OK;
    double t0 = xf_clock_now();
    for (;;) {
        MPI_Status ms;
        double tw = xf_clock_now();
        st = xf_cluster_wait(0, &ms, NULL, NULL, err);
        if (st == XF_OK) st = xf_cluster_recv(&in, &ms, err);
        fig->wait_seconds += xf_clock_now() - tw;
        if (st != XF_OK || ms.MPI_TAG == XF_CLUSTER_TAG_STOP) break;
        if (ms.MPI_TAG == TAG_LEVELS) { /* no reply: a failure answers the next piece */
            if (setup == XF_OK && level_st == XF_OK) level_st = take_levels(&s, &in, &level_err);
            continue;
        }
        xf_error e;
        xf_error_clear(&e);
        double t = xf_clock_now();
        xf_status ws = setup != XF_OK ? (e = setup_err, setup)
                       : level_st != XF_OK ? (e = level_err, level_st)
                       : ms.MPI_TAG == TAG_EXTEND ? do_extend(&s, &in, &e)
                       : ms.MPI_TAG == TAG_CONFIRM ? do_confirm(&s, &in, &e)
                                                   : XF_FAIL(&e, XF_ERR_INTERNAL,
                                                             "MPI: unknown message tag %d", ms.MPI_TAG);
        if (ws == XF_OK) {
            double ms_done = (xf_clock_now() - t) * 1e3;
            memcpy(s.out.p + offsetof(result_head, ms), &ms_done, sizeof ms_done);
            st = xf_cluster_send(s.out.p, s.out.len, 0, TAG_RESULT, err);
            fig->pieces++;
        } else {
            st = xf_cluster_send(e.msg, strlen(e.msg), 0, TAG_FAIL, err);
        }
        if (st != XF_OK) break;
    }
    fig->seconds = xf_clock_now() - t0;
    xf_cluster_buf_free(&in);
    server_free(&s);
    return st;
}
