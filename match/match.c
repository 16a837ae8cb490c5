/*
 * match.c — finds every location of a rule's source pattern in a graph.
 *
 * Backtracking over the pattern's search plan (pattern.c): the first
 * operator's candidates are the graph nodes with its root signature (op,
 * matching key, producers of its first inputs: a hash-table look-up in the
 * index), each next operator is reached as the producer of a matched input,
 * a consumer of a matched value or of a bound rule input. A candidate is checked
 * as soon as it is bound: op, arity, matching key, distinct from the nodes
 * matched so far, the pattern edges to every matched operator, consistent
 * rule-input bindings (same dtype), internal values with exactly as many
 * distinct consumers as inside the pattern and not graph outputs, mapped
 * outputs the target replaces by a bare rule input not graph outputs. A
 * complete match is then checked once: matching forms equal byte for byte
 * (the key could collide), each source generator the shape the rule was
 * proved with (generator_as_proved), no rule input bound to a value the
 * match computes, no cycle after the rewrite (a bound input reachable from a
 * mapped output through nodes outside the match; the walk only visits nodes
 * whose topological position is below the latest bound input's producer),
 * and a target that instantiates at the bound shapes and yields the matched
 * outputs' shapes and dtypes, and the rule's validity domain holding at
 * the bound inputs' shapes (ir/domain.c: a rule is applied only where it
 * holds). A split matches a split that cuts as the rule's does (as many
 * equal parts, or the same sizes) unless the rule lets it cut freely
 * (cut_free, pattern.c: its parts leave the rule only, replaced part for
 * part by a target split whose parts leave it only).
 *
 * Actions are visited in order, and only those whose root signature some
 * node of the graph has (most have none: a rule set has thousands of
 * signatures, a graph a few dozen). The rule set groups its actions by
 * signature; xf_match_all looks up the signatures of the smaller side in
 * the other's (a small graph's among the set's: the deriver matches
 * graphs of five operators with 100,000 actions; a large set's in a large
 * graph's table) and marks the actions of those present in a bitmap, so
 * an absent action costs a bit, not a look-up.
 *
 * Locations are sorted by their nodes (in the rule's source node order) and
 * then by their input bindings, so the order does not depend on the plan.
 * Nothing is allocated in the inner loop: the scratch lives in a context
 * reused for every rule of xf_match_all.
 */
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "match/match_internal.h"
#include "match/relparams_internal.h"

typedef struct match_ctx {
    const xf_graph *g;
    const xf_graph_index *ix;
    const xf_rs_rule *rr;
    int rule;
    int commutative; /* the rule set's: bind add/mul/min/max either way round */
    int node_of[XF_MATCH_MAX_NODES]; /* graph node per pattern operator, -1 */
    int swap[XF_MATCH_MAX_NODES];    /* 1: its two operands bound the other way round */
    int bound[XF_MATCH_MAX_INPUTS];  /* graph value per rule input, -1 */
    xf_match *found;                 /* every location of the current rule */
    int n_found, cap_found;
    int *stamp, *stack; /* cycle walk: per-node visit stamp, DFS stack */
    int stamp_now, n_alloc;
    int cycle_refused; /* candidates only the cycle check refused */
    int64_t roots;     /* nodes tried as the first operator */
    xf_status st;
    xf_error *err;
} match_ctx;

static void ctx_free(match_ctx *c)
{
    xf_free(c->found);
    xf_free(c->stamp);
    xf_free(c->stack);
}

static xf_status ctx_prepare(match_ctx *c, const xf_graph *g, const xf_graph_index *ix,
                             xf_error *err)
{
    c->g = g;
    c->ix = ix;
    c->err = err;
    if (ix->n_nodes != g->n_nodes || ix->n_values != g->n_values)
        return XF_FAIL(err, XF_ERR_INVALID,
                       "match: the index was built for another graph (%d nodes, %d values; the "
                       "graph has %d and %d)",
                       ix->n_nodes, ix->n_values, g->n_nodes, g->n_values);
    if (c->n_alloc < g->n_nodes + 1) {
        xf_free(c->stamp);
        xf_free(c->stack);
        c->n_alloc = g->n_nodes + 1;
        c->stamp = xf_calloc((size_t)c->n_alloc, sizeof *c->stamp);
        c->stack = xf_malloc(sizeof *c->stack * (size_t)c->n_alloc);
        c->stamp_now = 0;
        if (!c->stamp || !c->stack) {
            c->n_alloc = 0;
            return XF_FAIL(err, XF_ERR_NOMEM, "out of memory matching rules");
        }
    }
    return XF_OK;
}

static int in_match(const match_ctx *c, int node)
{
    for (int k = 0; k < c->rr->pat.n_nodes; k++)
        if (c->node_of[k] == node) return 1;
    return 0;
}

/* k when split p cuts its input into k >= 2 equal parts, else 0. */
static int equal_parts(const xf_node *p, const xf_shape *in)
{
    int a = xf_norm_axis(p->params.axis, in->rank);
    return a >= 0 ? xf_split_equal_parts(&p->params, in->dims[a]) : 0;
}

