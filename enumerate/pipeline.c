/*
 * pipeline.c — one xfergen run (xf_enum_generate): configuration, a run row
 * in the rules database, enumeration with progress and checkpoints,
 * pruning, and the final write of the kept candidates as "candidate" in
 * one transaction together with the run's per-stage figures. Pruned
 * candidates are only counted there (the prune-* stage rows give how many
 * each stage removed) unless the caller asks to keep them: then they are
 * written too, as "pruned" with the reason and the rule that subsumes
 * them. At four operators that is ~1.7 M rows and most of the database,
 * which is why counting is the default.
 *
 * Candidates are kept serialized (cands.c), decoded one at a time straight
 * into pruning's term view (xf_prune_run_from, on the -j threads) and
 * rebuilt as rules for the write, so memory stays small. Pruning and the
 * write report their progress through the enumerator's progress callback
 * (xf_enum_progress.step).
 *
 * Interruption: the caller's stop flag (SIGINT/SIGTERM in xfergen) is
 * polled by the enumerator; before each enumerator checkpoint the
 * candidates so far go into the run's checkpoint blob (one transaction),
 * and the enumerator's own checkpoint file sits next to the database. A
 * stopped run is marked "interrupted"; a resumed one finds it by its
 * option string, reloads the candidates and continues.
 */
#include "pipeline_internal.h"

#include "rulesdb/rulesdb.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ctx {
    const xf_enum_generate_options *o;
    xf_rulesdb *db;
    int64_t run_id;
    cand_list cands;
    size_t restored;   /* candidates reloaded from the checkpoint */
    long new_cands;    /* received in this call */
    volatile sig_atomic_t *stop;
    double t_start;      /* of xf_enum_generate */
    char step[64];       /* the step after the enumeration being reported */
    double step_t0, step_last;
} ctx;

static xf_status on_candidate(void *user, xf_enum_candidate *c, xf_error *err)
{
    ctx *x = user;
    if (c->seq < x->restored) return XF_OK; /* re-emitted after a resume: already have it */
    if (c->seq != x->cands.n)
        return XF_FAIL(err, XF_ERR_INTERNAL,
                       "candidate %" PRIu64 " arrived after %zu: the checkpoint does not match",
                       c->seq, x->cands.n);
    xf_status st = c->record ? en_cand_list_push_record(&x->cands, c->record, c->record_len, err)
                             : en_cand_list_push(&x->cands, &c->rule, err);
    if (st != XF_OK) return st;
    x->new_cands++;
    if (x->o->stop_after >= 0 && x->new_cands >= x->o->stop_after) *x->stop = 1;
    return XF_OK;
}

static xf_status on_progress(void *user, const xf_enum_progress *p, xf_error *err)
{
    (void)err;
    ctx *x = user;
    if (x->o->on_progress) x->o->on_progress(x->o->user, p);
    return XF_OK;
}

/* Reports a step after the enumeration: done of total rules, with the rate
 * and ETA the caller computed (per_s 0, eta_s < 0: unknown). */
static void report_step(const ctx *x, uint64_t done, uint64_t total, double per_s, double eta_s)
{
    if (!x->o->on_progress) return;
    xf_enum_progress p;
    memset(&p, 0, sizeof p);
    p.step = x->step;
    p.done = done;
    p.total = total;
    p.per_s = per_s;
    p.eta_s = eta_s;
    p.elapsed_s = xf_clock_now() - x->t_start;
    x->o->on_progress(x->o->user, &p);
}

static void on_prune_progress(void *user, const xf_prune_progress *p)
{
    ctx *x = user;
    snprintf(x->step, sizeof x->step, "pruning: %s", p->step);
    report_step(x, p->done, p->total, p->per_s, p->eta_s);
}

