/*
 * run.c — xf_enum_run: the level loop. Level n is built from the stored
 * graphs of level n-1 in batches of parents. Each batch has three phases:
 *   1. parallel: workers take chunks of parents and build their children
 *      (extend.c) into one buffer per chunk;
 *   2. sequential, in chunk order: each child is looked up in the class
 *      table; a new fingerprint makes it the class representative, an old
 *      one makes it a collision to confirm; graphs are stored for the next
 *      level;
 *   3. parallel: collisions are confirmed (confirm.c); then, in order,
 *      confirmed candidates go to the callback.
 * The last level differs in phases 2 and 3: its graphs are never extended,
 * so instead of entering the class table they go to disk (spill_internal.h) with
 * their position in the level, and when every parent is done the spill is
 * read back bucket by bucket, its collisions sorted by position, confirmed
 * in parallel chunks and handed out in that order: the same candidates in
 * the same order as an in-memory table gives, in a fraction of the memory.
 * The order of everything the caller sees is that of phase 2, which does
 * not depend on the thread count. Between batches the stop flag is polled,
 * progress reported, and on stop a checkpoint written.
 *
 * Unit of parallel work (the threads take them in turn through ir's one
 * parallel loop, xf_parallel, one at a time): a chunk of CHUNK_PARENTS
 * consecutive parents of one level (en_extend_parent on each, children
 * into one buffer per chunk), or CONFIRM_THREAD_CHUNK collisions;
 * a batch of BATCH_PARENTS parents is the unit between which results are
 * merged in order, and a chunk of collisions (CONFIRM_CHUNK at the last
 * level) the unit of confirmation. A chunk needs only the stored levels
 * below it and the representatives' structural hashes, so it can be
 * computed anywhere that has those and merged in chunk order.
 */
#include "pipeline_internal.h"
#include "ranks_internal.h"
#include "spill_internal.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK_PARENTS 4
#define CONFIRM_THREAD_CHUNK 4 /* collisions a thread confirms at a time */
#define BATCH_PARENTS 2048
#define CONFIRM_CHUNK 1024 /* last level: collisions confirmed between stop checks */
#define PREFETCH_AHEAD 8   /* merge: class-table slots loaded this many children ahead */

typedef struct run {
    const xf_enum_config *cfg;
    const xf_enum_options *opt;
    uint64_t cfg_hash;
    enum_state st;
    ctable classes;
    hset reps;
    evalue in0[XF_ENUM_MAX_INPUTS], in1[XF_ENUM_MAX_INPUTS];
    int n_threads;
    worker *workers;
    confirmer *conf;   /* one per worker */
    cand_list *recs;   /* one per worker, taking records: the last batch's candidates */
    double t0, last_progress, level_t0;
    uint64_t level_parents0;
    spill sp;          /* the last level's fingerprints */
    int spilling;      /* sp is open */
    int merged;        /* last level: spill buckets read back so far */
    double merge_t0;
    uint64_t confirmed, to_confirm; /* last level: its collisions, confirmed so far */
    double confirm_t0;
#ifdef XF_HAVE_MPI
    enum_ranks *ranks; /* under MPI: the worker ranks do the parallel phases */
#endif
} run;

/* ------------------------------------------------------------ parallel jobs */

/* One parallel phase of a batch, on the run's threads (xf_parallel); a
 * thread's own state is r->workers[t], r->conf[t] and r->recs[t]. */
typedef struct job {
    run *r;
    const level_ctx *lc;
    uint64_t begin, end; /* extend: the batch's parents */
    childbuf *bufs;      /* extend: one per CHUNK_PARENTS parents */
    int lookup;          /* extend at the last level: each buffer's classes looked up too */
    collision *cols;     /* confirm */
} job;

