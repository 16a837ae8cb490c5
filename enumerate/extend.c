/*
 * extend.c — the inner loop of enumeration: every child of one stored
 * graph P (P plus one node s), filtered in order of cost:
 *   1. s is not a copy of a node P already has (same variant and inputs);
 *   2. if P is not its class's representative, s must read a value P
 *      consumes internally (otherwise P is a closed subgraph of the child
 *      and every rule from the child follows from P's rule: RepGen);
 *   3. the variant applies to the input shapes (memoised, shapecache.c);
 *   4. the child has at most lc->out_bound outputs;
 *   5. s is the child's canonical sink: its key is larger than every other
 *      sink's, so each DAG is built from exactly one parent, once;
 *   6. every proper subgraph containing s that could be rewritten on its
 *      own (convex, and no node outside reads a value it consumes), taken
 *      as a pattern over fresh inputs, must be a class representative;
 *      else a smaller rule rewrites the child, which is dropped;
 *   7. s is evaluated in Z_p (or its output hash taken from the memo of
 *      nodes already evaluated on the same values, valmemo_internal.h) and the
 *      child's class key computed.
 * Subgraphs without s were checked when P itself was built. Step 6 reads
 * only the structure and the parent's shapes, so it comes before the
 * evaluation, the costly step.
 */
#include "extend_internal.h"

#include <stdlib.h>
#include <string.h>

#define MEMO_LOG2 18 /* 2^18 entries, 10 MB a worker */

xf_status en_worker_init(worker *w, const xf_enum_config *cfg, const evalue *inputs, xf_error *err)
{
    memset(w, 0, sizeof *w);
    xf_status st = en_evalctx_init(&w->ev, cfg, inputs, 0, err);
    if (st == XF_OK) st = en_shapecache_init(&w->sc, cfg, err);
    if (st == XF_OK) st = en_valmemo_init(&w->memo, MEMO_LOG2, err);
    if (st == XF_OK) {
        w->groups_ok = xf_malloc((size_t)cfg->n_ops * N_REFS * sizeof *w->groups_ok);
        if (!w->groups_ok) st = XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory for a worker");
    }
    if (st != XF_OK) {
        en_worker_free(w);
        return st;
    }
    for (int i = 0; i < cfg->n_inputs; i++) { /* the first ids: below XF_ENUM_MAX_INPUTS */
        w->in_sid[i] = en_sc_intern(&w->sc, &cfg->inputs[i].shape);
        w->inputs_of_sid[w->in_sid[i]] |= 1u << i;
    }
    return XF_OK;
}

void en_worker_free(worker *w)
{
    en_evalctx_free(&w->ev);
    en_shapecache_free(&w->sc);
    en_valmemo_free(&w->memo);
    xf_free(w->groups_ok);
    w->groups_ok = NULL;
}

static xf_status push_child(childbuf *b, const child *c, xf_error *err)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 256;
        child *v = xf_realloc(b->v, cap * sizeof *v);
        if (!v) return XF_FAIL(err, XF_ERR_NOMEM, "enumerate: out of memory for %zu new graphs", cap);
        b->v = v;
        b->cap = cap;
    }
    b->v[b->n++] = *c;
    return XF_OK;
}

void en_child_graph(const level_ctx *lc, const child *c, egraph *g)
{
    en_egraph_from_store(lc->cfg, lc->levels, lc->level - 1, c->parent, g);
    enode *n = &g->nodes[g->n_nodes++];
    n->var = c->var;
    n->n_in = c->n_in;
    n->n_out = (uint8_t)en_var_outputs(&lc->cfg->ops[c->var]);
    memcpy(n->in, c->in, MAX_NODE_INPUTS);
}

/* Children are decided in batches: the representative set's lookups of
 * step 6 miss the caches (and, at four operators, the TLB), and issuing
 * the loads of many children before the first lookup overlaps the misses. */
#define PENDING_MAX 16
#define PENDING_HASHES (1u << (XF_ENUM_MAX_OPS - 1)) /* subgraphs containing the new node */

/* A child that passed steps 1-5, waiting for step 6. */
typedef struct pending {
    uint64_t key; /* the new node's structural key */
    int out_sid[NODE_OUTS];
    uint16_t var, first_h; /* its subgraphs' hashes: pstate.hs[first_h...] */
    uint8_t n_in, n_out, n_hs;
    uint8_t in[MAX_NODE_INPUTS];
} pending;