/* The write's progress: at its start (done 0), then about every second. */
static void write_progress(ctx *x, uint64_t done, uint64_t total)
{
    double now = xf_clock_now();
    if (done == 0) {
        snprintf(x->step, sizeof x->step, "writing");
        x->step_t0 = now;
    } else if (now - x->step_last < 1.0) {
        return;
    }
    x->step_last = now;
    double per_s = done > 0 && now > x->step_t0 ? (double)done / (now - x->step_t0) : 0;
    report_step(x, done, total, per_s, per_s > 0 ? (double)(total - done) / per_s : -1);
}

static void note(const ctx *x, int warning, const char *fmt, ...) XF_PRINTF(3, 4);

static void note(const ctx *x, int warning, const char *fmt, ...)
{
    if (!x->o->on_note) return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    x->o->on_note(x->o->user, warning, msg);
}

static xf_status on_sync(void *user, xf_error *err)
{
    ctx *x = user;
    size_t len = 0;
    const uint8_t *blob = en_cand_list_blob(&x->cands, &len);
    if (!blob) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory writing the checkpoint");
    xf_status st = xf_rulesdb_begin(x->db, err);
    if (st == XF_OK) st = xf_rulesdb_run_checkpoint(x->db, x->run_id, blob, len, err);
    if (st == XF_OK) st = xf_rulesdb_commit(x->db, err);
    else if (xf_rulesdb_in_batch(x->db)) xf_rulesdb_rollback(x->db, NULL);
    return st;
}

/* Prune's xf_prune_get_fn, called from its threads at once: it only reads
 * the list, and feeds the candidate's record to prune's term view as it is
 * decoded (no xf_graph is built). */
static xf_status get_candidate(void *user, size_t i, const xf_graph_sink *src,
                               const xf_graph_sink *dst, xf_error *err)
{
    ctx *x = user;
    return en_cand_list_feed(&x->cands, i, src, dst, err);
}

xf_status en_generate_config(const xf_enum_generate_options *o, xf_enum_config *c, xf_error *err)
{
    int preset = xf_enum_is_preset(o->vocab);
    /* a vocabulary file takes the default preset's inputs */
    xf_status st = xf_enum_config_preset(c, preset ? o->vocab : "default", err);
    if (st == XF_OK && !preset) st = xf_enum_vocab_load(c, o->vocab, err);
    if (st == XF_OK && o->inputs) st = xf_enum_inputs_parse(c, o->inputs, err);
    if (st != XF_OK) return st;
    c->max_ops = o->max_ops;
    if (o->max_outputs) c->max_outputs = o->max_outputs;
    if (o->max_dim) c->max_dim = o->max_dim;
    c->seed = o->seed;
    return xf_enum_config_validate(c, err);
}

/* Canonical option string: what a resumed run must match (not -j/--quiet). */
static void option_string(const xf_enum_generate_options *o, const xf_enum_config *c, const char *inputs,
                          char *buf, size_t n)
{
    char outs[64] = "";
    if (o->max_outputs || o->max_dim)
        snprintf(outs, sizeof outs, " --max-outputs %d --max-dim %d", c->max_outputs, c->max_dim);
    snprintf(buf, n, "--max-ops %d%s --vocab %s --inputs %s --seed %" PRIu64 " config=%016" PRIx64,
             o->max_ops, outs, o->vocab, inputs, o->seed, xf_enum_config_hash(c));
}