/* The representative a class entry points to. */
static void rep_graph(const level_ctx *lc, const centry *e, egraph *g)
{
    if (e->tag & CENTRY_STORED) {
        en_egraph_from_store(lc->cfg, lc->levels, e->tag & 0xFF, e->ref, g);
        return;
    }
    child c;
    memset(&c, 0, sizeof c);
    c.parent = e->ref;
    c.var = e->tag;
    c.n_in = (uint8_t)en_var_arity(&lc->cfg->ops[e->tag]);
    memcpy(c.in, e->in, MAX_NODE_INPUTS);
    en_child_graph(lc, &c, g);
}

/* The class entry of every child of b (the last level: the table does not
 * change while it is built, so the threads that built the children look
 * them up, and the serial merge only writes them to the spill). */
static xf_status lookup_classes(const ctable *classes, childbuf *b, xf_error *err)
{
    if (b->n == 0) return XF_OK;
    b->rep = xf_malloc(b->n * sizeof *b->rep);
    if (!b->rep) return XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory for %zu new graphs", b->n);
    for (size_t i = 0; i < b->n; i++) {
        if (i + PREFETCH_AHEAD < b->n) /* the class table is far larger than the caches */
            en_ctable_prefetch(classes, b->v[i + PREFETCH_AHEAD].fp);
        b->rep[i] = en_ctable_find(classes, b->v[i].fp);
    }
    return XF_OK;
}

/* Confirms one collision; taking records, a candidate is serialized here,
 * in parallel, into the thread's list (the serial hand-out only passes the
 * record on). */
static xf_status confirm_one(run *r, const level_ctx *lc, int t, collision *col, xf_error *err)
{
    egraph src, dst;
    en_child_graph(lc, &col->c, &src);
    rep_graph(lc, &col->rep, &dst);
    col->result = en_confirm(r->cfg, &r->conf[t], &src, &dst, col->c.fp, &col->cand, err);
    if (col->result == CONFIRM_ERROR) return err->code ? err->code : XF_ERR_INTERNAL;
    if (col->result != CONFIRM_OK || !r->opt->take_records) return XF_OK;
    xf_status st = en_cand_list_push(&r->recs[t], &col->cand.rule, err);
    xf_rule_free(&col->cand.rule);
    col->rec = r->recs[t].n;
    col->rec_thread = t;
    return st;
}

/* Extend: buffers [lo, hi) of the batch, each the children of
 * CHUNK_PARENTS consecutive parents. */
static xf_status extend_range(void *ctx, int t, size_t lo, size_t hi, xf_error *err)
{
    job *j = ctx;
    run *r = j->r;
    xf_status st = XF_OK;
    for (size_t b = lo; b < hi && st == XF_OK; b++) {
        uint64_t p = j->begin + b * CHUNK_PARENTS;
        uint64_t end = p + CHUNK_PARENTS < j->end ? p + CHUNK_PARENTS : j->end;
        for (; p < end && st == XF_OK; p++)
            st = en_extend_parent(&r->workers[t], j->lc, (uint32_t)p, &j->bufs[b], err);
        if (st == XF_OK && j->lookup) st = lookup_classes(&r->classes, &j->bufs[b], err);
    }
    return st;
}

/* Confirm: collisions [lo, hi). */
static xf_status confirm_range(void *ctx, int t, size_t lo, size_t hi, xf_error *err)
{
    job *j = ctx;
    xf_status st = XF_OK;
    for (size_t i = lo; i < hi && st == XF_OK; i++) st = confirm_one(j->r, j->lc, t, &j->cols[i], err);
    return st;
}

/* fn over [0, n) on the run's threads, `chunk` at a time; their CPU
 * seconds are added to *cpu. */
static xf_status run_job(run *r, job *j, size_t n, size_t chunk, xf_range_fn fn, double *cpu,
                         xf_error *err)
{
    double thread_cpu[64]; /* xf_enum_run allows 64 threads */
    xf_parallel_plan plan = {chunk, thread_cpu};
    j->r = r;
    xf_status st = xf_parallel(r->n_threads, 0, n, &plan, fn, j, err);
    for (int t = 0; t < r->n_threads; t++) *cpu += thread_cpu[t];
    return st;
}

/* ------------------------------------------------------------------ state */