/* The parent, evaluated, with what every child needs from it. */
typedef struct pstate {
    egraph g; /* the parent's nodes; node g.n_nodes is the child's new node */
    int n;
    int rep;
    uint32_t index;
    uint64_t keys[XF_ENUM_MAX_OPS];
    uint16_t readers[N_REFS]; /* bitmask of parent nodes reading each value */
    uint16_t sinks;           /* parent nodes none of whose outputs is read */
    int sid[N_REFS];
    int n_outs;
    uint8_t outs[MAX_GRAPH_OUTPUTS];
    uint32_t in_mask;
    pending pending[PENDING_MAX]; /* children waiting for step 6 */
    int n_pending;
    uint64_t hs[PENDING_MAX * PENDING_HASHES]; /* their subgraphs' hashes */
    int n_hs;
} pstate;

/* Structural hash of the node subset q of g, with every value q reads from
 * outside (a "frontier" value) renamed to a graph input of the same shape
 * that q does not read: the subgraph as a pattern over fresh variables.
 * Frontier values take the lowest free input of their shape in order of
 * first use (sid: each value's shape id). 0 when there are not enough such
 * inputs. */
static uint64_t renamed_hash(const worker *w, const egraph *g, const int *sid, uint32_t q)
{
    uint32_t used = 0;
    for (int u = 0; u < g->n_nodes; u++)
        if (q & (1u << u))
            for (int i = 0; i < g->nodes[u].n_in; i++)
                if (REF_IS_INPUT(g->nodes[u].in[i])) used |= 1u << g->nodes[u].in[i];
    int renamed[N_REFS];
    for (int r = 0; r < N_REFS; r++) renamed[r] = -1;
    uint64_t keys[XF_ENUM_MAX_OPS] = {0};
    for (int u = 0; u < g->n_nodes; u++) {
        if (!(q & (1u << u))) continue;
        const enode *n = &g->nodes[u];
        uint64_t h = en_fp_mix(0x0D3u, n->var);
        for (int i = 0; i < n->n_in; i++) {
            int r = n->in[i];
            if (REF_IS_INPUT(r) || (q & (1u << REF_NODE_OF(r)))) {
                h = en_fp_mix(h, en_ref_key(keys, r));
                continue;
            }
            if (renamed[r] < 0) {
                uint32_t spare = sid[r] < XF_ENUM_MAX_INPUTS ? w->inputs_of_sid[sid[r]] & ~used : 0;
                if (!spare) return 0;
                renamed[r] = __builtin_ctz(spare);
                used |= spare & -spare;
            }
            h = en_fp_mix(h, en_ref_key(keys, renamed[r]));
        }
        keys[u] = h;
    }
    return en_struct_hash(keys, q);
}

/* Step 6's subgraphs: the structural hash of every proper subgraph
 * containing the new node that could be replaced on its own, into hs
 * (count returned). Such a subgraph q is convex (no path leaves q and comes
 * back) and closed (no node outside q reads a value q consumes); its
 * frontier values become fresh inputs, so a rule found over inputs applies
 * to it (renamed_hash). `readers` includes the new node. */
static int subgraph_hashes(const worker *w, const egraph *g, const int *sid, const uint16_t *readers,
                           uint64_t *hs)
{
    int n = g->n_nodes, s = n - 1;
    uint32_t full = (1u << n) - 1;
    uint16_t anc[XF_ENUM_MAX_OPS], desc[XF_ENUM_MAX_OPS] = {0};
    for (int u = 0; u < n; u++) {
        anc[u] = 0;
        for (int i = 0; i < g->nodes[u].n_in; i++) {
            int r = g->nodes[u].in[i];
            if (!REF_IS_INPUT(r)) anc[u] |= (uint16_t)(anc[REF_NODE_OF(r)] | (1u << REF_NODE_OF(r)));
        }
        for (int v = 0; v < u; v++)
            if (anc[u] & (1u << v)) desc[v] |= (uint16_t)(1u << u);
    }
    int n_hs = 0;
    for (uint32_t q = 1u << s; q < full; q++) {
        if (!(q & (1u << s))) continue;
        int ok = 1;
        for (int u = 0; ok && u < n; u++) {
            if (q & (1u << u)) {
                for (int k = 0; k < g->nodes[u].n_out; k++) {
                    uint16_t rd = readers[REF_NODE(u, k)];
                    if ((rd & q) && (rd & ~q)) ok = 0; /* consumed inside, read outside */
                }
            } else if ((anc[u] & q) && (desc[u] & q)) {
                ok = 0; /* a path through u leaves q and comes back */
            }
        }
        if (!ok) continue;
        uint64_t h = renamed_hash(w, g, sid, q);
        if (h != 0) hs[n_hs++] = h;
    }
    return n_hs;
}