static xf_status begin_run(ctx *x, const xf_enum_config *cfg, const char *options,
                           const char *inputs, xf_error *err)
{
    xf_status st;
    if (x->o->resume) {
        st = xf_rulesdb_run_find_resumable(x->db, "xfergen", options, &x->run_id, err);
        if (st != XF_OK) return st;
        if (x->run_id == 0)
            return XF_FAIL(err, XF_ERR_INVALID,
                           "%s: no interrupted xfergen run with these options to resume "
                           "(options: %s); run without --resume",
                           x->o->out, options);
        xf_rulesdb_run_info info;
        xf_rulesdb_run_info_init(&info);
        st = xf_rulesdb_run_get(x->db, x->run_id, &info, err);
        if (st == XF_OK && info.checkpoint)
            st = en_cand_list_blob_read(info.checkpoint, info.checkpoint_len, &x->cands, err);
        xf_rulesdb_run_info_free(&info);
        if (st != XF_OK) return st;
        x->restored = x->cands.n;
        st = xf_rulesdb_run_set_state(x->db, x->run_id, XF_RUN_RUNNING, err);
        if (st == XF_OK)
            note(x, 0, "resuming run %" PRId64 " with %zu candidates", x->run_id, x->restored);
        return st;
    }
    char vocab[64];
    snprintf(vocab, sizeof vocab, "%s (%d variants)", x->o->vocab, cfg->n_ops);
    xf_rulesdb_run_desc d = {"xfergen", x->o->version, options, inputs, vocab, x->o->seed};
    return xf_rulesdb_run_start(x->db, &d, &x->run_id, err);
}

/* The write: the rules' rows are prepared (the candidate rebuilt, its
 * inputs put in canonical order, graphs hashed, serialized and formatted:
 * xf_rulesdb_rule_prepare) a batch ahead on the -j threads, while this
 * thread stores the batch before, in the order a single thread would. */
#define WRITE_BATCH 1024

typedef struct write_batch {
    ctx *x;
    const size_t *which;                 /* candidate of each position of the write */
    size_t lo, hi;                       /* positions [lo, hi) into p[0 .. hi - lo) */
    xf_rulesdb_prepared p[WRITE_BATCH];
    xf_parallel_job *job;
    xf_status started;
} write_batch;

static xf_status prepare_range(void *user, int worker, size_t lo, size_t hi, xf_error *err)
{
    (void)worker;
    write_batch *b = user;
    xf_status st = XF_OK;
    for (size_t k = lo; k < hi && st == XF_OK; k++) {
        size_t i = b->which[k];
        xf_rule r;
        st = en_cand_list_get(&b->x->cands, i, &r, err);
        if (st == XF_OK) st = xf_prune_canonical_inputs(&r, err);
        if (st == XF_OK) st = xf_rulesdb_rule_prepare(&r, &b->p[k - b->lo], err);
        if (st != XF_OK) xf_error_prefix(err, "storing candidate %zu", i);
        xf_rule_free(&r);
    }
    return st;
}

static void prepare_start(write_batch *b, size_t lo, size_t hi, int helpers, xf_error *err)
{
    b->lo = lo;
    b->hi = hi;
    b->started = xf_parallel_start(&b->job, helpers, lo, hi, NULL, prepare_range, b, err);
}

static xf_status prepare_finish(write_batch *b, xf_error *err)
{
    return b->started != XF_OK ? b->started : xf_parallel_finish(b->job, 1, err);
}

/* Stores the prepared batch b (which[lo, hi) of the write). */
static xf_status store_batch(ctx *x, const write_batch *b, const xf_prune_verdict *v,
                             int64_t *ids, unsigned char *fresh, uint64_t total,
                             int64_t *n_written, int64_t *n_pruned, xf_error *err)
{
    for (size_t k = b->lo; k < b->hi; k++) {
        size_t i = b->which[k];
        int kept = v[i].stage == XF_PRUNE_KEPT;
        if ((k + 1) % 256 == 0) write_progress(x, k + 1, total);
        char why[320];
        snprintf(why, sizeof why, "%s: %s", xf_prune_stage_name(v[i].stage),
                 v[i].why ? v[i].why : "");
        xf_rulesdb_rule_meta m = {kept ? XF_RULE_CANDIDATE : XF_RULE_PRUNED, x->run_id,
                                  kept ? NULL : why, 0};
        int inserted = 0;
        xf_status st = xf_rulesdb_add_prepared(x->db, &b->p[k - b->lo], &m, &ids[i], &inserted, err);
        if (st != XF_OK) {
            xf_error_prefix(err, "storing candidate %zu", i);
            return st;
        }
        fresh[i] = (unsigned char)inserted;
        *n_written += inserted;
        if (!kept) *n_pruned += inserted;
    }
    return XF_OK;
}