/* A split of the graph cuts as the rule's does: into as many equal parts
 * where the rule's cuts its axis into equal parts (its sizes follow the
 * axis, as the verifier and the enumerator re-derive them: a rule's three
 * parts of 4 match a model's three of 128, never two of 192 nor 128, 64,
 * 192), else at the rule's own sizes. */
static int same_partition(const xf_node *pn, const xf_shape *pin, const xf_node *gn,
                          const xf_shape *gin)
{
    int k = equal_parts(pn, pin);
    if (k) return equal_parts(gn, gin) == k;
    if (pn->params.n_split != gn->params.n_split) return 0;
    for (int i = 0; i < pn->params.n_split; i++)
        if (pn->params.split[i] != gn->params.split[i]) return 0;
    return 1;
}

/* Matching form of graph node `node` equals pattern operator k's (their
 * keys are equal already). */
static int same_form(const match_ctx *c, int k, int node)
{
    const xf_graph *src = &c->rr->rule.src;
    const xf_node *pn = &src->nodes[k], *gn = &c->g->nodes[node];
    const xf_shape *pin = pn->n_inputs > 0 ? &src->values[pn->inputs[0]].shape : NULL;
    const xf_shape *gin = gn->n_inputs > 0 ? &c->g->values[gn->inputs[0]].shape : NULL;
    if (pn->op == XF_OP_SPLIT && !c->rr->pat.nodes[k].cut_free &&
        (!pin || !gin || !same_partition(pn, pin, gn, gin)))
        return 0;
    if (c->rr->pat.nodes[k].form_zero && c->ix->form_zero[node]) return 1;
    xf_params a, b;
    match_form(pn->op, &pn->params, pn->n_inputs, pn->n_outputs, pin, &a, NULL);
    match_form(gn->op, &gn->params, gn->n_inputs, gn->n_outputs, gin, &b, NULL);
    if (pn->op == XF_OP_SLICE) {
        if (!gin || !match_slice_ends_agree(&a, &b, gin)) return 0;
        memcpy(b.ends, a.ends, sizeof b.ends);
    }
    return memcmp(&a, &b, offsetof(xf_params, split)) == 0; /* split[] is cleared */
}

/* Whether pattern operator k, a view, may keep readers outside the match
 * (and be a graph output): it then stays for them, which costs nothing
 * when what it reads stays anyway: a rule input, or another such view. A
 * chain of rewrites that moves a reshape past every reader of a value one
 * reader at a time needs this (the reshape goes when its last reader has
 * moved). */
static int view_may_stay(const match_ctx *c, int k)
{
    const xf_pat_node *pn = &c->rr->pat.nodes[k];
    if (!xf_op_reshapes(pn->op) || pn->n_in != 1) return 0;
    xf_pat_ref r = pn->in[0];
    return r.node < 0 || view_may_stay(c, r.node);
}

/* The graph input slot of matched pattern operator k's slot s. */
static int slot(const match_ctx *c, int k, int s)
{
    return c->swap[k] ? 1 - s : s;
}

/* Whether generator parameters `have` give the shape `want`, or want's
 * last `rank` axes where want has more: an element-wise consumer's other
 * operand batched over axes the rule lacks (m0[b,4,4] * ones[4,4] for the
 * rule's m0[4,4] * ones[4,4]), which the generator, at the rule's rank,
 * broadcasts over as numpy does, the same generator for every batch
 * element, as the rule's inputs are batched (review 42d, L1). */
static int same_or_batched(const xf_params *have, const xf_params *want, int rank)
{
    if (xf_params_same_shape(have, want)) return 1;
    int lead = want->n_shape - rank;
    return have->n_shape == rank && lead > 0 &&
           memcmp(have->shape, want->shape + lead, sizeof have->shape[0] * (size_t)rank) == 0;
}

/* The source node that reads value v first in the source's topological
 * order (xf_graph_topo_order, the order the bounded check sizes generators
 * in: verify/bounded_shapes.c; review 44a, F5), -1 when none reads it;
 * *at gets the slot. */
static int first_reader(const match_ctx *c, int v, int *at)
{
    const xf_graph *src = &c->rr->rule.src;
    for (int q = 0; q < src->n_nodes; q++) {
        int j = c->rr->pat.src_order[q];
        const xf_node *u = &src->nodes[j];
        for (int s = 0; s < u->n_inputs; s++)
            if (u->inputs[s] == v) {
                *at = s;
                return j;
            }
    }
    return -1;
}

/* Whether source value v is a generator's output. */
static int generator_output(const xf_graph *src, int v)
{
    return v >= 0 && src->values[v].kind == XF_VALUE_NODE &&
           match_relparams_is_generator(src->nodes[src->values[v].producer].op);
}

