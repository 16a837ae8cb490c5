/*
 * search.c — the deriver and its bounded search. A candidate's two sides
 * are joined when some graph is reachable from both by rewrites with the
 * deriver's rules (each in both directions). The search is breadth first
 * from both sides at once, always expanding the shallower side (the one
 * with fewer graphs on a tie), and meets in the middle on the structural
 * hash (xf_graph_hash, the one the rules database keys graphs by): every
 * graph a rewrite makes is looked up among the other side's graphs before
 * it is kept. Bounds: max_depth rewrites from each side, max_states graphs
 * kept per side, and intermediate graphs no larger than the candidate's
 * larger side plus max_extra operators (a graph over it is not kept).
 * Expanding a graph is one matcher pass
 * (xf_match_all_within, match/) over the rules that do not grow it past
 * the size bound, and one rewrite per match: a rewrite removes at most
 * the operators it matched, so a rule growing the graph past the bound
 * makes a graph that is neither kept nor met (neither side keeps one, and
 * the structural hash counts every node). Leaving those rules out changes
 * nothing found; with the proved rules of the candidate's own size as
 * steps, most matches were of them (a rule with one operator on one side
 * and four on the other matches at every operator of its kind, read from
 * its small side), and most of the time went on matching them.
 */
#include <string.h>

#include "derive_internal.h"

void xf_derive_options_init(xf_derive_options *o)
{
    o->max_depth = 3;
    o->max_states = 256;
    o->max_extra = 1;
}

static xf_status check_options(const xf_derive_options *o, xf_error *err)
{
    if (o->max_depth < 1 || o->max_depth > XF_DERIVE_MAX_DEPTH)
        return XF_FAIL(err, XF_ERR_INVALID, "derive: depth %d (1 to %d)", o->max_depth,
                       XF_DERIVE_MAX_DEPTH);
    if (o->max_states < 1 || o->max_extra < 0)
        return XF_FAIL(err, XF_ERR_INVALID, "derive: %d states, %d extra operators (at least 1 "
                                            "and 0)",
                       o->max_states, o->max_extra);
    return XF_OK;
}

xf_status xf_deriver_new(const xf_rule *rules, const int64_t *ids, int n,
                         const xf_derive_options *o, xf_deriver **out, xf_error *err)
{
    *out = NULL;
    xf_derive_options def;
    xf_derive_options_init(&def);
    if (!o) o = &def;
    xf_status st = check_options(o, err);
    if (st != XF_OK) return st;
    xf_deriver *d = xf_calloc(1, sizeof *d);
    if (!d) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory creating a deriver");
    d->o = *o;
    d->n_rules = n;
    xf_match_list_init(&d->ml);
    xf_match_list_init(&d->chain);
    d->ml.flat = d->chain.flat = 1; /* read in order only: no per-rule offsets */
    xf_ruleset_options ro = xf_ruleset_options_default();
    ro.both_directions = 1;
    ro.commutative = 0; /* steps are stored by their nodes: one binding per location */
    st = xf_ruleset_from_rules(rules, ids, n, &ro, &d->rs, err);
    if (st != XF_OK) {
        xf_deriver_free(d);
        return st;
    }
    *out = d;
    return XF_OK;
}

void xf_deriver_free(xf_deriver *d)
{
    if (!d) return;
    xf_ruleset_free(d->rs);
    xf_match_list_free(&d->ml);
    xf_match_list_free(&d->chain);
    xf_free(d);
}

int xf_deriver_rules(const xf_deriver *d)
{
    return d ? d->n_rules : 0;
}

int xf_deriver_actions(const xf_deriver *d)
{
    return d ? xf_ruleset_count(d->rs) : 0;
}

xf_status derive_apply(xf_deriver *d, const xf_graph *g, const xf_graph_index *ix,
                       const xf_match *m, xf_graph *out, uint64_t *hash, int *applied,
                       xf_error *err)
{
    xf_error local;
    *applied = 0;
    *hash = 0;
    xf_status st = xf_match_apply(d->rs, g, ix, m, out, &local);
    if (st == XF_ERR_NOMEM) {
        if (err) *err = local;
        return st;
    }
    if (st != XF_OK) return XF_OK;
    derive_normalize(out);
    st = xf_graph_hash_checked(out, XF_HASH_CONTENT, hash, err);
    if (st != XF_OK) {
        xf_graph_free(out);
        return st;
    }
    *applied = 1;
    return XF_OK;
}

