/*
 * terms.c — turns rules into hash-consed expression terms (see
 * prune_internal.h): interning of operator keys (op + parameters), value
 * types (dtype + shape), input names and terms, and the per-rule views the
 * pruning stages read.
 */
#include "prune/prune_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GROW(ptr, n, cap, init, err, what)                                                   \
    do {                                                                                     \
        if ((n) == (cap)) {                                                                  \
            size_t c_ = (cap) ? (size_t)(cap) * 2 : (init);                                 \
            void *p_ = xf_realloc((ptr), c_ * sizeof *(ptr));                                   \
            if (!p_) return XF_FAIL((err), XF_ERR_NOMEM, "prune: out of memory (%s)", what); \
            (ptr) = p_;                                                                      \
            (cap) = c_;                                                                      \
        }                                                                                    \
    } while (0)

static void table_init(pr_table *t)
{
    memset(t, 0, sizeof *t);
    pr_keymap_init(&t->opkey_map);
    pr_keymap_init(&t->name_map);
}

static void table_free(pr_table *t)
{
    xf_free(t->terms);
    xf_free(t->kids);
    xf_htab_free(&t->term_index);
    xf_free(t->ops);
    xf_free(t->params);
    xf_free(t->op_hash);
    xf_free(t->opkey_next);
    xf_free(t->dtypes);
    xf_free(t->shapes);
    for (int i = 0; i < t->n_names; i++) xf_free(t->names[i]);
    xf_free(t->names);
    pr_keymap_free(&t->opkey_map);
    pr_keymap_free(&t->name_map);
    table_init(t);
}

/* The operator key of (op, p), whose pr_opkey_hash is h. */
static xf_status intern_opkey(pr_table *t, xf_op op, const xf_params *p, uint64_t h,
                              int32_t *out, xf_error *err)
{
    int32_t key[3] = {(int32_t)op, (int32_t)(uint32_t)h, (int32_t)(uint32_t)(h >> 32)};
    long first = pr_keymap_get(&t->opkey_map, key, 3);
    for (long k = first; k >= 0; k = t->opkey_next[k])
        if (t->ops[k] == op && memcmp(&t->params[k], p, sizeof *p) == 0) {
            *out = (int32_t)k;
            return XF_OK;
        }
    if (t->n_opkeys == t->cap_opkeys) {
        int cap = t->cap_opkeys ? t->cap_opkeys * 2 : 64;
        xf_op *o = xf_realloc(t->ops, (size_t)cap * sizeof *o);
        if (o) t->ops = o;
        xf_params *pp = xf_realloc(t->params, (size_t)cap * sizeof *pp);
        if (pp) t->params = pp;
        uint64_t *hh = xf_realloc(t->op_hash, (size_t)cap * sizeof *hh);
        if (hh) t->op_hash = hh;
        int32_t *nx = xf_realloc(t->opkey_next, (size_t)cap * sizeof *nx);
        if (nx) t->opkey_next = nx;
        if (!o || !pp || !hh || !nx)
            return XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (operator keys)");
        t->cap_opkeys = cap;
    }
    int k = t->n_opkeys++;
    t->ops[k] = op;
    t->params[k] = *p;
    t->op_hash[k] = h;
    t->opkey_next[k] = -1;
    long old;
    xf_status st = pr_keymap_put(&t->opkey_map, key, 3, k, &old, err);
    if (st != XF_OK) return st;
    if (old >= 0) { /* same hash, other parameters: chain behind the first */
        t->opkey_next[k] = t->opkey_next[old];
        t->opkey_next[old] = k;
    }
    *out = k;
    return XF_OK;
}

static xf_status intern_type(pr_table *t, xf_dtype dt, const xf_shape *s, int32_t *out,
                             xf_error *err)
{
    for (int i = 0; i < t->n_types; i++)
        if (t->dtypes[i] == dt && xf_shape_equal(&t->shapes[i], s)) {
            *out = i;
            return XF_OK;
        }
    if (t->n_types == t->cap_types) {
        int cap = t->cap_types ? t->cap_types * 2 : 16;
        xf_dtype *d = xf_realloc(t->dtypes, (size_t)cap * sizeof *d);
        if (d) t->dtypes = d;
        xf_shape *sh = xf_realloc(t->shapes, (size_t)cap * sizeof *sh);
        if (sh) t->shapes = sh;
        if (!d || !sh) return XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (types)");
        t->cap_types = cap;
    }
    t->dtypes[t->n_types] = dt;
    t->shapes[t->n_types] = *s;
    *out = t->n_types++;
    return XF_OK;
}