/* Into *want, the shape source node j, reading generator `gen` at slot
 * `at`, gives it at this match by the one sizing rule the bounded check and
 * the target share (xf_rule_generator_shape over the matched node's input
 * shapes, in the rule's operand order): the model's where j gives the
 * rule's generator its own shape at the rule's sizes, else the rule's.
 * An operand of j that is itself a generator j reads first sizes nothing,
 * as in the bounded check (verify/bounded_shapes.c), where it is not sized
 * yet and the generator keeps the rule's size. Until 2026-12-01 it did:
 * ewmul(g1, g2) and matmul(I1, I2) held each generator only to the other's
 * model size and ewmul(g, g) to its own, so to nothing, and rule 171411 of
 * the 4-op database, whose mean and matmul hide the pools' kernel from the
 * output, turned w/225 into w/81 at pools of 4x1x3x5 (review 43e, F1). */
static void sized_by(const match_ctx *c, const xf_node *gen, int j, int at, xf_params *want)
{
    const xf_graph *src = &c->rr->rule.src;
    const xf_node *u = &src->nodes[j], *gu = &c->g->nodes[c->node_of[j]];
    const xf_shape *own[2] = {NULL, NULL}, *now[2] = {NULL, NULL};
    for (int s = 0, r; s < 2 && s < u->n_inputs; s++) {
        if (generator_output(src, u->inputs[s]) && first_reader(c, u->inputs[s], &r) == j)
            continue;
        own[s] = &src->values[u->inputs[s]].shape;
        now[s] = &c->g->values[gu->inputs[slot(c, j, s)]].shape; /* the model's, in rule order */
    }
    xf_rule_generator_shape(gen->op, &gen->params, u->op, u->n_inputs, at, own, now, want);
}

/* Whether graph node `node`, bound to source generator k (whose matching
 * form has no shape), is the generator the rule was proved with: of the
 * shape its first consumer in the source gives it at this match where that
 * consumer gives the rule's generator its own shape (sized_by; or its last
 * axes, same_or_batched), else of the rule's shape. A proof holds for the
 * generator it saw: conv2d(slice[0:1](w1), const_pool[4x1x3x3]) sums
 * four copies of the pooled channel, whatever the conv input's channels,
 * and a const_pool of 8 sums eight. */
static int generator_as_proved(const match_ctx *c, int k, int node)
{
    const xf_graph *src = &c->rr->rule.src;
    const xf_node *gen = &src->nodes[k];
    xf_params want = gen->params;
    int at = 0, j = first_reader(c, gen->outputs[0], &at);
    if (j >= 0) sized_by(c, gen, j, at, &want);
    return same_or_batched(&c->g->nodes[node].params, &want, gen->params.n_shape);
}

/* Binds pattern operator k to graph node `node` (its operands swapped when
 * `swap`) if every local check passes; *newly gets the rule inputs bound
 * here (bit mask). */
static int try_bind(match_ctx *c, int k, int node, int swap, unsigned *newly)
{
    const xf_pattern *pat = &c->rr->pat;
    const xf_pat_node *pn = &pat->nodes[k];
    const xf_graph *g = c->g;
    const xf_node *gn = &g->nodes[node];
    *newly = 0;
    /* the key (op, arity and form; a dense array) first: most candidates
     * fail here without loading the ~1 KB node */
    if (c->ix->key[node] != pn->key || gn->op != pn->op || gn->n_inputs != pn->n_in ||
        gn->n_outputs != pn->n_out || in_match(c, node))
        return 0;
    c->swap[k] = swap;
    for (int s = 0; s < pn->n_in; s++) {
        int v = gn->inputs[slot(c, k, s)];
        xf_pat_ref r = pn->in[s];
        if (v < 0) goto undo;
        if (r.node >= 0) {
            if (c->node_of[r.node] >= 0 && g->nodes[c->node_of[r.node]].outputs[r.idx] != v)
                goto undo;
        } else if (c->bound[r.idx] < 0) {
            if (g->values[v].dtype != pat->in_dtype[r.idx]) goto undo;
            c->bound[r.idx] = v;
            *newly |= 1u << r.idx;
        } else if (c->bound[r.idx] != v) {
            goto undo;
        }
    }
    /* edges from matched operators that read k's outputs */
    for (int j = 0; j < pat->n_nodes; j++) {
        if (c->node_of[j] < 0) continue;
        const xf_pat_node *pj = &pat->nodes[j];
        for (int s = 0; s < pj->n_in; s++)
            if (pj->in[s].node == k &&
                g->nodes[c->node_of[j]].inputs[slot(c, j, s)] != gn->outputs[pj->in[s].idx])
                goto undo;
    }
    for (int o = 0; o < pn->n_out; o++) {
        int v = gn->outputs[o];
        if (pn->out_rule[o] < 0) {
            int users = c->ix->users_start[v + 1] - c->ix->users_start[v];
            if (view_may_stay(c, k)) {
                if (users < pn->n_users[o]) goto undo;
            } else if (c->ix->is_output[v] || users != pn->n_users[o]) {
                goto undo;
            }
        } else if (pn->out_bare[o] && c->ix->is_output[v]) {
            goto undo;
        }
    }
    c->node_of[k] = node;
    return 1;
undo:
    for (int i = 0; i < pat->n_inputs; i++)
        if (*newly & (1u << i)) c->bound[i] = -1;
    *newly = 0;
    return 0;
}

/* Pushes the consumers of value v that the cycle walk has not visited, that
 * lie outside the match and not above topological position maxpos. */