static void stats_bytes(run *r)
{
    uint64_t b = en_ctable_bytes(&r->classes) + (uint64_t)r->reps.cap * sizeof(uint64_t);
    for (int l = 0; l <= XF_ENUM_MAX_OPS; l++) b += (uint64_t)r->st.levels[l].cap * sizeof(grec);
    if (b > r->st.stats.store_bytes) r->st.stats.store_bytes = b;
}

/* Level 0: the empty graph (parent of every 1-operator graph) and the
 * 0-operator graphs whose outputs are 1..max_outputs inputs. */
static xf_status init_level0(run *r, xf_error *err)
{
    grec root;
    memset(&root, 0, sizeof root);
    root.var = VAR_NONE;
    root.flags = GREC_REP;
    xf_status st = en_glevel_push(&r->st.levels[0], &root, err);
    int n = r->cfg->n_inputs;
    for (uint32_t m = 1; st == XF_OK && m < (1u << n); m++) {
        int k = __builtin_popcount(m);
        if (k > r->cfg->max_outputs) continue;
        grec g;
        memset(&g, 0, sizeof g);
        g.var = VAR_NONE;
        g.flags = GREC_REP | GREC_LEAF;
        uint64_t h[XF_ENUM_MAX_OUTPUTS];
        for (int i = 0; i < n; i++)
            if (m & (1u << i)) {
                h[g.n_in] = r->in0[i].hash;
                g.in[g.n_in++] = (uint8_t)i;
            }
        g.fp = en_class_key(h, g.n_in, m);
        st = en_glevel_push(&r->st.levels[0], &g, err);
    }
    return st;
}

xf_status en_add_reps(const xf_enum_config *cfg, const glevel *levels, int l, hset *reps,
                        ctable *classes, xf_error *err)
{
    xf_status st = XF_OK;
    for (size_t i = 0; i < levels[l].n && st == XF_OK; i++) {
        const grec *g = &levels[l].v[i];
        if (!(g->flags & GREC_REP) || (l == 0 && !(g->flags & GREC_LEAF))) continue;
        egraph eg;
        en_egraph_from_store(cfg, levels, l, (uint32_t)i, &eg);
        centry e = {g->fp, (uint32_t)i, (uint16_t)(CENTRY_STORED | (unsigned)l), {0, 0}};
        if (classes) st = en_ctable_insert(classes, &e, err);
        if (st == XF_OK) st = en_hset_add(reps, en_egraph_struct_hash(&eg), err);
    }
    return st;
}

static xf_status rebuild_classes(run *r, xf_error *err)
{
    xf_status st = XF_OK;
    for (int l = 0; l <= XF_ENUM_MAX_OPS && st == XF_OK; l++)
        st = en_add_reps(r->cfg, r->st.levels, l, &r->reps, &r->classes, err);
    return st;
}

static xf_status checkpoint(run *r, xf_error *err)
{
    if (!r->opt->checkpoint) return XF_OK;
    if (r->spilling) {
        xf_status st = en_spill_flush(&r->sp, r->st.spill_len, err);
        if (st != XF_OK) return st;
    }
    if (r->opt->on_sync) {
        xf_status st = r->opt->on_sync(r->opt->user, err);
        if (st != XF_OK) return st;
    }
    return en_checkpoint_save(r->opt->checkpoint, r->cfg_hash, &r->st, err);
}

