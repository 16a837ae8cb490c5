/*
 * derive_db.c — the derive pass of one size over a rules database: the
 * deriver is loaded with every rule proved or derived at smaller sizes
 * (xf_deriver_load), each candidate of the size (or, o->unknowns, each
 * rule of it the solver left unknown) is searched, and a chain
 * found is replayed against the database (replay.c) before it is stored
 * as the rule's derivation with status derived. A chain that does not
 * replay is a bug of the search, never stored: the pass fails naming the
 * rule. With o->jobs > 1 the searches run in forked workers (workers.c)
 * and this process replays and stores what they find. Chains wait in
 * memory and are written in short transactions (64 of them, or every half
 * second), so the write lock is held only while writing, never while the
 * search runs, and an interrupted pass keeps most of what it derived.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "derive_internal.h"

/* Write when this many chains wait, or when the oldest has waited this long. */
#define PENDING_MAX 64
#define PENDING_MAX_AGE_S 0.5

typedef struct pending_chain {
    int64_t id;
    double time_ms;
    xf_derivation dv;
    char domain[1024]; /* where the chain holds (xf_derive_domain), as text */
} pending_chain;

typedef struct pending {
    pending_chain v[PENDING_MAX];
    int n;
    double oldest;
} pending;

/* Writes every waiting chain in one transaction and empties the queue. */
static xf_status flush(xf_rulesdb *db, pending *q, xf_derive_tally *t, xf_error *err)
{
    if (q->n == 0) return XF_OK;
    xf_status st = xf_rulesdb_begin(db, err);
    for (int i = 0; i < q->n && st == XF_OK; i++) {
        const xf_derivation *dv = &q->v[i].dv;
        char detail[96];
        snprintf(detail, sizeof detail, "derived in %d step%s (%d graphs searched)", dv->n_steps,
                 dv->n_steps == 1 ? "" : "s", dv->states);
        st = xf_rulesdb_set_derived(db, q->v[i].id, dv->steps, dv->n_steps, q->v[i].time_ms,
                                    detail, q->v[i].domain, err);
        if (st == XF_OK) t->derived++, t->met += dv->from_target > 0;
    }
    if (st == XF_OK) st = xf_rulesdb_commit(db, err);
    else xf_rulesdb_rollback(db, NULL);
    q->n = 0;
    return st;
}

void xf_derive_db_options_init(xf_derive_db_options *o)
{
    memset(o, 0, sizeof *o);
    o->jobs = 1;
    xf_derive_options_init(&o->d);
}

/* Appends to a growing array of ids. */
static xf_status push_id(int64_t **ids, int64_t *n, int64_t *cap, int64_t id, xf_error *err)
{
    if (*n == *cap) {
        int64_t c = *cap ? 2 * *cap : 256;
        int64_t *p = xf_realloc(*ids, sizeof *p * (size_t)c);
        if (!p) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory listing rules");
        *ids = p;
        *cap = c;
    }
    (*ids)[(*n)++] = id;
    return XF_OK;
}

xf_status derive_list_ids(xf_rulesdb *db, xf_rule_status status, int below, int size_eq,
                          int64_t **ids, int64_t *n, int64_t *cap, xf_error *err)
{
    xf_rulesdb_filter f;
    memset(&f, 0, sizeof f);
    f.status = status;
    f.max_size = below > 0 ? below - 1 : 0;
    f.size = size_eq;
    if (below == 1) return XF_OK; /* nothing is smaller than one operator */
    xf_rulesdb_iter *it = NULL;
    xf_rulesdb_rule_info info;
    xf_rulesdb_rule_info_init(&info);
    xf_status st = xf_rulesdb_iter_begin(db, &f, &it, err);
    for (int has = 1; st == XF_OK;) {
        st = xf_rulesdb_iter_next(it, &info, &has, err);
        if (st != XF_OK || !has) break;
        if (!info.broken) st = push_id(ids, n, cap, info.id, err);
    }
    xf_rulesdb_rule_info_free(&info);
    xf_rulesdb_iter_free(it);
    return st;
}

static int cmp_id64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