static int push_users(match_ctx *c, int v, int maxpos, int top)
{
    const xf_graph_index *ix = c->ix;
    for (int u = ix->users_start[v]; u < ix->users_start[v + 1]; u++) {
        int n = ix->users[u];
        if (ix->topo_pos[n] > maxpos || c->stamp[n] == c->stamp_now || in_match(c, n)) continue;
        c->stamp[n] = c->stamp_now;
        c->stack[top++] = n;
    }
    return top;
}

/* 1 when some bound input is reachable from a mapped output through nodes
 * outside the match. */
static int creates_cycle(match_ctx *c, const xf_match *m)
{
    const xf_graph *g = c->g;
    const xf_graph_index *ix = c->ix;
    int maxpos = -1;
    for (int i = 0; i < m->n_inputs; i++) {
        int v = m->inputs[i];
        if (v >= 0 && g->values[v].kind == XF_VALUE_NODE) {
            int p = ix->topo_pos[g->values[v].producer];
            if (p > maxpos) maxpos = p;
        }
    }
    if (maxpos < 0) return 0;
    if (++c->stamp_now == 0) {
        memset(c->stamp, 0, sizeof *c->stamp * (size_t)c->n_alloc);
        c->stamp_now = 1;
    }
    int top = 0;
    for (int i = 0; i < m->n_outputs; i++) top = push_users(c, m->outputs[i], maxpos, top);
    while (top > 0) {
        const xf_node *nd = &g->nodes[c->stack[--top]];
        for (int o = 0; o < nd->n_outputs; o++) {
            int v = nd->outputs[o];
            for (int i = 0; i < m->n_inputs; i++)
                if (m->inputs[i] == v) return 1;
            top = push_users(c, v, maxpos, top);
        }
    }
    return 0;
}

/* A bound input or a matched node's output with a zero-size dim: a rule's
 * proof and domain take every size at least 1 (verify/prove.c), so a
 * model's empty tensor is no place for it (slice[0:1](concat0(a, b)) is
 * b's first row where a has no rows). */
static int has_empty_value(const xf_graph *g, const xf_match *m)
{
    for (int i = 0; i < m->n_inputs; i++)
        if (m->inputs[i] >= 0 && xf_shape_numel(&g->values[m->inputs[i]].shape) == 0) return 1;
    for (int k = 0; k < m->n_nodes; k++) {
        const xf_node *nd = &g->nodes[m->nodes[k]];
        for (int o = 0; o < nd->n_outputs; o++)
            if (xf_shape_numel(&g->values[nd->outputs[o]].shape) == 0) return 1;
    }
    return 0;
}

/* The model's value for source value v of the rule at match m: a bound
 * input or a matched node's output; -1 for an input the match leaves unbound. */
static int model_value(const match_ctx *c, const xf_match *m, int v)
{
    const xf_graph *src = &c->rr->rule.src;
    const xf_value *x = &src->values[v];
    if (x->kind == XF_VALUE_NODE)
        return c->g->nodes[m->nodes[x->producer]].outputs[x->producer_output];
    for (int i = 0; i < src->n_inputs; i++)
        if (src->inputs[i] == v) return m->inputs[i];
    return -1;
}

/* Whether source value v is computed from a generator alone (ones,
 * softmax(ones), an identity...): its sizes are the model's, never bound
 * by an input (the matcher ignores a generator's shape). */
static int from_generator(const xf_graph *src, int v)
{
    while (src->values[v].kind == XF_VALUE_NODE) {
        const xf_node *nd = &src->nodes[src->values[v].producer];
        if (match_relparams_is_generator(nd->op)) return 1;
        if (nd->n_inputs != 1 || nd->inputs[0] < 0) return 0;
        v = nd->inputs[0];
    }
    return 0;
}

/* Dim i of s counted from its last (1: the last), 1 where s has fewer axes. */
static int64_t dim_from_last(const xf_shape *s, int i)
{
    return i <= s->rank ? s->dims[s->rank - i] : 1;
}

/* Whether every element-wise operator of the source that broadcasts an
 * operand computed from a generator against the other broadcasts it in the
 * model as in the rule, axis by axis from the last: a dim equal to the other
 * operand's equal to the model's other, a 1 against a larger one 1. The
 * proof takes the first as a fact (a broadcast's tie, ir/domain_infer.c),
 * and the domain cannot state it of a size no input binds: transpose(x + I)
 * => transpose(x) + I, proved for I of x's size, was applied to a model's I
 * of 1x1, which broadcasts as ones (review 41d, finding 5). A leading axis
 * the rule lacks on both operands is a batch axis: the model's are equal,
 * or the generator's is 1 (or absent) and broadcasts the same generator over
 * the batch (review 42d, L1). */