/* Appends a waiting child's new node to the parent's graph (its caller
 * takes it off again: g->n_nodes back to the parent's). */
static void append_node(egraph *g, const pending *pc)
{
    enode *sn = &g->nodes[g->n_nodes++];
    sn->var = pc->var;
    sn->n_in = pc->n_in;
    sn->n_out = pc->n_out;
    memcpy(sn->in, pc->in, MAX_NODE_INPUTS);
}

/* Evaluates an irreducible child's new node (or takes its output hashes
 * from the memo) and appends the child. */
static xf_status add_child(worker *w, const level_ctx *lc, pstate *ps, const pending *pc,
                           childbuf *out, xf_error *err)
{
    int n = ps->n, var = pc->var, n_in = pc->n_in, n_out = pc->n_out;
    const uint8_t *in = pc->in;
    xf_shape in_sh[MAX_NODE_INPUTS], out_sh[NODE_OUTS];
    uint64_t in_h[MAX_NODE_INPUTS], out_h[NODE_OUTS];
    for (int i = 0; i < n_in; i++) {
        const evalue *e = en_evalctx_ref(&w->ev, in[i]);
        in_sh[i] = e->shape;
        in_h[i] = e->hash;
    }
    for (int k = 0; k < n_out; k++) out_sh[k] = w->sc.shapes[pc->out_sid[k]];
    if (en_valmemo_get(&w->memo, var, n_in, in_h, out_h)) {
        for (int k = 0; k < n_out; k++) { /* only hash and shape of the new node are read */
            w->ev.node[n][k].shape = out_sh[k];
            w->ev.node[n][k].hash = out_h[k];
        }
    } else {
        egraph *g = &ps->g;
        append_node(g, pc);
        xf_params p;
        en_var_params(&lc->cfg->ops[var], in_sh, &p);
        en_evalctx_run_node(&w->ev, g, n, &p, out_sh);
        g->n_nodes = n;
        for (int k = 0; k < NODE_OUTS; k++) out_h[k] = k < n_out ? w->ev.node[n][k].hash : 0;
        en_valmemo_put(&w->memo, var, n_in, in_h, out_h);
    }

    uint64_t h[MAX_GRAPH_OUTPUTS];
    int nh = 0;
    uint32_t mask = ps->in_mask;
    for (int k = 0; k < ps->n_outs; k++) {
        int read = 0;
        for (int i = 0; i < n_in; i++) read |= in[i] == ps->outs[k];
        if (!read) h[nh++] = en_evalctx_ref(&w->ev, ps->outs[k])->hash;
    }
    for (int k = 0; k < n_out; k++) h[nh++] = w->ev.node[n][k].hash;
    for (int i = 0; i < n_in; i++)
        if (REF_IS_INPUT(in[i])) mask |= 1u << in[i];

    uint64_t keys[XF_ENUM_MAX_OPS];
    memcpy(keys, ps->keys, sizeof keys);
    keys[n] = pc->key;
    child c;
    memset(&c, 0, sizeof c);
    c.fp = en_class_key(h, nh, mask);
    c.shash = en_struct_hash(keys, (1u << (n + 1)) - 1);
    c.parent = ps->index;
    c.var = (uint16_t)var;
    memcpy(c.in, in, (size_t)n_in);
    c.n_in = (uint8_t)n_in;
    c.n_outputs = (uint8_t)nh;
    return push_child(out, &c, err);
}

/* Step 6 for the waiting children, in the order they came: a child whose
 * subgraphs are all representatives is evaluated and appended, the others
 * dropped. */
static xf_status flush_pending(worker *w, const level_ctx *lc, pstate *ps, childbuf *out,
                               xf_error *err)
{
    xf_status st = XF_OK;
    for (int c = 0; c < ps->n_pending && st == XF_OK; c++) {
        const pending *pc = &ps->pending[c];
        int keep = 1;
        for (int i = 0; keep && i < pc->n_hs; i++) keep = en_hset_has(lc->reps, ps->hs[pc->first_h + i]);
        if (keep) st = add_child(w, lc, ps, pc, out, err);
        else w->reducible++;
    }
    ps->n_pending = 0;
    ps->n_hs = 0;
    return st;
}