/* Writes candidates and verdicts: kept ones first so a pruned rule that the
 * database stores as the same row as a kept one never overrides it. */
static xf_status write_rules(ctx *x, const xf_prune_verdict *v, int64_t *n_written,
                             int64_t *n_pruned, xf_error *err)
{
    size_t n = x->cands.n, total = 0;
    for (size_t i = 0; i < n; i++) total += x->o->keep_pruned || v[i].stage == XF_PRUNE_KEPT;
    int64_t *ids = xf_calloc(n + 1, sizeof *ids);
    unsigned char *fresh = xf_calloc(n + 1, 1);
    size_t *which = xf_malloc((total + 1) * sizeof *which);
    write_batch *b = xf_malloc(2 * sizeof *b);
    for (int k = 0; b && k < 2; k++) {
        b[k].x = x;
        b[k].which = which;
        for (int j = 0; j < WRITE_BATCH; j++) xf_rulesdb_prepared_init(&b[k].p[j]);
    }
    xf_status st = XF_OK;
    if (!ids || !fresh || !which || !b) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory writing %zu rules", n);
        goto out;
    }
    *n_written = 0;
    *n_pruned = 0;
    size_t at = 0;
    for (int pass = 0; pass < (x->o->keep_pruned ? 2 : 1); pass++)
        for (size_t i = 0; i < n; i++)
            if ((v[i].stage == XF_PRUNE_KEPT) == (pass == 0)) which[at++] = i;
    write_progress(x, 0, total);
    int helpers = x->o->threads - 1;
    prepare_start(&b[0], 0, total < WRITE_BATCH ? total : WRITE_BATCH, helpers, err);
    st = prepare_finish(&b[0], err);
    int cur = 0; /* b[cur]: the batch being stored, b[cur ^ 1]: the next */
    for (size_t lo = 0; lo < total && st == XF_OK; lo += WRITE_BATCH, cur ^= 1) {
        int ahead = lo + WRITE_BATCH < total;
        xf_error next_err;
        if (ahead) {
            size_t hi = lo + 2 * WRITE_BATCH < total ? lo + 2 * WRITE_BATCH : total;
            prepare_start(&b[cur ^ 1], lo + WRITE_BATCH, hi, helpers, &next_err);
        }
        st = store_batch(x, &b[cur], v, ids, fresh, total, n_written, n_pruned, err);
        xf_status next = ahead ? prepare_finish(&b[cur ^ 1], &next_err) : XF_OK;
        if (st == XF_OK && next != XF_OK) {
            st = next;
            if (err) *err = next_err;
        }
    }
    for (size_t i = 0; i < n && st == XF_OK; i++) {
        if (!fresh[i] || v[i].stage == XF_PRUNE_KEPT || v[i].by < 0) continue;
        int64_t by = ids[v[i].by];
        if (by == 0 || by == ids[i]) continue;
        char why[320];
        snprintf(why, sizeof why, "%s: %s", xf_prune_stage_name(v[i].stage),
                 v[i].why ? v[i].why : "");
        st = xf_rulesdb_set_status(x->db, ids[i], XF_RULE_PRUNED, why, by, err);
    }
out:
    if (b)
        for (int k = 0; k < 2; k++)
            for (int j = 0; j < WRITE_BATCH; j++) xf_rulesdb_prepared_free(&b[k].p[j]);
    xf_free(b);
    xf_free(which);
    xf_free(ids);
    xf_free(fresh);
    return st;
}

void xf_enum_generate_options_init(xf_enum_generate_options *o)
{
    memset(o, 0, sizeof *o);
    o->vocab = "default";
    o->seed = 1;
    o->threads = 1;
    o->stop_after = -1;
}