static int generators_broadcast_as_in_rule(const match_ctx *c, const xf_match *m)
{
    const xf_graph *src = &c->rr->rule.src, *g = c->g;
    for (int k = 0; k < src->n_nodes; k++) {
        const xf_node *nd = &src->nodes[k];
        if (nd->n_inputs != 2 || !xf_op_is(nd->op, XF_OPC_ELEMENTWISE) ||
            nd->op == XF_OP_SCALAR_MUL || nd->op == XF_OP_PRELU)
            continue;
        for (int s = 0; s < 2; s++) {
            int v = nd->inputs[s], w = nd->inputs[1 - s];
            if (v < 0 || w < 0 || !from_generator(src, v)) continue;
            int mv = model_value(c, m, v), mw = model_value(c, m, w);
            if (mv < 0 || mw < 0) return 0;
            const xf_shape *a = &src->values[v].shape, *b = &src->values[w].shape;
            const xf_shape *ma = &g->values[mv].shape, *mb = &g->values[mw].shape;
            int n = ma->rank > mb->rank ? ma->rank : mb->rank; /* axes the rule lacks: 1 */
            for (int i = 1; i <= n; i++) {
                int64_t ad = dim_from_last(a, i), bd = dim_from_last(b, i);
                int64_t mad = dim_from_last(ma, i), mbd = dim_from_last(mb, i);
                if (i > a->rank && i > b->rank ? mad != mbd && mad != 1
                    : ad == bd                 ? mad != mbd
                                               : ad == 1 && mad != 1)
                    return 0;
            }
        }
    }
    return 1;
}

static void complete(match_ctx *c)
{
    const xf_pattern *pat = &c->rr->pat;
    const xf_graph *g = c->g;
    xf_match m;
    memset(&m, 0, sizeof m);
    m.rule = c->rule;
    m.n_nodes = pat->n_nodes;
    m.n_inputs = pat->n_inputs;
    m.n_outputs = pat->n_outputs;
    float eps = -1; /* the source's layer norms share one positive epsilon */
    for (int k = 0; k < pat->n_nodes; k++) {
        m.nodes[k] = c->node_of[k];
        if (!same_form(c, k, m.nodes[k])) return;
        if (match_relparams_is_generator(pat->nodes[k].op) && !generator_as_proved(c, k, m.nodes[k]))
            return;
        if (pat->nodes[k].op == XF_OP_LAYERNORM) {
            float e = g->nodes[m.nodes[k]].params.epsilon;
            if (!(e > 0) || (eps >= 0 && e != eps)) return;
            eps = e;
        }
        if (pat->views_exact && pat->nodes[k].op == XF_OP_RESHAPE) {
            if (!xf_params_same_shape(&c->rr->rule.src.nodes[k].params, &g->nodes[m.nodes[k]].params))
                return;
        }
    }
    for (int i = 0; i < pat->n_inputs; i++) {
        int v = c->bound[i];
        m.inputs[i] = v;
        if (v >= 0 && g->values[v].kind == XF_VALUE_NODE && in_match(c, g->values[v].producer))
            return;
        /* a scalar of the rule binds only a one-element value: the proof
         * says nothing of a tensor broadcast in its place (transpose(m0 +
         * s0) => transpose(m0) + s0 is false for a matrix s0) */
        if (v >= 0 && pat->in_scalar[i] && xf_shape_numel(&g->values[v].shape) != 1)
            return;
    }
    /* so does every scalar the source computes (a dot product of two
     * vectors): bound where a rule input of higher rank makes it a vector,
     * an axiom on scalars (layernorm(x + e) = layernorm(x)) would be
     * applied to a tensor (review 46c, finding 1); the target's are
     * checked as they are instantiated (match_scalar_kept) */
    const xf_graph *src = &c->rr->rule.src;
    for (int k = 0; k < pat->n_nodes; k++) {
        const xf_node *rn = &src->nodes[k], *gn = &g->nodes[m.nodes[k]];
        for (int o = 0; o < rn->n_outputs && o < gn->n_outputs; o++)
            if (!match_scalar_kept(src, rn->outputs[o], &g->values[gn->outputs[o]].shape)) return;
    }
    for (int i = 0; i < pat->n_outputs; i++)
        m.outputs[i] = g->nodes[c->node_of[pat->out[i].node]].outputs[pat->out[i].idx];
    if (has_empty_value(g, &m) || !generators_broadcast_as_in_rule(c, &m)) return;
    if (creates_cycle(c, &m)) {
        c->cycle_refused++;
        return;
    }
    xf_match_target t;
    xf_dtype dt[XF_MATCH_MAX_OUTPUTS];
    xf_shape sh[XF_MATCH_MAX_OUTPUTS];
    if (match_instantiate_full(c->rr, g, c->ix, &m, &t, dt, sh, NULL) != XF_OK) return;
    for (int i = 0; i < pat->n_outputs; i++) {
        const xf_value *v = &g->values[m.outputs[i]];
        if (dt[i] != v->dtype || !xf_shape_equal(&sh[i], &v->shape)) return;
    }
    /* where the rule holds (ir/domain.c): never applied at shapes outside it */
    const xf_domain *dom = &c->rr->rule.domain;
    if (!dom->known || dom->n > 0) {
        const xf_shape *in_sh[XF_MATCH_MAX_INPUTS];
        for (int i = 0; i < pat->n_inputs; i++)
            in_sh[i] = m.inputs[i] >= 0 ? &g->values[m.inputs[i]].shape : NULL;
        if (!xf_domain_holds(dom, in_sh, pat->n_inputs)) return;
    }
    if (c->n_found == c->cap_found) {
        int cap = c->cap_found ? 2 * c->cap_found : 64;
        xf_match *p = xf_realloc(c->found, sizeof *p * (size_t)cap);
        if (!p) {
            c->st = XF_FAIL(c->err, XF_ERR_NOMEM, "out of memory collecting matches");
            return;
        }
        c->found = p;
        c->cap_found = cap;
    }
    c->found[c->n_found++] = m;
}