static xf_status intern_name(pr_table *t, const char *name, int32_t *out, xf_error *err)
{
    int32_t key[256];
    size_t len = strlen(name);
    if (len > 256) return XF_FAIL(err, XF_ERR_INVALID, "prune: input name '%.40s...' is too long", name);
    for (size_t i = 0; i < len; i++) key[i] = (unsigned char)name[i];
    long v = pr_keymap_get(&t->name_map, key, (uint32_t)len);
    if (v >= 0) {
        *out = (int32_t)v;
        return XF_OK;
    }
    if (t->n_names == t->cap_names) {
        int cap = t->cap_names ? t->cap_names * 2 : 32;
        char **nm = xf_realloc(t->names, (size_t)cap * sizeof *nm);
        if (!nm) return XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (names)");
        t->names = nm;
        t->cap_names = cap;
    }
    char *copy = xf_malloc(len + 1);
    if (!copy) return XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (names)");
    memcpy(copy, name, len + 1);
    long old;
    xf_status st = pr_keymap_put(&t->name_map, key, (uint32_t)len, t->n_names, &old, err);
    if (st != XF_OK) {
        xf_free(copy);
        return st;
    }
    t->names[t->n_names] = copy;
    *out = t->n_names++;
    return XF_OK;
}

static uint64_t term_hash(int32_t opkey, int32_t type, int32_t out, int32_t n_kids,
                          const int32_t *kids)
{
    uint64_t h = xf_hash_u64(0x7E5Au, (uint64_t)(uint32_t)opkey);
    h = xf_hash_u64(h, (uint64_t)(uint32_t)type);
    h = xf_hash_u64(h, (uint64_t)(uint32_t)out);
    h = xf_hash_u64(h, (uint64_t)n_kids);
    for (int32_t i = 0; i < n_kids; i++) h = xf_hash_u64(h, (uint64_t)(uint32_t)kids[i]);
    return h;
}

static int term_equal(const pr_table *t, const pr_term *a, int32_t opkey, int32_t type,
                      int32_t out, int32_t n_kids, const int32_t *kids)
{
    return a->opkey == opkey && a->type == type && a->out == out && a->n_kids == n_kids &&
           (n_kids == 0 || memcmp(t->kids + a->kids, kids, (size_t)n_kids * sizeof *kids) == 0);
}

static xf_status intern_term(pr_table *t, int32_t opkey, int32_t type, int32_t out,
                             int32_t n_kids, const int32_t *kids, int32_t *id, xf_error *err)
{
    uint64_t h = term_hash(opkey, type, out, n_kids, kids);
    size_t pos = XF_HTAB_START;
    for (const uint64_t *k; (k = xf_htab_next(&t->term_index, xf_htab_key(h), &pos));) {
        const pr_term *a = &t->terms[*k];
        if (term_equal(t, a, opkey, type, out, n_kids, kids)) {
            *id = (int32_t)*k;
            return XF_OK;
        }
    }
    if (t->n_kids + (size_t)n_kids > UINT32_MAX || t->n_terms >= INT32_MAX)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED, "prune: more terms than the term table holds");
    GROW(t->terms, t->n_terms, t->cap_terms, 4096, err, "terms");
    while (t->n_kids + (size_t)n_kids > t->cap_kids) {
        size_t cap = t->cap_kids ? t->cap_kids * 2 : 8192;
        int32_t *k = xf_realloc(t->kids, cap * sizeof *k);
        if (!k) return XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (term arguments)");
        t->kids = k;
        t->cap_kids = cap;
    }
    xf_status st = xf_htab_add(&t->term_index, xf_htab_key(h), t->n_terms, err);
    if (st != XF_OK) return st;
    int32_t size = opkey == PR_LEAF ? 0 : 1;
    for (int32_t i = 0; i < n_kids; i++) size += t->terms[kids[i]].size;
    if (n_kids > 0) memcpy(t->kids + t->n_kids, kids, (size_t)n_kids * sizeof *kids);
    t->terms[t->n_terms] = (pr_term){opkey, type, out, n_kids, (uint32_t)t->n_kids, size};
    t->n_kids += (size_t)n_kids;
    *id = (int32_t)t->n_terms++;
    return XF_OK;
}

/* Terms of every value of side s (input i bound to leaf_of[i]) into vt;
 * the node terms into nodes[], the output terms into outs[]. */