static xf_status progress(run *r, int force, xf_error *err)
{
    if (!r->opt->on_progress) return XF_OK;
    double t = xf_clock_now();
    if (!force && t - r->last_progress < r->opt->progress_every_s) return XF_OK;
    r->last_progress = t;
    xf_enum_progress p;
    memset(&p, 0, sizeof p);
    p.level = r->st.level;
    p.parents_done = r->st.next_parent;
    p.parents_total = r->st.level >= 1 && r->st.level <= r->cfg->max_ops
                          ? r->st.levels[r->st.level - 1].n
                          : 0;
    p.graphs = r->st.stats.graphs;
    p.classes = r->st.stats.classes;
    p.candidates = r->st.stats.candidates;
    p.elapsed_s = t - r->t0;
    p.graphs_per_s = p.elapsed_s > 0 ? (double)p.graphs / p.elapsed_s : 0;
    uint64_t done = p.parents_done - r->level_parents0;
    p.eta_s = done > 0 ? (t - r->level_t0) / (double)done * (double)(p.parents_total - p.parents_done)
                       : -1;
    p.buckets_merged = r->merged;
    p.confirmed = r->confirmed;
    p.to_confirm = r->to_confirm;
    if (r->to_confirm > 0) /* confirming the last level's collisions: what is left of that */
        p.eta_s = r->confirmed > 0 ? (t - r->confirm_t0) / (double)r->confirmed *
                                         (double)(r->to_confirm - r->confirmed)
                                   : -1;
    else if (r->merged > 0) /* reading back the last level: what is left of that */
        p.eta_s = (t - r->merge_t0) / r->merged * (SPILL_BUCKETS - r->merged);
    return r->opt->on_progress(r->opt->user, &p, err);
}

/* ------------------------------------------------------------------ batch */

static xf_status merge(run *r, const level_ctx *lc, childbuf *bufs, uint64_t n_bufs,
                       collision **cols, size_t *n_cols, xf_error *err)
{
    int last = r->spilling;
    glevel *out = &r->st.levels[lc->level];
    size_t cap = 0;
    *cols = NULL;
    *n_cols = 0;
    for (uint64_t b = 0; b < n_bufs; b++)
        for (size_t i = 0; i < bufs[b].n; i++) {
            const child *c = &bufs[b].v[i];
            const centry *e;
            if (bufs[b].rep) {
                e = bufs[b].rep[i];
            } else {
                if (i + PREFETCH_AHEAD < bufs[b].n) /* the class table is far larger than the caches */
                    en_ctable_prefetch(&r->classes, bufs[b].v[i + PREFETCH_AHEAD].fp);
                e = en_ctable_find(&r->classes, c->fp);
            }
            uint64_t seq = r->st.stats.graphs_level[lc->level]++;
            r->st.stats.graphs++;
            xf_status st = XF_OK;
            if (last) { /* to disk: classes and collisions are found when the level ends */
                if (!e) {
                    st = en_spill_add_class(&r->sp, c, seq, err);
                } else {
                    r->st.stats.collisions++;
                    if (c->n_outputs > r->cfg->max_outputs) r->st.stats.too_many_outputs++;
                    else st = en_spill_add_pending(&r->sp, c, seq, e, err);
                }
                if (st != XF_OK) return st;
                continue;
            }
            grec g;
            memset(&g, 0, sizeof g);
            g.fp = c->fp;
            g.parent = c->parent;
            g.var = c->var;
            memcpy(g.in, c->in, MAX_NODE_INPUTS);
            g.n_in = c->n_in;
            if (!e) {
                g.flags = GREC_REP;
                centry ne = {c->fp, (uint32_t)out->n, (uint16_t)(CENTRY_STORED | (unsigned)lc->level),
                             {0, 0}};
                st = en_glevel_push(out, &g, err);
                if (st == XF_OK) st = en_ctable_insert(&r->classes, &ne, err);
                if (st == XF_OK) st = en_hset_add(&r->reps, c->shash, err);
                r->st.stats.classes++;
            } else {
                r->st.stats.collisions++;
                if (c->n_outputs > r->cfg->max_outputs) {
                    r->st.stats.too_many_outputs++;
                } else {
                    if (*n_cols == cap) {
                        cap = cap ? cap * 2 : 64;
                        collision *nc = xf_realloc(*cols, cap * sizeof *nc);
                        if (!nc) return XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory for collisions");
                        *cols = nc;
                    }
                    collision *col = &(*cols)[(*n_cols)++];
                    memset(col, 0, sizeof *col);
                    col->c = *c;
                    col->rep = *e;
                }
                st = en_glevel_push(out, &g, err);
            }
            if (st != XF_OK) return st;
        }
    return XF_OK;
}