static void search(match_ctx *c, int t);

static void try_node(match_ctx *c, int t, int node)
{
    int k = c->rr->pat.steps[t].node;
    const xf_node *gn = &c->g->nodes[node];
    /* a commutative operator either way round (once when both operands are one value) */
    int ways = c->commutative && match_commutes(gn->op, gn->n_inputs) &&
                       gn->inputs[0] != gn->inputs[1]
                   ? 2
                   : 1;
    for (int swap = 0; swap < ways && c->st == XF_OK; swap++) {
        unsigned newly;
        if (!try_bind(c, k, node, swap, &newly)) continue;
        search(c, t + 1);
        c->node_of[k] = -1;
        c->swap[k] = 0;
        for (int i = 0; i < c->rr->pat.n_inputs; i++)
            if (newly & (1u << i)) c->bound[i] = -1;
    }
}

static void try_users(match_ctx *c, int t, int v)
{
    const xf_graph_index *ix = c->ix;
    for (int u = ix->users_start[v]; u < ix->users_start[v + 1] && c->st == XF_OK; u++)
        try_node(c, t, ix->users[u]);
}

static void search(match_ctx *c, int t)
{
    const xf_pattern *pat = &c->rr->pat;
    if (t == pat->n_nodes) {
        complete(c);
        return;
    }
    const xf_pat_step *st = &pat->steps[t];
    const xf_graph *g = c->g;
    switch (st->anchor) {
    case XF_ANCHOR_PRODUCER: {
        int v = g->nodes[c->node_of[st->a_node]].inputs[slot(c, st->a_node, st->a_idx)];
        if (v >= 0 && g->values[v].kind == XF_VALUE_NODE && g->values[v].producer_output == st->a_out)
            try_node(c, t, g->values[v].producer);
        break;
    }
    case XF_ANCHOR_USER: try_users(c, t, g->nodes[c->node_of[st->a_node]].outputs[st->a_idx]); break;
    case XF_ANCHOR_INPUT_USER: try_users(c, t, c->bound[st->a_idx]); break;
    case XF_ANCHOR_OP: {
        const xf_graph_index *ix = c->ix;
        uint64_t sig = pat->root_sig;
        for (int e = ix->sig_head[sig & ix->sig_mask]; e >= 0 && c->st == XF_OK; e = ix->sig_next[e])
            if (ix->sig[e] == sig) {
                c->roots++;
                try_node(c, t, ix->sig_node[e]);
            }
        break;
    }
    }
}

/* 1 when some graph node has root signature sig. */
static int root_present(const xf_graph_index *ix, uint64_t sig)
{
    for (int e = ix->sig_head[sig & ix->sig_mask]; e >= 0; e = ix->sig_next[e])
        if (ix->sig[e] == sig) return 1;
    return 0;
}

static int cmp_match(const void *a, const void *b)
{
    const xf_match *x = a, *y = b;
    for (int k = 0; k < x->n_nodes; k++)
        if (x->nodes[k] != y->nodes[k]) return x->nodes[k] < y->nodes[k] ? -1 : 1;
    for (int i = 0; i < x->n_inputs; i++)
        if (x->inputs[i] != y->inputs[i]) return x->inputs[i] < y->inputs[i] ? -1 : 1;
    return 0;
}

/* Sets c up to match action `rule`, nothing found yet. */
static void ctx_rule(match_ctx *c, const xf_ruleset *rs, int rule)
{
    c->rr = &rs->r[rule];
    c->rule = rule;
    c->commutative = rs->commutative;
    c->n_found = 0;
    c->st = XF_OK;
    for (int k = 0; k < XF_MATCH_MAX_NODES; k++) c->node_of[k] = -1, c->swap[k] = 0;
    for (int i = 0; i < XF_MATCH_MAX_INPUTS; i++) c->bound[i] = -1;
}

/* Every location of rule `rule` into c->found (sorted). */
static xf_status match_one(match_ctx *c, const xf_ruleset *rs, int rule)
{
    ctx_rule(c, rs, rule);
    search(c, 0);
    if (c->n_found > 1) qsort(c->found, (size_t)c->n_found, sizeof *c->found, cmp_match);
    return c->st;
}