static xf_status build_side(pr_table *t, const pr_flat_side *s, const int32_t *leaf_of,
                            int32_t absent, int32_t *vt, int32_t *nodes, int32_t *outs,
                            xf_error *err)
{
    int32_t kids[PR_MAX_NODE_IO];
    for (int i = 0; i < s->n_inputs; i++) vt[i] = leaf_of[i];
    for (int k = 0; k < s->n_nodes; k++) {
        const pr_flat_node *nd = &s->nodes[k];
        const int32_t *in = s->ins + nd->in;
        for (int j = 0; j < nd->n_in; j++) kids[j] = in[j] < 0 ? absent : vt[in[j]];
        int32_t opkey = -1;
        xf_status st = intern_opkey(t, nd->op, &nd->params, nd->hash, &opkey, err);
        if (st == XF_OK) st = intern_term(t, opkey, PR_NO_TYPE, -1, nd->n_in, kids, &nodes[k], err);
        for (int j = 0; j < nd->n_out && st == XF_OK; j++) {
            int v = nd->out + j;
            int32_t type;
            st = intern_type(t, s->values[v].dtype, &s->values[v].shape, &type, err);
            if (st == XF_OK) st = intern_term(t, opkey, type, j, nd->n_in, kids, &vt[v], err);
        }
        if (st != XF_OK) return st;
    }
    for (int i = 0; i < s->n_outputs; i++) outs[i] = vt[s->outputs[i]];
    return XF_OK;
}

/* Reserves this rule's arrays at the end of the pool (pr_src_out ... read
 * them by offset, so the pool may move as it grows). */
static xf_status reserve(pr_rules *rs, pr_rule *pr, xf_error *err)
{
    size_t need = 2 * (size_t)pr->n_out + (size_t)pr->n_in + (size_t)pr->n_src_nodes +
                  (size_t)pr->n_dst_nodes;
    if (rs->n_pool + need > rs->cap_pool) {
        size_t cap = rs->cap_pool ? rs->cap_pool * 2 : 1 << 16;
        while (cap < rs->n_pool + need) cap *= 2;
        int32_t *p = xf_realloc(rs->pool, cap * sizeof *p);
        if (!p) return XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (rule views)");
        rs->pool = p;
        rs->cap_pool = cap;
    }
    pr->base = rs->n_pool;
    rs->n_pool += need;
    return XF_OK;
}

/* Room for n int32s of scratch (a rule's leaves and value terms). */
static xf_status reserve_scratch(pr_rules *rs, size_t n, xf_error *err)
{
    if (n <= rs->cap_scratch) return XF_OK;
    size_t cap = rs->cap_scratch ? rs->cap_scratch : 64;
    while (cap < n) cap *= 2;
    int32_t *p = xf_realloc(rs->scratch, cap * sizeof *p);
    if (!p) return XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (rule values)");
    rs->scratch = p;
    rs->cap_scratch = cap;
    return XF_OK;
}

