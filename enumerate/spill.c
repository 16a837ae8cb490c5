/*
 * spill.c — the last level's fingerprints on disk (see spill_internal.h): buffered
 * appends of fixed-size records to 64 bucket files and one pending file,
 * then a bucket-at-a-time pass that finds repeated fingerprints with a
 * small hash table (threads take buckets in turn through xf_parallel,
 * each with its own table), and a sort of every collision by its position
 * in the level. Records are in the host's byte order, like the checkpoint.
 */
#include "spill_internal.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CLASS_REC 24   /* fp 8, seq 6, parent 4, var 2, in 2, n_in 1, n_out 1 */
#define PENDING_REC 32 /* a class record, then the class: ref 4, tag 2, in 2 */
#define FILE_BUFFER (1 << 18)
#define READ_RECS 4096

static uint64_t file_rec_size(int i)
{
    return i < SPILL_BUCKETS ? CLASS_REC : PENDING_REC;
}

static void pack_child(uint8_t *p, const child *c, uint64_t seq)
{
    memcpy(p, &c->fp, 8);
    memcpy(p + 8, &seq, 6); /* 2^48 graphs a level */
    memcpy(p + 14, &c->parent, 4);
    memcpy(p + 18, &c->var, 2);
    memcpy(p + 20, c->in, 2);
    p[22] = c->n_in;
    p[23] = c->n_outputs;
}

static void unpack_child(const uint8_t *p, child *c, uint64_t *seq)
{
    memset(c, 0, sizeof *c);
    *seq = 0;
    memcpy(&c->fp, p, 8);
    memcpy(seq, p + 8, 6);
    memcpy(&c->parent, p + 14, 4);
    memcpy(&c->var, p + 18, 2);
    memcpy(c->in, p + 20, 2);
    c->n_in = p[22];
    c->n_outputs = p[23];
}

static void file_name(const spill *s, int i, char *buf, size_t n)
{
    snprintf(buf, n, "%s.%02d", s->base, i);
}

static xf_status io_fail(const spill *s, int i, const char *what, xf_error *err)
{
    char path[4096] = "a temporary file";
    if (s->base) file_name(s, i, path, sizeof path);
    return XF_FAIL(err, XF_ERR_IO, "enumerate: cannot %s %s: %s (the last level's fingerprints "
                   "go to disk: check free space)", what, path, strerror(errno));
}

xf_status en_spill_open(spill *s, const char *ckpt, const uint64_t *lens, xf_error *err)
{
    memset(s, 0, sizeof *s);
    if (ckpt) {
        size_t n = strlen(ckpt) + 8;
        s->base = xf_malloc(n);
        if (!s->base) return XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory");
        snprintf(s->base, n, "%s.spill", ckpt);
    }
    for (int i = 0; i < SPILL_FILES; i++) {
        char path[4096];
        if (s->base) file_name(s, i, path, sizeof path);
        if (!s->base) s->f[i] = tmpfile();
        else s->f[i] = fopen(path, lens ? "r+b" : "w+b");
        if (!s->f[i]) {
            xf_status st = io_fail(s, i, lens ? "reopen" : "create", err);
            en_spill_close(s);
            return st;
        }
        setvbuf(s->f[i], NULL, _IOFBF, FILE_BUFFER);
        if (!lens) continue;
        s->len[i] = lens[i];
        if (lens[i] % file_rec_size(i) != 0 || fseek(s->f[i], 0, SEEK_END) != 0 ||
            (uint64_t)ftell(s->f[i]) < lens[i] || ftruncate(fileno(s->f[i]), (off_t)lens[i]) != 0 ||
            fseek(s->f[i], (long)lens[i], SEEK_SET) != 0) {
            if (errno == 0) errno = EINVAL;
            xf_status st = XF_FAIL(err, XF_ERR_PARSE,
                                   "enumerate: %s.%02d is shorter than the checkpoint says (%llu "
                                   "bytes); delete the checkpoint to start over",
                                   s->base ? s->base : "spill", i, (unsigned long long)lens[i]);
            en_spill_close(s);
            return st;
        }
    }
    return XF_OK;
}

static xf_status append(spill *s, int i, const uint8_t *rec, xf_error *err)
{
    size_t n = (size_t)file_rec_size(i);
    if (fwrite(rec, 1, n, s->f[i]) != n) return io_fail(s, i, "write", err);
    s->len[i] += n;
    return XF_OK;
}

xf_status en_spill_add_class(spill *s, const child *c, uint64_t seq, xf_error *err)
{
    uint8_t rec[CLASS_REC];
    pack_child(rec, c, seq);
    return append(s, (int)(c->fp >> 58), rec, err);
}

xf_status en_spill_add_pending(spill *s, const child *c, uint64_t seq, const centry *rep,
                            xf_error *err)
{
    uint8_t rec[PENDING_REC];
    pack_child(rec, c, seq);
    memcpy(rec + 24, &rep->ref, 4);
    memcpy(rec + 28, &rep->tag, 2);
    memcpy(rec + 30, rep->in, 2);
    return append(s, SPILL_BUCKETS, rec, err);
}