static xf_status try_child(worker *w, const level_ctx *lc, pstate *ps, int var, int n_in,
                           const uint8_t *in, int n_out, const int *out_sid, childbuf *out,
                           xf_error *err)
{
    const egraph *pg = &ps->g;
    int n = ps->n;
    for (int j = 0; j < n; j++) /* the inputs compared in place: memcmp was a call */
        if (pg->nodes[j].var == var && (n_in < 1 || pg->nodes[j].in[0] == in[0]) &&
            (n_in < 2 || pg->nodes[j].in[1] == in[1]))
            return XF_OK;
    int internal = 0;
    uint16_t s_reads = 0; /* parent nodes whose outputs the new node reads */
    for (int i = 0; i < n_in; i++)
        if (!REF_IS_INPUT(in[i])) {
            if (ps->readers[in[i]]) internal = 1;
            s_reads |= (uint16_t)(1u << REF_NODE_OF(in[i]));
        }
    if (!ps->rep && !internal) return XF_OK;
    int consumed = 0;
    for (int k = 0; k < ps->n_outs; k++)
        for (int i = 0; i < n_in; i++)
            if (in[i] == ps->outs[k]) {
                consumed++;
                break;
            }
    int n_outs = ps->n_outs - consumed + n_out;
    if (n_outs > lc->out_bound) return XF_OK;
    uint64_t key = en_node_key((uint16_t)var, n_in, in, ps->keys);
    for (uint32_t j = ps->sinks & ~s_reads; j; j &= j - 1)
        if (ps->keys[__builtin_ctz(j)] >= key) return XF_OK;

    /* step 6 needs only the structure and the parent's shapes: the child
     * waits with its subgraphs' hashes, their slots and its node's memo
     * slot loading, and is decided when enough children wait */
    uint64_t in_h[MAX_NODE_INPUTS] = {0};
    for (int i = 0; i < n_in; i++) in_h[i] = en_evalctx_ref(&w->ev, in[i])->hash;
    en_valmemo_prefetch(&w->memo, var, n_in, in_h);
    pending *pc = &ps->pending[ps->n_pending++];
    pc->var = (uint16_t)var;
    pc->n_in = (uint8_t)n_in;
    pc->n_out = (uint8_t)n_out;
    memset(pc->in, 0, sizeof pc->in);
    memcpy(pc->in, in, (size_t)n_in);
    memcpy(pc->out_sid, out_sid, sizeof pc->out_sid);
    pc->key = key;
    egraph *g = &ps->g;
    append_node(g, pc);
    uint16_t readers[N_REFS];
    memcpy(readers, ps->readers, sizeof readers);
    for (int i = 0; i < n_in; i++) readers[in[i]] |= (uint16_t)(1u << n);
    pc->first_h = (uint16_t)ps->n_hs;
    pc->n_hs = (uint8_t)subgraph_hashes(w, g, ps->sid, readers, ps->hs + ps->n_hs);
    g->n_nodes = n;
    for (int i = 0; i < pc->n_hs; i++) en_hset_prefetch(lc->reps, ps->hs[ps->n_hs + i]);
    ps->n_hs += pc->n_hs;
    if (ps->n_pending == PENDING_MAX) return flush_pending(w, lc, ps, out, err);
    return XF_OK;
}