/* A collision's candidate as the thread or worker rank that confirmed it
 * serialized it. */
static const uint8_t *record(const run *r, const collision *c, size_t *len)
{
#ifdef XF_HAVE_MPI
    if (r->ranks) return en_ranks_record(r->ranks, c->rec - 1, len);
#endif
    return en_cand_list_record(&r->recs[c->rec_thread], c->rec - 1, len);
}

static xf_status emit(run *r, collision *cols, size_t n, xf_error *err)
{
    xf_status st = XF_OK;
    for (size_t i = 0; i < n; i++) {
        collision *c = &cols[i];
        if (c->result == CONFIRM_SECOND) r->st.stats.rejected_second++;
        if (c->result == CONFIRM_FLOAT) r->st.stats.rejected_float++;
        if (c->result != CONFIRM_OK) continue;
        if (st == XF_OK) {
            if (c->rec) c->cand.record = record(r, c, &c->cand.record_len);
            c->cand.seq = r->st.seq++;
            r->st.stats.candidates++;
            if (r->opt->on_candidate) st = r->opt->on_candidate(r->opt->user, &c->cand, err);
        }
        xf_rule_free(&c->cand.rule);
    }
    return st;
}

/* Confirms cols[0..n_cols) in parallel: by the worker ranks under MPI,
 * else by threads. */
static xf_status confirm_batch(run *r, const level_ctx *lc, collision *cols, size_t n_cols,
                               xf_error *err)
{
#ifdef XF_HAVE_MPI
    if (r->ranks) {
        confirm_pair *pairs = xf_malloc(n_cols * sizeof *pairs);
        if (!pairs) return XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory for %zu collisions", n_cols);
        for (size_t i = 0; i < n_cols; i++) {
            en_child_graph(lc, &cols[i].c, &pairs[i].src);
            rep_graph(lc, &cols[i].rep, &pairs[i].dst);
            pairs[i].fp = cols[i].c.fp;
        }
        xf_status st = en_ranks_confirm(r->ranks, pairs, cols, n_cols, err);
        xf_free(pairs);
        return st;
    }
#endif
    for (int t = 0; r->recs && t < r->n_threads; t++) en_cand_list_clear(&r->recs[t]);
    job cj;
    memset(&cj, 0, sizeof cj);
    cj.lc = lc;
    cj.cols = cols;
    return run_job(r, &cj, n_cols, CONFIRM_THREAD_CHUNK, confirm_range, &r->st.stats.cpu_confirm,
                   err);
}

/* Confirms collisions in parallel, then hands out the candidates in order. */
static xf_status confirm_emit(run *r, const level_ctx *lc, collision *cols, size_t n_cols,
                              xf_error *err)
{
    if (n_cols == 0) return XF_OK;
    xf_status st = confirm_batch(r, lc, cols, n_cols, err);
    if (st != XF_OK) {
        for (size_t i = 0; i < n_cols; i++)
            if (cols[i].result == CONFIRM_OK) xf_rule_free(&cols[i].cand.rule);
        return st;
    }
    double cpu0 = xf_clock_thread_cpu();
    st = emit(r, cols, n_cols, err);
    r->st.stats.cpu_emit += xf_clock_thread_cpu() - cpu0;
    return st;
}

/* Phase 1 of a batch: the children of parents [lo, hi), by threads or by
 * the worker ranks, as *n_bufs buffers in parent order. */