xf_status xf_deriver_load(xf_rulesdb *db, int below_size, int same_size, const int64_t *only,
                          int64_t n_only, const xf_derive_options *o, xf_deriver **out,
                          xf_error *err)
{
    *out = NULL;
    int64_t *ids = NULL, n = 0, cap = 0;
    xf_status st = derive_list_ids(db, XF_RULE_PROVED, below_size, 0, &ids, &n, &cap, err);
    if (st == XF_OK) st = derive_list_ids(db, XF_RULE_DERIVED, below_size, 0, &ids, &n, &cap, err);
    int64_t smaller = n;
    if (st == XF_OK && same_size && below_size > 0)
        st = derive_list_ids(db, XF_RULE_PROVED, 0, below_size, &ids, &n, &cap, err);
    if (st == XF_OK && only) { /* the rules of the size: those listed */
        int64_t k = smaller;
        for (int64_t i = smaller; i < n; i++)
            if (bsearch(&ids[i], only, (size_t)n_only, sizeof *only, cmp_id64)) ids[k++] = ids[i];
        n = k;
    }
    xf_rule *rules = NULL;
    int loaded = 0;
    if (st == XF_OK && n > 0 && !(rules = xf_calloc((size_t)n, sizeof *rules)))
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory loading %lld rules", (long long)n);
    int kept = 0; /* derived rules without a recorded domain (schema 3) hold nowhere */
    for (; st == XF_OK && loaded < n; loaded++) {
        st = xf_rulesdb_load_rule(db, ids[loaded], &rules[kept], err);
        if (st != XF_OK) {
            xf_rule_free(&rules[kept]);
            xf_error_prefix(err, "loading rule %lld", (long long)ids[loaded]);
        } else if (!rules[kept].domain.known) {
            xf_rule_free(&rules[kept]);
        } else {
            ids[kept++] = ids[loaded];
        }
    }
    loaded = kept;
    n = kept;
    if (st == XF_OK) st = xf_deriver_new(rules, ids, (int)n, o, out, err);
    for (int i = 0; i < loaded; i++) xf_rule_free(&rules[i]);
    xf_free(rules);
    xf_free(ids);
    return st;
}

xf_status derive_search_one(xf_rulesdb *db, xf_deriver *d, int64_t id, int depth, derive_msg *m,
                            xf_error *err)
{
    xf_rule r;
    xf_rule_init(&r);
    xf_error local;
    xf_status st = xf_rulesdb_load_rule(db, id, &r, &local);
    if (st != XF_OK) {
        xf_rule_free(&r);
        if (st == XF_ERR_NOMEM || st == XF_ERR_IO) {
            if (err) *err = local;
            return st;
        }
        m->broken = 1; /* xferverify reports it when the solver tries it */
        return XF_OK;
    }
    double t0 = xf_clock_now();
    int own = d->o.max_depth;
    if (depth > 0 && depth < own) d->o.max_depth = depth;
    st = xf_derive_rule(d, &r, &m->dv, err);
    d->o.max_depth = own;
    m->time_ms = (xf_clock_now() - t0) * 1e3;
    xf_rule_free(&r);
    return st;
}

/* The pass's state while its searches come in. */
typedef struct pass {
    xf_rulesdb *db;
    const xf_derive_db_options *o;
    const int64_t *ids;
    pending *q;
    xf_derive_tally *t;
    double t0;
} pass;

/* The validity domain of candidate id joined by dv (replayed: a chain that
 * does not replay is an error), as text into buf; *fits 0 when the text
 * does not fit (the candidate is then left to the solver). */
static xf_status chain_domain(xf_rulesdb *db, int64_t id, const xf_derivation *dv, char *buf,
                              size_t n, int *fits, xf_error *err)
{
    xf_rule r;
    xf_domain dom;
    xf_domain_init(&dom);
    *fits = 0;
    xf_status st = xf_rulesdb_load_rule(db, id, &r, err);
    if (st == XF_OK) st = xf_derive_domain(db, id, &r, dv->steps, dv->n_steps, &dom, err);
    if (st == XF_ERR_MISMATCH) xf_error_prefix(err, "a derivation found does not replay");
    if (st == XF_OK) {
        const char *names[XF_MATCH_MAX_INPUTS];
        int k = r.src.n_inputs < XF_MATCH_MAX_INPUTS ? r.src.n_inputs : XF_MATCH_MAX_INPUTS;
        for (int i = 0; i < k; i++) names[i] = r.src.values[r.src.inputs[i]].name;
        *fits = xf_domain_format(&dom, names, k, buf, n, NULL) == XF_OK;
    }
    xf_domain_free(&dom);
    xf_rule_free(&r);
    return st;
}