xf_status en_extend_parent(worker *w, const level_ctx *lc, uint32_t parent, childbuf *out,
                        xf_error *err)
{
    const xf_enum_config *cfg = lc->cfg;
    pstate ps;
    memset(&ps, 0, sizeof ps);
    en_egraph_from_store(cfg, lc->levels, lc->level - 1, parent, &ps.g);
    const grec *pr = &lc->levels[lc->level - 1].v[parent];
    if (pr->flags & GREC_LEAF) return XF_OK;
    ps.n = ps.g.n_nodes;
    ps.rep = (pr->flags & GREC_REP) != 0;
    ps.index = parent;
    /* consecutive parents share their first nodes (siblings share all but
     * the last): values still in ev from the last parent are kept */
    int same = en_egraph_same_prefix(&w->evald, &ps.g);
    w->evald = ps.g;
    w->evald.n_nodes = same;
    for (int j = same; j < ps.n; j++, w->evald.n_nodes = j)
        if (!en_evalctx_eval_node(&w->ev, &ps.g, j))
            return XF_FAIL(err, XF_ERR_INTERNAL, "enumerate: stored graph %u at level %d does not "
                           "evaluate", parent, lc->level - 1);
    en_egraph_node_keys(&ps.g, ps.keys);
    for (int j = 0; j < ps.n; j++)
        for (int i = 0; i < ps.g.nodes[j].n_in; i++) {
            int r = ps.g.nodes[j].in[i];
            ps.readers[r] |= (uint16_t)(1u << j);
            if (REF_IS_INPUT(r)) ps.in_mask |= 1u << r;
        }
    ps.n_outs = en_egraph_outputs(&ps.g, ps.outs);
    for (int j = 0; j < ps.n; j++) {
        int read = 0;
        for (int k = 0; k < ps.g.nodes[j].n_out; k++) read |= ps.readers[REF_NODE(j, k)] != 0;
        if (!read) ps.sinks |= (uint16_t)(1u << j);
    }

    /* values the new node may read, grouped by shape id */
    uint8_t refs[N_REFS];
    int n_refs = 0;
    for (int i = 0; i < cfg->n_inputs; i++) {
        refs[n_refs++] = (uint8_t)i;
        ps.sid[i] = w->in_sid[i];
    }
    for (int j = 0; j < ps.n; j++)
        for (int k = 0; k < ps.g.nodes[j].n_out; k++) {
            int r = REF_NODE(j, k);
            ps.sid[r] = en_sc_intern(&w->sc, &w->ev.node[j][k].shape);
            if (ps.sid[r] < 0)
                return XF_FAIL(err, XF_ERR_INTERNAL, "enumerate: more than %d distinct shapes",
                               SC_MAX_SHAPES);
            refs[n_refs++] = (uint8_t)r;
        }
    /* the refs of each shape, in refs' order (children come out in the
     * order of a scan of refs) */
    int group_sid[N_REFS], n_groups = 0, group_n[N_REFS];
    uint8_t group_refs[N_REFS][N_REFS];
    for (int i = 0; i < n_refs; i++) {
        int s = ps.sid[refs[i]], g = 0;
        while (g < n_groups && group_sid[g] != s) g++;
        if (g == n_groups) {
            group_sid[n_groups] = s;
            group_n[n_groups++] = 0;
        }
        group_refs[g][group_n[g]++] = refs[i];
    }

    /* For each variant and first-input group, the second-input groups it
     * applies to (bit gb; a one-input variant: bit 0), from the shape
     * cache's masks of the variants that apply to a pair of shapes: asking
     * it per variant and pair of groups, thousands of times a parent, was a
     * fifth of the run (mostly cache misses in its table). */
    int words = en_sc_var_words(&w->sc);
    uint64_t *ok = w->groups_ok; /* [var * n_groups + ga] */
    memset(ok, 0, sizeof *ok * (size_t)cfg->n_ops * (size_t)n_groups);
    for (int ga = 0; ga < n_groups; ga++)
        for (int gb = 0; gb <= n_groups; gb++) { /* gb == n_groups: the one-input variants */
            int ids[2] = {group_sid[ga], gb < n_groups ? group_sid[gb] : 0};
            const uint64_t *m = en_sc_var_mask(&w->sc, gb < n_groups ? 2 : 1, ids);
            uint64_t bit = gb < n_groups ? 1ull << gb : 1;
            for (int k = 0; k < words; k++)
                for (uint64_t vs = m[k]; vs; vs &= vs - 1)
                    ok[(size_t)(64 * k + __builtin_ctzll(vs)) * (size_t)n_groups + (size_t)ga] |= bit;
        }

    xf_status st = XF_OK;
    for (int var = 0; var < cfg->n_ops && st == XF_OK; var++) {
        int arity = en_var_arity(&cfg->ops[var]);
        int n_out, out_sid[NODE_OUTS];
        uint8_t in[MAX_NODE_INPUTS];
        if (arity == 0) {
            if (en_sc_apply(&w->sc, var, 0, NULL, &n_out, out_sid))
                st = try_child(w, lc, &ps, var, 0, in, n_out, out_sid, out, err);
            continue;
        }
        for (int ga = 0; ga < n_groups && st == XF_OK; ga++) {
            for (uint64_t gbs = ok[(size_t)var * (size_t)n_groups + (size_t)ga]; gbs && st == XF_OK;
                 gbs &= gbs - 1) {
                int gb = __builtin_ctzll(gbs);
                int ids[2] = {group_sid[ga], group_sid[gb]};
                if (!en_sc_apply(&w->sc, var, arity, ids, &n_out, out_sid)) continue;
                for (int a = 0; a < group_n[ga] && st == XF_OK; a++) {
                    in[0] = group_refs[ga][a];
                    if (arity == 1) {
                        st = try_child(w, lc, &ps, var, 1, in, n_out, out_sid, out, err);
                        continue;
                    }
                    for (int b = 0; b < group_n[gb] && st == XF_OK; b++) {
                        in[1] = group_refs[gb][b];
                        st = try_child(w, lc, &ps, var, 2, in, n_out, out_sid, out, err);
                    }
                }
            }
        }
    }
    if (st == XF_OK) st = flush_pending(w, lc, &ps, out, err);
    return st;
}