static xf_status extend_batch(run *r, const level_ctx *lc, uint64_t lo, uint64_t hi, childbuf **bufs,
                              uint64_t *n_bufs, xf_error *err)
{
#ifdef XF_HAVE_MPI
    if (r->ranks) {
        extend_counts n;
        memset(&n, 0, sizeof n);
        xf_status st = en_ranks_extend(r->ranks, lc, lo, hi, bufs, n_bufs, &n, err);
        r->st.stats.reducible += n.reducible;
        r->st.stats.memo_hits += n.memo_hits;
        r->st.stats.memo_misses += n.memo_misses;
        return st;
    }
#endif
    *n_bufs = (hi - lo + CHUNK_PARENTS - 1) / CHUNK_PARENTS;
    *bufs = xf_calloc(*n_bufs, sizeof **bufs);
    if (!*bufs) return XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory for a batch");
    job j;
    memset(&j, 0, sizeof j);
    j.lc = lc;
    j.begin = lo;
    j.end = hi;
    j.bufs = *bufs;
    j.lookup = r->spilling;
    xf_status st = run_job(r, &j, *n_bufs, 1, extend_range, &r->st.stats.cpu_build, err);
    for (int t = 0; t < r->n_threads; t++) {
        r->st.stats.reducible += r->workers[t].reducible;
        r->workers[t].reducible = 0;
        r->st.stats.memo_hits += r->workers[t].memo.hits;
        r->st.stats.memo_misses += r->workers[t].memo.misses;
        r->workers[t].memo.hits = r->workers[t].memo.misses = 0;
    }
    return st;
}

static xf_status run_batch(run *r, const level_ctx *lc, uint64_t lo, uint64_t hi, xf_error *err)
{
    childbuf *bufs = NULL;
    uint64_t n_bufs = 0;
    collision *cols = NULL;
    size_t n_cols = 0;
    xf_status st = extend_batch(r, lc, lo, hi, &bufs, &n_bufs, err);
    double cpu0 = xf_clock_thread_cpu();
    if (st == XF_OK) st = merge(r, lc, bufs, n_bufs, &cols, &n_cols, err);
    r->st.stats.cpu_merge += xf_clock_thread_cpu() - cpu0;
    for (uint64_t b = 0; bufs && b < n_bufs; b++) {
        xf_free(bufs[b].v);
        xf_free(bufs[b].rep);
    }
    xf_free(bufs);
    if (st == XF_OK) st = confirm_emit(r, lc, cols, n_cols, err);
    xf_free(cols);
    return st;
}

static void on_bucket(void *user, int done)
{
    run *r = user;
    r->merged = done;
    progress(r, 0, NULL);
}

/* The end of the last level: its spill read back, collisions confirmed and
 * handed out in the level's order, a chunk at a time. The stop flag is
 * polled between chunks: the checkpoint then records how many collisions
 * are done (st.confirm_done), and a resumed run reads the spill back again
 * (same collisions, same order) and goes on from there. */
static xf_status finish_last_level(run *r, const level_ctx *lc, xf_error *err)
{
    r->merge_t0 = xf_clock_now();
    spill_result res;
    double cpu0 = xf_clock_thread_cpu();
    xf_status st = en_spill_finish(&r->sp, r->cfg->max_outputs, r->n_threads, &res, on_bucket, r, err);
    r->st.stats.cpu_merge += xf_clock_thread_cpu() - cpu0 + res.helper_cpu;
    if (st != XF_OK) return st;
    collision *cols = xf_calloc(CONFIRM_CHUNK, sizeof *cols);
    if (!cols) st = XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory for collisions");
    r->to_confirm = res.n_cols;
    r->confirmed = r->st.confirm_done;
    r->confirm_t0 = xf_clock_now();
    for (size_t at = (size_t)r->st.confirm_done; st == XF_OK && at < res.n_cols;
         at += CONFIRM_CHUNK) {
        if (r->opt->stop && *r->opt->stop) {
            r->st.stats.stopped = 1;
            st = checkpoint(r, err);
            break;
        }
        size_t n = res.n_cols - at < CONFIRM_CHUNK ? res.n_cols - at : CONFIRM_CHUNK;
        memset(cols, 0, n * sizeof *cols);
        for (size_t i = 0; i < n; i++) {
            cols[i].c = res.cols[at + i].c;
            cols[i].rep = res.cols[at + i].rep;
        }
        st = confirm_emit(r, lc, cols, n, err);
        r->confirmed += n;
        r->st.confirm_done = r->confirmed;
        if (st == XF_OK) st = progress(r, 0, err);
    }
    xf_free(cols);
    r->merged = 0;
    r->confirmed = r->to_confirm = 0;
    if (st == XF_OK && !r->st.stats.stopped) { /* counted once, when the level is complete */
        r->st.confirm_done = 0;
        r->st.stats.classes += res.classes;
        r->st.stats.collisions += res.collisions;
        r->st.stats.too_many_outputs += res.too_many_outputs;
        r->st.stats.spill_bytes = 0;
        for (int i = 0; i < SPILL_FILES; i++) r->st.stats.spill_bytes += r->sp.len[i];
    }
    en_spill_result_free(&res);
    return st;
}