/* The view of rule i from its fed form (pr_flat_finish has passed it). */
static xf_status build_rule(pr_rules *rs, size_t i, const pr_flat *f, int32_t absent,
                            xf_error *err)
{
    pr_table *t = &rs->table;
    pr_rule *pr = &rs->rules[i];
    const pr_flat_side *src = &f->side[0], *dst = &f->side[1];
    if (src->n_outputs > PR_MAX_COUNT || src->n_inputs > PR_MAX_COUNT ||
        src->n_nodes > PR_MAX_COUNT || dst->n_nodes > PR_MAX_COUNT)
        return XF_FAIL(err, XF_ERR_UNSUPPORTED,
                       "prune: rule %zu has more than %d outputs, inputs or operators on a side", i,
                       PR_MAX_COUNT);
    pr->n_out = (uint16_t)src->n_outputs;
    pr->n_in = (uint16_t)src->n_inputs;
    pr->n_src_nodes = (uint16_t)src->n_nodes;
    pr->n_dst_nodes = (uint16_t)dst->n_nodes;
    size_t n_values = (size_t)(src->n_values > dst->n_values ? src->n_values : dst->n_values);
    xf_status st = reserve(rs, pr, err);
    if (st == XF_OK) st = reserve_scratch(rs, (size_t)pr->n_in + n_values, err);
    if (st != XF_OK) return st;
    int32_t *leaf_of = rs->scratch, *vt = rs->scratch + pr->n_in;
    int32_t *leaves = pr_leaf(rs, pr);
    for (int k = 0; k < pr->n_in; k++) {
        int p = f->in[k].order;
        char fallback[32];
        const char *name = f->in[k].name_of >= 0 ? f->names + f->in[k].name_of : fallback;
        if (f->in[k].name_of < 0) snprintf(fallback, sizeof fallback, "in%d", k);
        int32_t name_id, type, leaf = -1;
        st = intern_name(t, name, &name_id, err);
        if (st == XF_OK)
            st = intern_type(t, src->values[p].dtype, &src->values[p].shape, &type, err);
        if (st == XF_OK) st = intern_term(t, PR_LEAF, type, name_id, 0, NULL, &leaf, err);
        if (st != XF_OK) return st;
        leaves[k] = leaf;
        leaf_of[p] = leaf;
        for (int j = 0; j < k; j++)
            if (leaves[j] == leaves[k])
                return XF_FAIL(err, XF_ERR_INVALID,
                               "prune: rule %zu: inputs %d and %d are both named '%s'", i, j, k,
                               t->names[name_id]);
    }
    st = build_side(t, src, leaf_of, absent, vt, pr_src_nodes(rs, pr), pr_src_out(rs, pr), err);
    if (st == XF_OK)
        st = build_side(t, dst, leaf_of, absent, vt, pr_dst_nodes(rs, pr), pr_dst_out(rs, pr), err);
    if (st != XF_OK) return st;
    pr->tree_size = 0;
    const int32_t *so = pr_src_out(rs, pr), *dout = pr_dst_out(rs, pr);
    for (int k = 0; k < pr->n_out; k++) pr->tree_size += t->terms[so[k]].size + t->terms[dout[k]].size;
    int32_t used[64];
    pr_tuple tu = {pr->n_out, pr_src_out(rs, pr), pr_dst_out(rs, pr), NULL, 0};
    int n_used = pr_first_use(t, &tu, used, 64);
    if (n_used < 0) return XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (rule %zu)", i);
    pr->n_used_leaves = (int16_t)n_used;
    return XF_OK;
}

/* Rules from `get`, a batch at a time: helper threads fetch the next batch
 * (feed each rule into its slot, check it and put its inputs in canonical
 * order: flat.c) while this one interns the terms of the last, then this
 * one helps them finish it. Fetching (xfergen: decoding a stored
 * candidate and inferring its output types) needs nothing of the
 * interning, which must stay in index order on one thread; the slots are
 * reused from batch to batch, so nothing is freed per rule. With one
 * thread, one helper fetches alone, so `get` is called in index order,
 * one call at a time. */
#define FETCH_BATCH 1024

typedef struct fetch {
    xf_prune_get_fn get;
    void *user;
    int canonical;
    size_t lo, hi;                  /* rules [lo, hi) into r[0 .. hi - lo) */
    pr_flat r[FETCH_BATCH];
    unsigned char ok[FETCH_BATCH];  /* fetched */
    xf_parallel_job *job;
} fetch;

static xf_status fetch_range(void *ctx, int worker, size_t lo, size_t hi, xf_error *err)
{
    (void)worker;
    fetch *f = ctx;
    for (size_t i = lo; i < hi; i++) {
        pr_flat *r = &f->r[i - f->lo];
        pr_flat_reset(r);
        xf_status st = f->get(f->user, i, &r->sink[0], &r->sink[1], err);
        if (st == XF_OK) st = pr_flat_finish(r, f->canonical, err);
        if (st != XF_OK) {
            xf_error_prefix(err, "prune: rule %zu", i);
            return st;
        }
        f->ok[i - f->lo] = 1;
    }
    return XF_OK;
}

/* Out of memory for the job: _finish reports it. */
static void fetch_start(fetch *f, size_t lo, size_t hi, int helpers, xf_status *st, xf_error *err)
{
    f->lo = lo;
    f->hi = hi;
    memset(f->ok, 0, sizeof f->ok);
    *st = xf_parallel_start(&f->job, helpers, lo, hi, NULL, fetch_range, f, err);
}

/* Waits for the batch (helping with it when `help`); *got: the rules
 * fetched before the first failure. */
static xf_status fetch_finish(fetch *f, xf_status start, int help, size_t *got, xf_error *err)
{
    xf_status st = start != XF_OK ? start : xf_parallel_finish(f->job, help, err);
    size_t k = 0;
    while (k < f->hi - f->lo && f->ok[k]) k++;
    *got = k;
    return st;
}