xf_status xf_enum_generate(const xf_enum_generate_options *o, xf_enum_generate_result *res,
                           xf_error *err)
{
    double t_start = xf_clock_now();
    memset(res, 0, sizeof *res);
    xf_enum_config cfg;
    xf_enum_config_init(&cfg);
    volatile sig_atomic_t own_stop = 0;
    ctx x;
    memset(&x, 0, sizeof x);
    x.o = o;
    x.stop = o->stop ? o->stop : &own_stop;
    x.t_start = t_start;
    xf_prune_verdict *verdicts = NULL;
    char *ckpt = NULL;
    xf_status st;
    char inputs[1024], options[1400];

    st = en_generate_config(o, &cfg, err);
    if (st == XF_OK) st = xf_enum_inputs_format(&cfg, inputs, sizeof inputs, err);
    if (st == XF_OK) {
        option_string(o, &cfg, inputs, options, sizeof options);
        /* resuming continues a database; it never creates one */
        st = xf_rulesdb_open(o->out, o->resume ? 0 : XF_RULESDB_CREATE, &x.db, err);
        if (st != XF_OK && o->resume) xf_error_prefix(err, "nothing to resume");
    }
    /* a bad configuration, a file that is not a rules database or cannot
     * be opened: bad input (exit 2); recording the run on an open database
     * (locked by another writer past the wait): a failure while running
     * (exit 1), as in every tool (docs/cli.md) */
    if (st != XF_OK) {
        res->bad_input = 1;
        goto out;
    }
    st = begin_run(&x, &cfg, options, inputs, err);
    if (st != XF_OK) {
        res->bad_input = st != XF_ERR_IO && st != XF_ERR_NOMEM;
        goto out;
    }
    res->run_id = x.run_id;
    size_t cl = strlen(o->out) + 64;
    ckpt = xf_malloc(cl);
    if (!ckpt) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory");
        goto out;
    }
    snprintf(ckpt, cl, "%s.run%" PRId64 ".ckpt", o->out, x.run_id);

    xf_enum_options eo;
    xf_enum_options_init(&eo);
    eo.threads = o->threads;
    eo.mpi = o->mpi;
    eo.take_records = 1;
    eo.stop = x.stop;
    eo.checkpoint = ckpt;
    eo.resume = o->resume;
    eo.user = &x;
    eo.on_candidate = on_candidate;
    eo.on_progress = on_progress;
    eo.on_sync = on_sync;
    xf_enum_stats *es = &res->enumerated;
    st = xf_enum_run(&cfg, &eo, es, err);
    x.cands.enum_seconds += es->seconds;
    res->candidates = x.cands.n;
    if (st != XF_OK) {
        xf_error_prefix(err, "enumeration failed");
        xf_rulesdb_run_set_state(x.db, x.run_id, XF_RUN_INTERRUPTED, NULL);
        goto out;
    }
    if (es->stopped) {
        xf_error e2;
        if (on_sync(&x, &e2) != XF_OK ||
            xf_rulesdb_run_set_state(x.db, x.run_id, XF_RUN_INTERRUPTED, &e2) != XF_OK)
            note(&x, 1, "recording the interruption failed: %s", e2.msg);
        res->stopped = 1;
        goto out;
    }

    xf_heap_trim(); /* the enumerator's freed tables, before pruning's view of the candidates */
    verdicts = xf_calloc(x.cands.n + 1, sizeof *verdicts);
    xf_prune_stats *ps = &res->pruned;
    if (!verdicts) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory pruning %zu candidates", x.cands.n);
        goto out;
    }
    xf_prune_options po = xf_prune_options_default();
    po.reasons = o->keep_pruned; /* only stored rows show them */
    po.threads = o->threads;
    po.on_progress = on_prune_progress;
    po.progress_user = &x;
    st = xf_prune_run_from(x.cands.n, get_candidate, &x, &po, verdicts, ps, err);
    if (st != XF_OK) {
        xf_error_prefix(err, "pruning failed");
        goto out;
    }

    double t_write = xf_clock_now();
    int64_t written = 0;
    static const char *const stage_names[XF_PRUNE_STAGE_COUNT] = {
        NULL, "prune-renaming", "prune-common-subgraph", "prune-common-supergraph",
        "prune-generality"};
    st = xf_rulesdb_begin(x.db, err);
    if (st == XF_OK) st = write_rules(&x, verdicts, &written, &res->pruned_stored, err);
    if (st == XF_OK)
        st = xf_rulesdb_run_stage(x.db, x.run_id, "enumerate", x.cands.enum_seconds,
                                  (int64_t)es->graphs, err);
    for (int l = 1; st == XF_OK && l <= cfg.max_ops; l++) {
        char name[32];
        snprintf(name, sizeof name, "level-%d", l);
        st = xf_rulesdb_run_stage(x.db, x.run_id, name, es->seconds_level[l],
                                  (int64_t)es->graphs_level[l], err);
    }
    /* CPU seconds of the enumerator's phases (all threads) */
    if (st == XF_OK)
        st = xf_rulesdb_run_stage(x.db, x.run_id, "cpu-build", es->cpu_build, (int64_t)es->graphs, err);
    if (st == XF_OK)
        st = xf_rulesdb_run_stage(x.db, x.run_id, "cpu-merge", es->cpu_merge, (int64_t)es->classes, err);
    if (st == XF_OK)
        st = xf_rulesdb_run_stage(x.db, x.run_id, "cpu-confirm", es->cpu_confirm,
                                  (int64_t)(es->candidates + es->rejected_second + es->rejected_float),
                                  err);
    if (st == XF_OK)
        st = xf_rulesdb_run_stage(x.db, x.run_id, "cpu-emit", es->cpu_emit, (int64_t)es->candidates, err);
    if (st == XF_OK) st = xf_rulesdb_run_stage(x.db, x.run_id, "fingerprints", 0, (int64_t)es->classes, err);
    if (st == XF_OK)
        st = xf_rulesdb_run_stage(x.db, x.run_id, "candidates", 0, (int64_t)x.cands.n, err);
    if (st == XF_OK) /* the term views and the canonical forms */
        st = xf_rulesdb_run_stage(x.db, x.run_id, "prune-prepare", ps->seconds[XF_PRUNE_KEPT],
                                  (int64_t)ps->in, err);
    for (int s = XF_PRUNE_RENAMING; st == XF_OK && s < XF_PRUNE_STAGE_COUNT; s++)
        st = xf_rulesdb_run_stage(x.db, x.run_id, stage_names[s], ps->seconds[s],
                                  (int64_t)ps->left[s], err);
    if (st == XF_OK)
        st = xf_rulesdb_run_stage(x.db, x.run_id, "pruned-stored", 0, res->pruned_stored, err);
    if (st == XF_OK)
        st = xf_rulesdb_run_stage(x.db, x.run_id, "write", xf_clock_now() - t_write, written, err);
    if (st == XF_OK) st = xf_rulesdb_run_checkpoint(x.db, x.run_id, NULL, 0, err);
    if (st == XF_OK) st = xf_rulesdb_run_set_state(x.db, x.run_id, XF_RUN_DONE, err);
    if (st == XF_OK) st = xf_rulesdb_commit(x.db, err);
    if (st != XF_OK) {
        if (xf_rulesdb_in_batch(x.db)) xf_rulesdb_rollback(x.db, NULL);
        xf_error_prefix(err, "writing %s failed", o->out);
        goto out;
    }
    res->written = written;
    xf_error e2;
    if (xf_enum_checkpoint_remove(ckpt, &e2) != XF_OK) note(&x, 1, "warning: %s", e2.msg);
    res->seconds = xf_clock_now() - t_start;
out:
    if (verdicts) xf_prune_verdicts_free(verdicts, x.cands.n);
    xf_free(verdicts);
    xf_free(ckpt);
    en_cand_list_free(&x.cands);
    xf_rulesdb_close(x.db);
    xf_enum_config_free(&cfg);
    return st;
}