/* ------------------------------------------------------------------- run */

static xf_status setup(run *r, xf_error *err)
{
    xf_status st = en_make_inputs(r->cfg, 0, r->in0, err);
    if (st == XF_OK) st = en_make_inputs(r->cfg, 1, r->in1, err);
    if (st != XF_OK) return st;
    if (r->n_threads > 0) {
        r->workers = xf_calloc((size_t)r->n_threads, sizeof *r->workers);
        r->conf = xf_calloc((size_t)r->n_threads, sizeof *r->conf);
        if (r->opt->take_records) r->recs = xf_calloc((size_t)r->n_threads, sizeof *r->recs);
        if (!r->workers || !r->conf || (r->opt->take_records && !r->recs))
            return XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory for %d workers", r->n_threads);
    }
    for (int t = 0; t < r->n_threads && st == XF_OK; t++) {
        st = en_worker_init(&r->workers[t], r->cfg, r->in0, err);
        if (st == XF_OK) st = en_confirmer_init(&r->conf[t], r->cfg, r->in0, r->in1, err);
    }
    if (st == XF_OK) st = en_ctable_init(&r->classes, err);
    if (st == XF_OK) st = en_hset_init(&r->reps, 1 << 16, err);
    if (st != XF_OK) return st;
    int found = 0;
    if (r->opt->resume && r->opt->checkpoint)
        st = en_checkpoint_load(r->opt->checkpoint, r->cfg_hash, &r->st, &found, err);
    if (st == XF_OK && !found) {
        r->st.level = 1;
        st = init_level0(r, err);
    }
    if (st == XF_OK) st = rebuild_classes(r, err);
    if (st == XF_OK && !found) r->st.stats.classes = r->classes.n;
    r->st.stats.stopped = 0;
    return st;
}

static void teardown(run *r)
{
    for (int i = 0; i < XF_ENUM_MAX_INPUTS; i++) {
        xf_free(r->in0[i].d);
        xf_free(r->in1[i].d);
    }
    for (int t = 0; t < r->n_threads; t++) { /* any of the three may have failed */
        if (r->workers) en_worker_free(&r->workers[t]);
        if (r->conf) en_confirmer_free(&r->conf[t]);
        if (r->recs) en_cand_list_free(&r->recs[t]);
    }
    xf_free(r->workers);
    xf_free(r->conf);
    xf_free(r->recs);
    en_ctable_free(&r->classes);
    en_hset_free(&r->reps);
    for (int l = 0; l <= XF_ENUM_MAX_OPS; l++) en_glevel_free(&r->st.levels[l]);
    if (r->spilling) en_spill_close(&r->sp); /* stopped or failed: the files stay for a resume */
}

void xf_enum_options_init(xf_enum_options *o)
{
    memset(o, 0, sizeof *o);
    o->threads = 1;
    o->progress_every_s = 1.0;
}