/* ------------------------------------------------------------ one search */

typedef struct dstate {
    xf_graph g;
    uint64_t h;
    int parent, depth; /* parent -1: the side's root */
    derive_move move;  /* how the parent became this graph */
} dstate;

typedef struct side {
    dstate *s;
    int n, cap, next; /* next: the first graph not expanded yet */
    xf_htab seen;     /* xf_htab_key(hash) -> state index */
} side;

typedef struct search {
    xf_deriver *d;
    const xf_rule *r;
    side sd[2]; /* 0: from the source, 1: from the target */
    int max_nodes;
    xf_derivation *out;
} search;

static void side_free(side *sd)
{
    for (int i = 0; i < sd->n; i++) xf_graph_free(&sd->s[i].g);
    xf_free(sd->s);
    xf_htab_free(&sd->seen);
}

/* Keeps g (taken over, also on failure) as a state of sd. */
static xf_status side_push(side *sd, xf_graph *g, uint64_t h, int parent, int depth,
                           const derive_move *mv, xf_error *err)
{
    if (sd->n == sd->cap) {
        int cap = sd->cap ? 2 * sd->cap : 16;
        dstate *p = xf_realloc(sd->s, sizeof *p * (size_t)cap);
        if (!p) {
            xf_graph_free(g);
            return XF_FAIL(err, XF_ERR_NOMEM, "out of memory in the derivation search");
        }
        sd->s = p;
        sd->cap = cap;
    }
    uint64_t *v = NULL;
    xf_status st = xf_htab_put(&sd->seen, xf_htab_key(h), &v, NULL, err);
    if (st != XF_OK) {
        xf_graph_free(g);
        return st;
    }
    *v = (uint64_t)sd->n;
    dstate *e = &sd->s[sd->n++];
    e->g = *g;
    xf_graph_init(g);
    e->h = h;
    e->parent = parent;
    e->depth = depth;
    if (mv) e->move = *mv;
    else memset(&e->move, 0, sizeof e->move);
    return XF_OK;
}

/* Moves from the root of sd to state i, in order; returns how many. */
static int path_moves(const side *sd, int i, derive_move *mv)
{
    int n = 0;
    for (int k = i; sd->s[k].parent >= 0; k = sd->s[k].parent) n++;
    int j = n;
    for (int k = i; sd->s[k].parent >= 0; k = sd->s[k].parent) mv[--j] = sd->s[k].move;
    return n;
}

/* Hashes from the root of sd to state i, in order; returns how many. */
static int path_hashes(const side *sd, int i, uint64_t *h)
{
    int n = 0;
    for (int k = i; k >= 0; k = sd->s[k].parent) n++;
    int j = n;
    for (int k = i; k >= 0; k = sd->s[k].parent) h[--j] = sd->s[k].h;
    return n;
}

/* A meet: state `mine` of side `which`, plus the move `extra` from it
 * (NULL: none) when the meeting graph was just made and not kept, reaches
 * the graph of state `theirs` of the other side. */
static xf_status meet(search *S, int which, int mine, const derive_move *extra, uint64_t h,
                      int theirs, int *ok, xf_error *err)
{
    derive_move a[XF_DERIVE_MAX_DEPTH + 1], bm[XF_DERIVE_MAX_DEPTH + 1];
    uint64_t b[XF_DERIVE_MAX_DEPTH + 2];
    int na, nb;
    if (which == 0) {
        na = path_moves(&S->sd[0], mine, a);
        if (extra) a[na++] = *extra;
        nb = path_hashes(&S->sd[1], theirs, b);
        path_moves(&S->sd[1], theirs, bm);
    } else {
        na = path_moves(&S->sd[0], theirs, a);
        nb = path_hashes(&S->sd[1], mine, b);
        int nm = path_moves(&S->sd[1], mine, bm);
        if (extra) b[nb++] = h, bm[nm] = *extra;
    }
    return derive_chain(S->d, &S->r->src, a, na, b, bm, nb, S->out, ok, err);
}