xf_status en_spill_flush(spill *s, uint64_t *lens, xf_error *err)
{
    for (int i = 0; i < SPILL_FILES; i++) {
        if (fflush(s->f[i]) != 0 || (s->base && fsync(fileno(s->f[i])) != 0))
            return io_fail(s, i, "write", err);
        lens[i] = s->len[i];
    }
    return XF_OK;
}

/* First graph of each fingerprint in a bucket: fp 0 marks an empty slot
 * (class keys are never 0: a 0 key would also be an empty class slot). */
typedef struct first {
    uint64_t fp;
    uint32_t parent;
    uint16_t var;
    uint8_t in[MAX_NODE_INPUTS];
} first;

static xf_status push_col(spill_result *r, size_t *cap, uint64_t seq, const child *c,
                          const centry *rep, xf_error *err)
{
    if (r->n_cols == *cap) {
        size_t nc = *cap ? *cap * 2 : 4096;
        spill_collision *v = xf_realloc(r->cols, nc * sizeof *v);
        if (!v) return XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory for %zu collisions", nc);
        r->cols = v;
        *cap = nc;
    }
    spill_collision *x = &r->cols[r->n_cols++];
    x->seq = seq;
    x->c = *c;
    x->rep = *rep;
    return XF_OK;
}

/* Reads file i from the start in blocks, calling `each` per record. */
typedef xf_status (*rec_fn)(void *user, const uint8_t *rec, xf_error *err);

static xf_status read_file(spill *s, int i, rec_fn each, void *user, xf_error *err)
{
    size_t rs = (size_t)file_rec_size(i);
    uint8_t *buf = xf_malloc(rs * READ_RECS);
    if (!buf) return XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory");
    xf_status st = XF_OK;
    if (fflush(s->f[i]) != 0 || fseek(s->f[i], 0, SEEK_SET) != 0) st = io_fail(s, i, "read", err);
    for (uint64_t left = s->len[i] / rs; st == XF_OK && left > 0;) {
        size_t n = left < READ_RECS ? (size_t)left : READ_RECS;
        if (fread(buf, rs, n, s->f[i]) != n) {
            st = io_fail(s, i, "read back", err);
            break;
        }
        for (size_t k = 0; k < n && st == XF_OK; k++) st = each(user, buf + k * rs, err);
        left -= n;
    }
    xf_free(buf);
    return st;
}

/* One thread's pass over its buckets: the table of first graphs (reused
 * from bucket to bucket) and what it found. */
typedef struct bucket_pass {
    first *slots;
    size_t cap;
    int max_outputs;
    spill_result res;
    size_t cols_cap;
} bucket_pass;

static xf_status bucket_rec(void *user, const uint8_t *rec, xf_error *err)
{
    bucket_pass *b = user;
    child c;
    uint64_t seq;
    unpack_child(rec, &c, &seq);
    size_t i = (size_t)((c.fp * 0x9E3779B97F4A7C15ull) >> 20) & (b->cap - 1);
    while (b->slots[i].fp != 0 && b->slots[i].fp != c.fp) i = (i + 1) & (b->cap - 1);
    first *f = &b->slots[i];
    if (f->fp == 0) {
        f->fp = c.fp;
        f->parent = c.parent;
        f->var = c.var;
        memcpy(f->in, c.in, MAX_NODE_INPUTS);
        b->res.classes++;
        return XF_OK;
    }
    b->res.collisions++;
    if (c.n_outputs > b->max_outputs) {
        b->res.too_many_outputs++;
        return XF_OK;
    }
    centry rep = {f->fp, f->parent, f->var, {f->in[0], f->in[1]}};
    return push_col(&b->res, &b->cols_cap, seq, &c, &rep, err);
}

static xf_status pending_rec(void *user, const uint8_t *rec, xf_error *err)
{
    bucket_pass *b = user;
    child c;
    uint64_t seq;
    unpack_child(rec, &c, &seq);
    centry rep;
    rep.fp = c.fp;
    memcpy(&rep.ref, rec + 24, 4);
    memcpy(&rep.tag, rec + 28, 2);
    memcpy(rep.in, rec + 30, 2);
    return push_col(&b->res, &b->cols_cap, seq, &c, &rep, err);
}

static xf_status read_bucket(spill *s, int i, bucket_pass *b, xf_error *err)
{
    uint64_t n = s->len[i] / CLASS_REC;
    size_t cap = 1024;
    while ((uint64_t)cap < n + n / 3 + 1) cap *= 2;
    if (cap > b->cap) {
        xf_free(b->slots);
        b->slots = xf_malloc(cap * sizeof *b->slots);
        b->cap = b->slots ? cap : 0;
        if (!b->slots)
            return XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory reading back %llu "
                           "fingerprints", (unsigned long long)n);
    }
    memset(b->slots, 0, b->cap * sizeof *b->slots);
    return read_file(s, i, bucket_rec, b, err);
}