/* Counts a searched candidate; queues its chain once it replays. */
static xf_status got(void *user, const derive_msg *m, xf_error *err)
{
    pass *p = user;
    xf_derive_tally *t = p->t;
    int64_t id = p->ids[m->index];
    xf_status st = XF_OK;
    t->broken += m->broken;
    t->states += m->dv.states;
    t->unreversed += m->dv.unreversed;
    pending *q = p->q;
    int fits = 0;
    if (m->dv.found)
        st = chain_domain(p->db, id, &m->dv, q->v[q->n].domain, sizeof q->v[q->n].domain, &fits,
                          err);
    if (st == XF_OK && m->dv.found && fits) {
        if (q->n == 0) q->oldest = xf_clock_now();
        q->v[q->n].id = id;
        q->v[q->n].time_ms = m->time_ms;
        q->v[q->n++].dv = m->dv;
        if (q->n == PENDING_MAX || xf_clock_now() - q->oldest >= PENDING_MAX_AGE_S)
            st = flush(p->db, q, t, err);
    }
    if (st != XF_OK) return st;
    t->done++;
    t->elapsed_s = xf_clock_now() - p->t0;
    if (t->done == t->total) st = flush(p->db, q, t, err);
    if (p->o->on_progress) p->o->on_progress(p->o->user, t);
    return st;
}

xf_status xf_derive_db(xf_rulesdb *db, const xf_derive_db_options *o, xf_derive_tally *t,
                       xf_error *err)
{
    memset(t, 0, sizeof *t);
    t->size = o->size;
    t->unknowns = o->unknowns;
    if (o->size < 1) return XF_FAIL(err, XF_ERR_INVALID, "derive: size %d (at least 1)", o->size);
    if (o->jobs < 1 || o->jobs > XF_DERIVE_MAX_JOBS)
        return XF_FAIL(err, XF_ERR_INVALID, "derive: %d workers (1 to %d)", o->jobs,
                       XF_DERIVE_MAX_JOBS);
    double t0 = xf_clock_now();
    int64_t *ids = NULL, cap = 0;
    xf_deriver *d = NULL;
    xf_rule_status which = o->unknowns ? XF_RULE_UNKNOWN : XF_RULE_CANDIDATE;
    xf_status st = derive_list_ids(db, which, 0, o->size, &ids, &t->total, &cap, err);
    if (st == XF_OK && o->only) { /* the listed ones */
        int64_t k = 0;
        for (int64_t i = 0; i < t->total; i++)
            if (bsearch(&ids[i], o->only, (size_t)o->n_only, sizeof *o->only, cmp_id64))
                ids[k++] = ids[i];
        t->total = k;
    }
    uint8_t *depths = NULL; /* per candidate: the shallow ones' depth, else 0 */
    if (st == XF_OK && o->shallow && t->total > 0 && !(depths = xf_calloc((size_t)t->total, 1)))
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory listing rules");
    for (int64_t i = 0; depths && i < t->total; i++)
        if (bsearch(&ids[i], o->shallow, (size_t)o->n_shallow, sizeof *o->shallow, cmp_id64))
            depths[i] = (uint8_t)o->shallow_depth;
    if (st == XF_OK && o->limit > 0 && t->total > o->limit) t->total = o->limit;
    if (st == XF_OK && t->total > 0)
        st = xf_deriver_load(db, o->size, o->same_size, o->same_ids, o->n_same_ids, &o->d, &d,
                             err);
    t->rules = xf_deriver_rules(d);
    t->actions = xf_deriver_actions(d);
    if (t->actions == 0) t->done = t->total; /* nothing to rewrite with */
    pass p = {db, o, ids, NULL, t, t0};
    if (st == XF_OK && t->done < t->total && !(p.q = xf_malloc(sizeof *p.q)))
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory deriving rules");
    if (p.q) p.q->n = 0;
    if (st == XF_OK && t->done < t->total && o->jobs > 1 && t->total > 1) {
        st = derive_search_forked(db, d, ids, depths, t->total, o->jobs, got, &p, err);
    } else {
        derive_msg m;
        for (int64_t i = 0; st == XF_OK && i < t->total && t->done < t->total; i++) {
            memset(&m, 0, sizeof m);
            m.index = i;
            st = derive_search_one(db, d, ids[i], depths ? depths[i] : 0, &m, err);
            if (st == XF_OK) st = got(&p, &m, err);
        }
    }
    if (p.q && st != XF_OK) flush(db, p.q, t, NULL); /* keep what was derived before the failure */
    xf_free(p.q);
    t->elapsed_s = xf_clock_now() - t0;
    xf_deriver_free(d);
    xf_free(ids);
    xf_free(depths);
    return st;
}