/* Tries every rewrite of state idx of side `which`. */
static xf_status expand(search *S, int which, int idx, xf_error *err)
{
    xf_deriver *d = S->d;
    side *me = &S->sd[which], *other = &S->sd[1 - which];
    xf_graph_index *ix = NULL;
    xf_status st = xf_graph_index_build(&me->s[idx].g, &ix, err);
    /* a rule growing the graph past the size bound is not even matched: its
     * graph would be neither kept nor met (both sides keep only graphs
     * within the bound, and the hash counts every node) */
    int room = S->max_nodes - me->s[idx].g.n_nodes;
    if (st == XF_OK) st = xf_match_all_within(d->rs, &me->s[idx].g, ix, 0, room, &d->ml, err);
    S->out->expanded++;
    if (st == XF_OK) S->out->matched += d->ml.n;
    for (int k = 0; st == XF_OK && k < d->ml.n && !S->out->found; k++) {
        xf_graph g;
        xf_graph_init(&g);
        uint64_t h;
        int applied;
        S->out->rewrites++;
        st = derive_apply(d, &me->s[idx].g, ix, &d->ml.m[k], &g, &h, &applied, err);
        if (st != XF_OK || !applied) continue;
        derive_move mv = {d->ml.m[k].rule, d->ml.m[k]};
        if (xf_htab_get(&me->seen, xf_htab_key(h))) {
            xf_graph_free(&g);
            continue;
        }
        S->out->states++;
        const uint64_t *j = xf_htab_get(&other->seen, xf_htab_key(h));
        if (j) {
            int ok = 0;
            st = meet(S, which, idx, &mv, h, (int)*j, &ok, err);
            if (st == XF_OK && !ok) S->out->unreversed++;
        }
        if (st != XF_OK || S->out->found || g.n_nodes > S->max_nodes ||
            me->n >= d->o.max_states) {
            xf_graph_free(&g);
            continue;
        }
        st = side_push(me, &g, h, idx, me->s[idx].depth + 1, &mv, err);
    }
    xf_graph_index_free(ix);
    return st;
}

/* The side to expand next: the shallower, then the smaller; -1 when both
 * are done. */
static int pick(const search *S)
{
    int best = -1;
    for (int w = 0; w < 2; w++) {
        const side *sd = &S->sd[w];
        if (sd->next >= sd->n || sd->s[sd->next].depth >= S->d->o.max_depth) continue;
        if (best < 0) {
            best = w;
            continue;
        }
        const side *b = &S->sd[best];
        int dw = sd->s[sd->next].depth, db = b->s[b->next].depth;
        if (dw < db || (dw == db && sd->n < b->n)) best = w;
    }
    return best;
}

xf_status xf_derive_rule(xf_deriver *d, const xf_rule *r, xf_derivation *out, xf_error *err)
{
    memset(out, 0, sizeof *out);
    search S;
    memset(&S, 0, sizeof S);
    S.d = d;
    S.r = r;
    S.out = out;
    int larger = r->src.n_nodes > r->dst.n_nodes ? r->src.n_nodes : r->dst.n_nodes;
    S.max_nodes = larger + d->o.max_extra;
    xf_status st = XF_OK;
    for (int w = 0; w < 2 && st == XF_OK; w++) {
        const xf_graph *root = w ? &r->dst : &r->src;
        xf_graph g;
        xf_graph_init(&g);
        uint64_t h = 0;
        st = xf_graph_clone(root, &g, err);
        if (st == XF_OK) derive_normalize(&g);
        if (st == XF_OK) st = xf_graph_hash_checked(&g, XF_HASH_CONTENT, &h, err);
        if (st == XF_OK) st = side_push(&S.sd[w], &g, h, -1, 0, NULL, err);
        else xf_graph_free(&g);
    }
    if (st == XF_OK && S.sd[0].s[0].h == S.sd[1].s[0].h)
        st = XF_FAIL(err, XF_ERR_INVALID, "derive: the two sides of the rule are one graph");
    out->states = 2;
    for (int w; st == XF_OK && !out->found && (w = pick(&S)) >= 0;)
        st = expand(&S, w, S.sd[w].next++, err);
    side_free(&S.sd[0]);
    side_free(&S.sd[1]);
    if (st != XF_OK) out->found = 0, out->n_steps = 0;
    return st;
}