xf_status xf_match_rule(const xf_ruleset *rs, int rule, const xf_graph *g,
                        const xf_graph_index *ix, xf_match *out, int max, int *n_found,
                        xf_error *err)
{
    *n_found = 0;
    if (!rs || rule < 0 || rule >= rs->n)
        return XF_FAIL(err, XF_ERR_INVALID, "match: rule %d is not in the rule set (%d rules)",
                       rule, rs ? rs->n : 0);
    match_ctx c;
    memset(&c, 0, sizeof c);
    xf_status st = ctx_prepare(&c, g, ix, err);
    if (st == XF_OK) st = match_one(&c, rs, rule);
    if (st == XF_OK) {
        *n_found = c.n_found;
        int n = c.n_found < max ? c.n_found : max;
        if (n > 0) memcpy(out, c.found, sizeof *out * (size_t)n);
    }
    ctx_free(&c);
    return st;
}

xf_status match_first(const xf_ruleset *rs, const int *rules, int n, const xf_graph *g,
                      const xf_graph_index *ix, int node, int scan, xf_match *m, int *which,
                      xf_error *err)
{
    *which = -1;
    match_ctx c;
    memset(&c, 0, sizeof c);
    xf_status st = ctx_prepare(&c, g, ix, err);
    int8_t *root = NULL; /* per root signature: -1 not looked up yet, 0 absent, 1 present */
    if (!st && rs->n_roots > 0) {
        root = xf_malloc((size_t)rs->n_roots);
        if (!root) st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory matching rules");
        else memset(root, -1, (size_t)rs->n_roots);
    }
    for (int i = 0; i < n && !st && *which < 0; i++) {
        int r = rules[i], j = rs->root_of[r];
        if (!root) break;
        if (root[j] < 0) root[j] = (int8_t)root_present(ix, rs->root_sig[j]);
        if (!root[j]) continue;
        st = match_one(&c, rs, r);
        int k = node < 0 ? (c.n_found > 0 ? 0 : -1) : -1;
        for (int f = 0; !st && node >= 0 && k < 0 && f < c.n_found && f < scan; f++)
            for (int q = 0; q < c.found[f].n_nodes; q++)
                if (c.found[f].nodes[q] == node) k = f;
        if (!st && k >= 0) {
            *m = c.found[k];
            *which = i;
        }
    }
    xf_free(root);
    ctx_free(&c);
    return st;
}

struct match_scan {
    match_ctx c;
    int *kept;
    int n_kept, cap_kept;
};

xf_status match_scan_new(match_scan **out, xf_error *err)
{
    *out = xf_calloc(1, sizeof **out);
    return *out ? XF_OK : XF_FAIL(err, XF_ERR_NOMEM, "out of memory matching rules");
}

void match_scan_free(match_scan *s)
{
    if (!s) return;
    ctx_free(&s->c);
    xf_free(s->kept);
    xf_free(s);
}

xf_status match_scan_prepare(match_scan *s, const xf_graph *g, const xf_graph_index *ix,
                             xf_error *err)
{
    s->n_kept = 0;
    return ctx_prepare(&s->c, g, ix, err);
}

/* Matches from root node `node` (a candidate of c's action), keeping it
 * when it has a location or a candidate the cycle check refused. */
static xf_status scan_root(match_scan *s, int node)
{
    match_ctx *c = &s->c;
    int found = c->n_found, refused = c->cycle_refused;
    c->roots++;
    try_node(c, 0, node);
    if (c->st || (c->n_found == found && c->cycle_refused == refused)) return c->st;
    if (s->n_kept == s->cap_kept) {
        int cap = s->cap_kept ? 2 * s->cap_kept : 64;
        int *k = xf_realloc(s->kept, sizeof *k * (size_t)cap);
        if (!k) return c->st = XF_FAIL(c->err, XF_ERR_NOMEM, "out of memory matching rules");
        s->kept = k;
        s->cap_kept = cap;
    }
    s->kept[s->n_kept++] = node;
    return XF_OK;
}

xf_status match_scan_rule(match_scan *s, const xf_ruleset *rs, int rule, const int *roots, int n,
                          xf_match *first, int *found)
{
    match_ctx *c = &s->c;
    const xf_graph_index *ix = c->ix;
    uint64_t sig = rs->r[rule].pat.root_sig, sigs[XF_MATCH_NODE_SIGS];
    s->n_kept = 0;
    ctx_rule(c, rs, rule);
    if (!roots) { /* the candidates xf_match_rule tries */
        for (int e = ix->sig_head[sig & ix->sig_mask]; e >= 0 && !c->st; e = ix->sig_next[e])
            if (ix->sig[e] == sig) scan_root(s, ix->sig_node[e]);
    }
    for (int i = 0; roots && i < n && !c->st; i++) {
        int k = match_node_sigs(c->g, ix, roots[i], sigs), has = 0;
        for (int j = 0; j < k; j++) has |= sigs[j] == sig;
        if (has) scan_root(s, roots[i]);
    }
    *found = c->st ? 0 : c->n_found;
    for (int f = 0; f < *found; f++)
        if (f == 0 || cmp_match(&c->found[f], first) < 0) *first = c->found[f];
    return c->st;
}

const int *match_scan_kept(const match_scan *s, int *n)
{
    *n = s->n_kept;
    return s->kept;
}

int64_t match_scan_roots(const match_scan *s)
{
    return s->c.roots;
}

void xf_match_list_init(xf_match_list *l)
{
    memset(l, 0, sizeof *l);
}