/* The buckets are independent (each has its own file and table), so
 * threads take them in turn (xf_parallel), each with its own pass; the
 * calling thread (worker 0) reports progress. */
typedef struct finish_job {
    spill *s;
    bucket_pass *pass; /* one per thread */
    atomic_int done;
    void (*progress)(void *user, int done);
    void *user;
} finish_job;

static xf_status read_buckets(void *ctx, int thread, size_t lo, size_t hi, xf_error *err)
{
    finish_job *j = ctx;
    for (size_t i = lo; i < hi; i++) {
        xf_status st = read_bucket(j->s, (int)i, &j->pass[thread], err);
        if (st != XF_OK) return st;
        int done = atomic_fetch_add(&j->done, 1) + 1;
        if (thread == 0 && j->progress) j->progress(j->user, done);
    }
    return XF_OK;
}

static int by_seq(const void *a, const void *b)
{
    uint64_t x = ((const spill_collision *)a)->seq, y = ((const spill_collision *)b)->seq;
    return x < y ? -1 : x > y;
}

/* Appends b's collisions and counts to res and frees b's. */
static xf_status gather(spill_result *res, size_t *cap, bucket_pass *b, xf_error *err)
{
    res->classes += b->res.classes;
    res->collisions += b->res.collisions;
    res->too_many_outputs += b->res.too_many_outputs;
    xf_status st = XF_OK;
    if (b->res.n_cols > 0 && res->n_cols + b->res.n_cols > *cap) {
        size_t nc = res->n_cols + b->res.n_cols;
        spill_collision *v = xf_realloc(res->cols, nc * sizeof *v);
        if (!v) st = XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory for %zu collisions", nc);
        else {
            res->cols = v;
            *cap = nc;
        }
    }
    if (st == XF_OK && b->res.n_cols > 0) {
        memcpy(res->cols + res->n_cols, b->res.cols, b->res.n_cols * sizeof *res->cols);
        res->n_cols += b->res.n_cols;
    }
    en_spill_result_free(&b->res);
    return st;
}

xf_status en_spill_finish(spill *s, int max_outputs, int threads, spill_result *res,
                       void (*progress)(void *user, int done), void *user, xf_error *err)
{
    memset(res, 0, sizeof *res);
    bucket_pass pend;
    memset(&pend, 0, sizeof pend);
    xf_status st = read_file(s, SPILL_BUCKETS, pending_rec, &pend, err);
    *res = pend.res;
    size_t cap = pend.cols_cap;
    if (st != XF_OK) {
        en_spill_result_free(res);
        return st;
    }
    if (threads < 1) threads = 1;
    if (threads > SPILL_BUCKETS) threads = SPILL_BUCKETS;
    finish_job j;
    memset(&j, 0, sizeof j);
    j.s = s;
    atomic_init(&j.done, 0);
    j.progress = progress;
    j.user = user;
    j.pass = xf_calloc((size_t)threads, sizeof *j.pass);
    double cpu[SPILL_BUCKETS];
    xf_parallel_plan plan = {1, cpu};
    if (!j.pass) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory for %d threads", threads);
    } else {
        for (int t = 0; t < threads; t++) j.pass[t].max_outputs = max_outputs;
        st = xf_parallel(threads, 0, SPILL_BUCKETS, &plan, read_buckets, &j, err);
        for (int t = 1; t < threads; t++) res->helper_cpu += cpu[t];
        for (int t = 0; t < threads; t++) xf_free(j.pass[t].slots); /* before the results grow */
        for (int t = 0; t < threads; t++) { /* every thread's, failed or not, is freed */
            xf_status g = gather(res, &cap, &j.pass[t], st == XF_OK ? err : NULL);
            if (st == XF_OK) st = g;
        }
    }
    xf_free(j.pass);
    if (st != XF_OK) {
        en_spill_result_free(res);
        return st;
    }
    if (res->n_cols > 1) qsort(res->cols, res->n_cols, sizeof *res->cols, by_seq);
    return XF_OK;
}

void en_spill_result_free(spill_result *r)
{
    xf_free(r->cols);
    memset(r, 0, sizeof *r);
}

xf_status xf_enum_checkpoint_remove(const char *path, xf_error *err)
{
    size_t n = strlen(path) + 16;
    char *name = xf_malloc(n);
    if (!name) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
    xf_status st = XF_OK;
    for (int i = -1; i < SPILL_FILES && st == XF_OK; i++) {
        if (i < 0) snprintf(name, n, "%s", path);
        else snprintf(name, n, "%s.spill.%02d", path, i);
        if (remove(name) != 0 && errno != ENOENT)
            st = XF_FAIL(err, XF_ERR_IO, "cannot remove %s: %s", name, strerror(errno));
    }
    xf_free(name);
    return st;
}

void en_spill_close(spill *s)
{
    for (int i = 0; i < SPILL_FILES; i++)
        if (s->f[i]) fclose(s->f[i]);
    xf_free(s->base);
    memset(s, 0, sizeof *s);
}