static xf_status levels_loop(run *r, xf_error *err)
{
    const xf_enum_config *cfg = r->cfg;
    xf_status st = XF_OK;
    while (st == XF_OK && r->st.level <= cfg->max_ops) {
        level_ctx lc = {cfg, r->st.levels, &r->reps, r->st.level,
                        cfg->max_outputs + cfg->max_ops - r->st.level};
        uint64_t parents = r->st.levels[r->st.level - 1].n;
        r->level_t0 = xf_clock_now();
        r->level_parents0 = r->st.next_parent;
        int last = r->st.level == cfg->max_ops;
#ifdef XF_HAVE_MPI
        if (r->ranks) st = en_ranks_level(r->ranks, &lc, err);
        if (st != XF_OK) break;
#endif
        if (last) {
            st = en_spill_open(&r->sp, r->opt->checkpoint, r->st.next_parent > 0 ? r->st.spill_len : NULL,
                            err);
            if (st != XF_OK) break;
            r->spilling = 1;
        }
        while (st == XF_OK && r->st.next_parent < parents) {
            uint64_t lo = r->st.next_parent, hi = lo + BATCH_PARENTS;
            if (hi > parents) hi = parents;
            st = run_batch(r, &lc, lo, hi, err);
            if (st != XF_OK) break;
            r->st.next_parent = hi;
            stats_bytes(r);
            st = progress(r, 0, err);
            if (st == XF_OK && r->opt->stop && *r->opt->stop && hi < parents) {
                r->st.stats.stopped = 1;
                r->st.stats.seconds_level[r->st.level] += xf_clock_now() - r->level_t0;
                return checkpoint(r, err);
            }
        }
        if (st == XF_OK && last) st = finish_last_level(r, &lc, err);
        r->st.stats.seconds_level[r->st.level] += xf_clock_now() - r->level_t0;
        if (st != XF_OK || r->st.stats.stopped) break;
        r->st.level++;
        r->st.next_parent = 0;
        r->st.stats.levels_done = r->st.level - 1;
        st = progress(r, 1, err);
        if (last) {
            /* No checkpoint: the run is over and the caller has every
             * candidate. The last one written (start of this level or a
             * stop in it) stays valid with its spill files, until the
             * caller has made the candidates durable and removes both. */
            r->spilling = 0;
            en_spill_close(&r->sp);
        } else if (st == XF_OK) {
            st = checkpoint(r, err);
        }
        if (st == XF_OK && r->opt->stop && *r->opt->stop && r->st.level <= cfg->max_ops) {
            r->st.stats.stopped = 1;
            break;
        }
    }
    return st;
}

xf_status xf_enum_run(const xf_enum_config *cfg, const xf_enum_options *opt, xf_enum_stats *stats,
                      xf_error *err)
{
    xf_enum_options defaults;
    xf_enum_options_init(&defaults);
    if (!opt) opt = &defaults;
    memset(stats, 0, sizeof *stats);
    xf_status st = xf_enum_config_validate(cfg, err);
    if (st != XF_OK) return st;
    if (opt->threads < 1 || opt->threads > 64)
        return XF_FAIL(err, XF_ERR_INVALID, "enumerate: %d threads, need 1..64", opt->threads);
    if (opt->resume && !opt->checkpoint)
        return XF_FAIL(err, XF_ERR_INVALID, "enumerate: resuming needs a checkpoint file");
    run r;
    memset(&r, 0, sizeof r);
    r.cfg = cfg;
    r.opt = opt;
    r.cfg_hash = xf_enum_config_hash(cfg);
    /* under MPI the worker ranks build and confirm: rank 0 runs no threads
     * (a worker is a 10 MB memo and evaluation buffers) */
    r.n_threads = opt->mpi ? 0 : opt->threads;
    r.t0 = r.last_progress = xf_clock_now();
    if (opt->mpi) {
#ifdef XF_HAVE_MPI
        st = en_ranks_open(cfg, opt->take_records, &r.ranks, err);
#else
        st = XF_FAIL(err, XF_ERR_UNSUPPORTED,
                     "enumerate: this build of rlflow has no MPI (install libopenmpi-dev and rebuild)");
#endif
        if (st != XF_OK) return st;
    }
    st = setup(&r, err);
    if (st == XF_OK) st = levels_loop(&r, err);
    stats_bytes(&r);
    *stats = r.st.stats;
    stats->seconds = xf_clock_now() - r.t0;
#ifdef XF_HAVE_MPI
    if (r.ranks) en_ranks_stats(r.ranks, stats);
    en_ranks_close(r.ranks);
#endif
    teardown(&r);
    return st;
}