void xf_match_list_free(xf_match_list *l)
{
    xf_free(l->start);
    xf_free(l->found);
    xf_free(l->m);
    xf_match_list_init(l);
}

/* Sets the bits of root j's actions that grow a graph by at most
 * max_growth operators (a prefix of the group: it is ordered by growth),
 * once: they are set together. */
static void mark_root(const xf_ruleset *rs, int j, int max_growth, uint64_t *bits)
{
    int first = rs->root_actions[rs->root_start[j]];
    if (bits[first / 64] >> (first % 64) & 1) return;
    for (int a = rs->root_start[j]; a < rs->root_start[j + 1]; a++) {
        int r = rs->root_actions[a];
        if (rs->r[r].growth > max_growth) break;
        bits[r / 64] |= (uint64_t)1 << (r % 64);
    }
}

/* *bits (the caller's, xf_free): one bit per action, set for those whose
 * root signature some node of g has (ix), the only ones that can match,
 * and that grow a graph by at most max_growth operators. The signatures
 * are looked up from the smaller side: the graph's among the set's (a
 * large set, a small graph: the deriver's), or the set's in the graph's
 * table (a large graph: the optimiser's). */
static xf_status present_actions(const xf_ruleset *rs, const xf_graph_index *ix, int max_growth,
                                 uint64_t **bits, xf_error *err)
{
    *bits = xf_calloc((size_t)rs->n / 64 + 1, sizeof **bits);
    if (!*bits) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory matching rules");
    if (ix->n_sig < rs->n_roots) {
        for (int e = 0; e < ix->n_sig; e++) {
            int j = match_root_index(rs, ix->sig[e]);
            if (j >= 0) mark_root(rs, j, max_growth, *bits);
        }
    } else {
        for (int j = 0; j < rs->n_roots; j++)
            if (root_present(ix, rs->root_sig[j])) mark_root(rs, j, max_growth, *bits);
    }
    return XF_OK;
}

xf_status xf_match_all(const xf_ruleset *rs, const xf_graph *g, const xf_graph_index *ix,
                       int max_per_rule, xf_match_list *l, xf_error *err)
{
    return xf_match_all_within(rs, g, ix, max_per_rule, INT_MAX, l, err);
}

xf_status xf_match_all_within(const xf_ruleset *rs, const xf_graph *g, const xf_graph_index *ix,
                              int max_per_rule, int max_growth, xf_match_list *l, xf_error *err)
{
    int n_rules = rs ? rs->n : 0;
    if (!l->flat && (l->n_rules != n_rules || !l->start)) {
        xf_free(l->start);
        xf_free(l->found);
        l->start = xf_malloc(sizeof *l->start * ((size_t)n_rules + 1));
        l->found = xf_malloc(sizeof *l->found * ((size_t)n_rules + 1));
        l->n_rules = l->start && l->found ? n_rules : 0;
        if (!l->start || !l->found) {
            xf_free(l->start);
            xf_free(l->found);
            l->start = l->found = NULL;
            return XF_FAIL(err, XF_ERR_NOMEM, "out of memory listing matches of %d rules", n_rules);
        }
    }
    l->n = 0;
    if (!l->flat) l->start[0] = 0;
    match_ctx c;
    memset(&c, 0, sizeof c);
    xf_status st = ctx_prepare(&c, g, ix, err);
    uint64_t *bits = NULL;
    int next = 0; /* the first rule whose entries are unset */
    if (st == XF_OK && n_rules > 0) st = present_actions(rs, ix, max_growth, &bits, err);
    for (int r = 0; r < n_rules && st == XF_OK; r++) {
        if (!(bits[r / 64] >> (r % 64) & 1)) {
            if (!bits[r / 64]) r |= 63; /* none in this word */
            continue;
        }
        for (; !l->flat && next < r; next++) l->found[next] = 0, l->start[next + 1] = l->n;
        st = match_one(&c, rs, r);
        if (st != XF_OK) break;
        int take = max_per_rule > 0 && c.n_found > max_per_rule ? max_per_rule : c.n_found;
        if (l->n + take > l->cap) {
            int cap = l->cap ? l->cap : 256;
            while (cap < l->n + take) cap *= 2;
            xf_match *p = xf_realloc(l->m, sizeof *p * (size_t)cap);
            if (!p) {
                st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory listing matches");
                break;
            }
            l->m = p;
            l->cap = cap;
        }
        if (take > 0) memcpy(l->m + l->n, c.found, sizeof *l->m * (size_t)take);
        l->n += take;
        if (!l->flat) l->found[r] = c.n_found, l->start[r + 1] = l->n;
        next = r + 1;
    }
    for (; st == XF_OK && !l->flat && next < n_rules; next++)
        l->found[next] = 0, l->start[next + 1] = l->n;
    if (st != XF_OK) {
        l->n = 0;
        for (int r = 0; !l->flat && r <= n_rules; r++) l->start[r] = 0;
        for (int r = 0; !l->flat && r < n_rules; r++) l->found[r] = 0;
    }
    xf_free(bits);
    ctx_free(&c);
    return st;
}