static xf_status build_fetched(pr_rules *rs, size_t n, xf_prune_get_fn get, void *user,
                               int canonical, int32_t absent, xf_error *err)
{
    fetch *f = xf_malloc(2 * sizeof *f);
    if (!f) return XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (fetching rules)");
    for (int b = 0; b < 2; b++) {
        f[b].get = get;
        f[b].user = user;
        f[b].canonical = canonical;
        for (int k = 0; k < FETCH_BATCH; k++) pr_flat_init(&f[b].r[k]);
    }
    int helpers = rs->threads > 2 ? rs->threads - 1 : 1, help = rs->threads > 1;
    xf_error fetch_err;
    size_t got = 0;
    xf_status fst;
    fetch_start(&f[0], 0, n < FETCH_BATCH ? n : FETCH_BATCH, helpers, &fst, &fetch_err);
    fst = fetch_finish(&f[0], fst, help, &got, &fetch_err);
    xf_status st = XF_OK, next_st = XF_OK;
    int cur = 0; /* f[cur]: the batch being built, f[cur ^ 1]: the next */
    for (size_t lo = 0; lo < n; lo += FETCH_BATCH, cur ^= 1) {
        fetch *c = &f[cur];
        int ahead = fst == XF_OK && lo + FETCH_BATCH < n;
        if (ahead) {
            size_t hi = lo + 2 * FETCH_BATCH < n ? lo + 2 * FETCH_BATCH : n;
            fetch_start(&f[cur ^ 1], lo + FETCH_BATCH, hi, helpers, &next_st, &fetch_err);
        }
        for (size_t k = 0; k < got && st == XF_OK; k++)
            st = build_rule(rs, lo + k, &c->r[k], absent, err);
        pr_progress_tick(rs->progress, lo + got);
        if (st == XF_OK && fst != XF_OK) {
            st = fst;
            if (err) *err = fetch_err;
        }
        if (ahead) fst = fetch_finish(&f[cur ^ 1], next_st, help && st == XF_OK, &got, &fetch_err);
        if (st != XF_OK) break;
    }
    for (int b = 0; b < 2; b++)
        for (int k = 0; k < FETCH_BATCH; k++) pr_flat_free(&f[b].r[k]);
    xf_free(f);
    return st;
}

xf_status pr_rules_build(pr_rules *rs, size_t n, xf_prune_get_fn get, void *user, int canonical,
                         const xf_prune_options *o, pr_progress *progress, xf_error *err)
{
    memset(rs, 0, sizeof *rs);
    table_init(&rs->table);
    rs->reasons = o->reasons;
    rs->threads = o->threads;
    rs->progress = progress;
    pr_progress_step(progress, "terms", n);
    rs->rules = xf_calloc(n + 1, sizeof *rs->rules);
    if (!rs->rules) return XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (%zu rules)", n);
    rs->n = n;
    /* An omitted optional argument is one shared pseudo-leaf. */
    int32_t absent_name, absent;
    xf_status st = intern_name(&rs->table, "", &absent_name, err);
    if (st == XF_OK)
        st = intern_term(&rs->table, PR_LEAF, PR_NO_TYPE, absent_name, 0, NULL, &absent, err);
    if (st == XF_OK) st = build_fetched(rs, n, get, user, canonical, absent, err);
    /* Every term is interned now; the stages only read them. */
    xf_htab_free(&rs->table.term_index);
    xf_free(rs->scratch);
    rs->scratch = NULL;
    rs->cap_scratch = 0;
    return st;
}

void pr_rules_free(pr_rules *rs)
{
    table_free(&rs->table);
    xf_free(rs->rules);
    xf_free(rs->pool);
    memset(rs, 0, sizeof *rs);
}

void pr_term_format(const pr_table *t, int32_t term, char *buf, size_t n)
{
    if (n == 0) return;
    const pr_term *a = &t->terms[term];
    if (a->opkey == PR_LEAF) {
        snprintf(buf, n, "%s", a->out >= 0 && a->out < t->n_names ? t->names[a->out] : "?");
        return;
    }
    xf_op op = t->ops[a->opkey];
    const char *name = xf_op_get(op)->name;
    size_t len;
    if (op == XF_OP_SPLIT && a->out >= 0)
        len = (size_t)snprintf(buf, n, "%s%d(", name, a->out);
    else
        len = (size_t)snprintf(buf, n, "%s(", name);
    const int32_t *kids = pr_kids(t, term);
    for (int32_t i = 0; i < a->n_kids && len + 1 < n; i++) {
        if (i) len += (size_t)snprintf(buf + len, n - len, ", ");
        if (len + 1 >= n) break;
        pr_term_format(t, kids[i], buf + len, n - len);
        len += strlen(buf + len);
    }
    if (len + 1 < n) snprintf(buf + len, n - len, ")");
}
