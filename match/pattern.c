/*
 * pattern.c — compiles a rule into what the matcher and the instantiation
 * need: the source side as a match pattern with a search plan, the target
 * side as a template in topological order. Also the "matching form" of an
 * operator's parameters, shared by the pattern and the graph index so both
 * sides compute the same keys.
 *
 * The search plan starts at the source's last operator in topological order
 * (for the usual single-output rule that is the root, and every other
 * operator is then the unique producer of a matched input), and then always
 * picks the cheapest way to reach an unmatched operator: as the producer of
 * a matched operator's input (one candidate), as a consumer of a matched
 * value, as a consumer of an already bound rule input. A source side whose
 * operators are not connected that way (relu(x0), relu(x1): independent
 * operators anywhere in the graph) would need every pair of candidates, a
 * cost quadratic in the graph size, most of them then rejected by the cycle
 * check; such rules are skipped at load.
 *
 * The compiled form is also written out as words (match_rule_form_words), so
 * the rule set can drop rules that differ only in the tensor shapes they
 * were enumerated at: their patterns and templates are the same action.
 */
#include "match/match_internal.h"

#include <assert.h>
#include <stddef.h>
#include <string.h>

#include "match/relparams_internal.h"

int match_commutes(xf_op op, int n_inputs)
{
    return n_inputs == 2 && xf_op_is(op, XF_OPC_COMMUTATIVE);
}

/* A reshape matches by what it does to the axes, not by its sizes: the
 * kind in `axis`, the axes an (un)flatten merges or makes in `group`. */
static void reshape_form(const xf_shape *in0, xf_params *rel)
{
    if (!in0) return;
    xf_shape to = xf_shape_make(rel->n_shape, rel->shape);
    int k;
    xf_view_kind kind = xf_view_classify(in0, &to, &k);
    if (kind == XF_VIEW_GENERAL) return;
    rel->n_shape = 0;
    memset(rel->shape, 0, sizeof rel->shape);
    rel->axis = (int32_t)kind;
    rel->group = k;
}

/* A slice in one form whichever way it was written: absolute axes, starts
 * and ends within the axis, step 1 for 0; an end "to the end"
 * (XF_SLICE_TO_THE_END or past) stays that, whatever the axis's size. */
static void slice_form(const xf_shape *in0, xf_params *rel)
{
    if (!in0) return;
    for (int i = 0; i < rel->n_axes && i < XF_MAX_DIMS; i++) {
        int a = xf_norm_axis(rel->axes[i], in0->rank);
        if (a < 0) continue;
        int64_t d = in0->dims[a];
        rel->axes[i] = a;
        if (rel->starts[i] < 0) rel->starts[i] += d;
        if (rel->ends[i] < 0) rel->ends[i] += d;
        if (rel->starts[i] < 0) rel->starts[i] = 0;
        if (rel->starts[i] > d) rel->starts[i] = d;
        if (rel->ends[i] >= XF_SLICE_TO_THE_END) rel->ends[i] = XF_SLICE_TO_THE_END;
        else if (rel->ends[i] > d) rel->ends[i] = d;
        if (rel->steps[i] == 0) rel->steps[i] = 1;
    }
}

/* Whether a model slice in form `model` (slice_form) of an input of shape
 * in0 ends where a rule's slice in form `rule` does, as the rule's validity
 * domain reads it (ir/domain_infer.c): the rule's "to the end" only where
 * the model's reaches the end of its axis (slice[0:4] of 6 is no whole
 * axis), the rule's end e only where the model's is e. */
int match_slice_ends_agree(const xf_params *rule, const xf_params *model, const xf_shape *in0)
{
    for (int i = 0; i < model->n_axes && i < XF_MAX_DIMS; i++) {
        int a = xf_norm_axis(model->axes[i], in0->rank);
        if (a < 0) return 0;
        int64_t d = in0->dims[a];
        int64_t end = model->ends[i] == XF_SLICE_TO_THE_END ? d : model->ends[i];
        if (end != (rule->ends[i] == XF_SLICE_TO_THE_END ? d : rule->ends[i])) return 0;
    }
    return 1;
}

int match_form(xf_op op, const xf_params *p, int n_in, int n_out, const xf_shape *in0,
                  xf_params *rel, uint64_t *key)
{
    int rank = in0 ? in0->rank : 0;
    if (!match_relparams_to_relative(op, p, match_relparams_axis_rank(op, p, rank), rel)) return 0;
    memset(rel->split, 0, sizeof rel->split);
    if (op == XF_OP_RESHAPE) reshape_form(in0, rel);
    if (op == XF_OP_SLICE) slice_form(in0, rel);
    /* a layer norm's epsilon is the model's: the axioms and the exact check
     * hold for any positive one, the same on both sides (match.c, instantiate.c) */
    if (op == XF_OP_LAYERNORM) rel->epsilon = 0;
    if (op == XF_OP_CONV || op == XF_OP_MAXPOOL || op == XF_OP_AVGPOOL) {
        for (int i = 0; i < 2; i++) { /* 0 means 1 (ir/ops_conv.c) */
            if (rel->stride[i] == 0) rel->stride[i] = 1;
            if (rel->dilation[i] == 0) rel->dilation[i] = 1;
        }
        if (op == XF_OP_CONV && rel->group == 0) rel->group = 1;
    }
    if (op == XF_OP_CONV && rel->group > 1 && in0 && in0->rank == 4 && rel->group == in0->dims[1])
        rel->group = -1;
    if (!key) return 1;
    uint64_t h = xf_hash_u64(0x5EEDull, (uint64_t)op);
    h = xf_hash_u64(h, (uint64_t)n_in);
    h = xf_hash_u64(h, (uint64_t)n_out);
    h = xf_hash_u64(h, match_relparams_rank_polymorphic(op) ? 0xFFu : (uint64_t)rank);
    /* The struct has no padding and unused fields are zero: hash it word by
     * word up to the (cleared) split sizes; a slice's ends apart, which
     * match_slice_ends_agree compares (a rule's "to the end" binds a model's
     * end of any size). */
    xf_params keyed = *rel;
    if (op == XF_OP_SLICE) memset(keyed.ends, 0, sizeof keyed.ends);
    h = xf_mix_sparse(h, &keyed, offsetof(xf_params, split));
    *key = h ? h : 1;
    return 1;
}

int match_form_zero(const xf_params *rel)
{
    const unsigned char *b = (const unsigned char *)rel;
    for (size_t off = 0; off < offsetof(xf_params, split); off += 8) {
        uint64_t w;
        memcpy(&w, b + off, 8);
        if (w) return 0;
    }
    return 1;
}

static int input_pos(const xf_graph *g, int value)
{
    for (int i = 0; i < g->n_inputs; i++)
        if (g->inputs[i] == value) return i;
    return -1;
}

/* Input references of node `n` of rule side g; 0 with *why on something
 * the matcher does not model. pos_of maps producer nodes to positions (NULL:
 * node indices). */
static int node_refs(const xf_graph *g, const xf_node *n, const int *pos_of, xf_pat_ref *in,
                     const char **why)
{
    for (int s = 0; s < n->n_inputs; s++) {
        int v = n->inputs[s];
        if (v < 0) {
            *why = "a rule operator has an omitted optional input";
            return 0;
        }
        const xf_value *val = &g->values[v];
        if (val->kind == XF_VALUE_NODE) {
            in[s].node = pos_of ? pos_of[val->producer] : val->producer;
            in[s].idx = val->producer_output;
        } else if (val->kind == XF_VALUE_INPUT) {
            in[s].node = -1;
            in[s].idx = input_pos(g, v);
            if (in[s].idx < 0) {
                *why = "a rule operator reads a value that is not a rule input";
                return 0;
            }
        } else {
            *why = "a rule side holds a constant initializer";
            return 0;
        }
    }
    return 1;
}

static int check_sizes(const xf_graph *g, const char **why)
{
    if (g->n_nodes > XF_MATCH_MAX_NODES) {
        *why = "a side has more operators than XF_MATCH_MAX_NODES";
        return 0;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const xf_node *n = &g->nodes[i];
        if (n->op == XF_OP_OPAQUE) {
            *why = "a rule holds an opaque operator";
            return 0;
        }
        if (n->n_inputs > XF_MATCH_MAX_ARITY) {
            *why = "an operator has more inputs than XF_MATCH_MAX_ARITY";
            return 0;
        }
        if (n->n_outputs > XF_PAT_MAX_NODE_OUT) {
            *why = "an operator has more outputs than the matcher handles";
            return 0;
        }
    }
    return 1;
}

/* Chooses the next step: the cheapest anchor of any unmatched operator. */
static void plan_step(const xf_pattern *pat, const int *done, const int *bound, xf_pat_step *st)
{
    int best = 99;
    for (int k = 0; k < pat->n_nodes; k++) {
        if (done[k]) continue;
        xf_pat_step c = {k, XF_ANCHOR_OP, -1, -1, -1};
        int prio = 3;
        for (int j = 0; j < pat->n_nodes && prio > 0; j++) {
            if (!done[j]) continue;
            for (int s = 0; s < pat->nodes[j].n_in; s++)
                if (pat->nodes[j].in[s].node == k) {
                    c = (xf_pat_step){k, XF_ANCHOR_PRODUCER, j, s, pat->nodes[j].in[s].idx};
                    prio = 0;
                    break;
                }
        }
        for (int s = 0; s < pat->nodes[k].n_in && prio > 1; s++) {
            xf_pat_ref r = pat->nodes[k].in[s];
            if (r.node >= 0 && done[r.node]) {
                c = (xf_pat_step){k, XF_ANCHOR_USER, r.node, r.idx, -1};
                prio = 1;
            } else if (r.node < 0 && bound[r.idx] && prio > 2) {
                c = (xf_pat_step){k, XF_ANCHOR_INPUT_USER, -1, r.idx, -1};
                prio = 2;
            }
        }
        if (prio < best) {
            best = prio;
            *st = c;
        }
    }
}

/* 1, or 0 with *why set, or -1 out of memory: as match_rule_compile. */
static int compile_source(const xf_rule *r, xf_pattern *pat, const char **why)
{
    const xf_graph *g = &r->src;
    memset(pat, 0, sizeof *pat);
    pat->n_nodes = g->n_nodes;
    pat->n_inputs = g->n_inputs;
    pat->n_outputs = g->n_outputs;
    for (int i = 0; i < g->n_inputs; i++) {
        pat->in_dtype[i] = g->values[g->inputs[i]].dtype;
        pat->in_scalar[i] = g->values[g->inputs[i]].shape.rank == 0;
    }
    for (int k = 0; k < g->n_nodes; k++) {
        const xf_node *n = &g->nodes[k];
        xf_pat_node *pn = &pat->nodes[k];
        pn->op = n->op;
        pn->n_in = n->n_inputs;
        pn->n_out = n->n_outputs;
        if (!node_refs(g, n, NULL, pn->in, why)) return 0;
        for (int o = 0; o < XF_PAT_MAX_NODE_OUT; o++) pn->out_rule[o] = -1;
        xf_params rel;
        const xf_shape *in0 = n->n_inputs > 0 ? &g->values[n->inputs[0]].shape : NULL;
        if (!match_form(n->op, &n->params, n->n_inputs, n->n_outputs, in0, &rel, &pn->key)) {
            *why = "an operator's axis parameters are out of range";
            return 0;
        }
        pn->form_zero = match_form_zero(&rel);
        for (int s = 0; s < n->n_inputs; s++) {
            xf_pat_ref rf = pn->in[s];
            if (rf.node < 0) {
                pat->in_used[rf.idx] = 1;
                continue;
            }
            int seen = 0; /* count each consumer once per value */
            for (int t = 0; t < s; t++)
                seen |= pn->in[t].node == rf.node && pn->in[t].idx == rf.idx;
            if (!seen) pat->nodes[rf.node].n_users[rf.idx]++;
        }
    }
    for (int i = 0; i < g->n_outputs; i++) {
        const xf_value *v = &g->values[g->outputs[i]];
        if (v->kind != XF_VALUE_NODE) {
            *why = "a source output is a bare rule input";
            return 0;
        }
        xf_pat_node *pn = &pat->nodes[v->producer];
        if (pn->out_rule[v->producer_output] >= 0) {
            *why = "a source value is mapped to two outputs";
            return 0;
        }
        pn->out_rule[v->producer_output] = i;
        pn->out_bare[v->producer_output] = r->dst.values[r->dst.outputs[i]].kind == XF_VALUE_INPUT;
        pat->out[i] = (xf_pat_ref){v->producer, v->producer_output};
    }
    /* Search plan; only connected patterns (see the file comment). */
    int order[XF_MATCH_MAX_NODES], done[XF_MATCH_MAX_NODES] = {0},
        bound[XF_MATCH_MAX_INPUTS] = {0};
    xf_error topo_err;
    xf_status topo = xf_graph_topo_order(g, order, &topo_err);
    if (topo == XF_ERR_NOMEM) return -1;
    if (topo != XF_OK) {
        *why = "the source side is not a DAG";
        return 0;
    }
    memcpy(pat->src_order, order, sizeof order[0] * (size_t)g->n_nodes);
    for (int t = 0; t < g->n_nodes; t++) {
        xf_pat_step *st = &pat->steps[t];
        if (t == 0)
            *st = (xf_pat_step){order[g->n_nodes - 1], XF_ANCHOR_OP, -1, -1, -1};
        else
            plan_step(pat, done, bound, st);
        if (t > 0 && st->anchor == XF_ANCHOR_OP) {
            *why = "the source side is disconnected (independent operators sharing no input): "
                   "matching it costs the square of the graph size";
            return 0;
        }
        if (t == 0) {
            const xf_pat_node *root = &pat->nodes[st->node];
            int variant = 0;
            uint64_t p[2] = {0, 0};
            for (int s = 0; s < 2 && s < root->n_in; s++)
                if (root->in[s].node >= 0) {
                    variant |= 1 << s;
                    p[s] = xf_producer_tag(pat->nodes[root->in[s].node].op, root->in[s].idx);
                }
            pat->root_sig = xf_root_sig(root->key, variant, p[0], p[1]);
        }
        done[st->node] = 1;
        const xf_pat_node *pn = &pat->nodes[st->node];
        for (int s = 0; s < pn->n_in; s++)
            if (pn->in[s].node < 0) bound[pn->in[s].idx] = 1;
    }
    return 1;
}

/* 1, or 0 with *why set, or -1 out of memory: as match_rule_compile. */
static int compile_target(const xf_rule *r, const xf_pattern *pat, xf_target_tmpl *tgt,
                          const char **why)
{
    const xf_graph *g = &r->dst;
    memset(tgt, 0, sizeof *tgt);
    int order[XF_MATCH_MAX_NODES], pos_of[XF_MATCH_MAX_NODES];
    xf_error topo_err;
    xf_status topo = xf_graph_topo_order(g, order, &topo_err);
    if (topo == XF_ERR_NOMEM) return -1;
    if (topo != XF_OK) {
        *why = "the target side is not a DAG";
        return 0;
    }
    tgt->n_nodes = g->n_nodes;
    for (int q = 0; q < g->n_nodes; q++) pos_of[order[q]] = q;
    for (int q = 0; q < g->n_nodes; q++) {
        const xf_node *n = &g->nodes[order[q]];
        xf_tgt_node *tn = &tgt->nodes[q];
        tn->dst_node = order[q];
        tn->op = n->op;
        tn->n_in = n->n_inputs;
        tn->n_out = n->n_outputs;
        tn->gen_user = tn->gen_slot = tn->gen_rule = -1;
        for (int o = 0; o < XF_PAT_MAX_NODE_OUT; o++) tn->split_rule[o] = -1;
        if (!node_refs(g, n, pos_of, tn->in, why)) return 0;
        for (int s = 0; s < tn->n_in; s++) {
            xf_pat_ref rf = tn->in[s];
            if (rf.node < 0 && !pat->in_used[rf.idx]) {
                *why = "the target reads a rule input the source does not";
                return 0;
            }
            if (rf.node >= 0 && tgt->nodes[rf.node].gen_user < 0 &&
                match_relparams_is_generator(tgt->nodes[rf.node].op)) {
                tgt->nodes[rf.node].gen_user = q;
                tgt->nodes[rf.node].gen_slot = s;
            }
        }
        if (n->op == XF_OP_CONV) {
            const xf_shape *x = &g->values[n->inputs[0]].shape;
            tn->depthwise = n->params.group > 1 && x->rank == 4 && n->params.group == x->dims[1];
        }
    }
    for (int i = 0; i < g->n_outputs; i++) {
        const xf_value *v = &g->values[g->outputs[i]];
        if (v->kind == XF_VALUE_INPUT) {
            tgt->out[i] = (xf_pat_ref){-1, input_pos(g, g->outputs[i])};
            continue;
        }
        int q = pos_of[v->producer];
        tgt->out[i] = (xf_pat_ref){q, v->producer_output};
        if (tgt->nodes[q].op == XF_OP_SPLIT) tgt->nodes[q].split_rule[v->producer_output] = i;
        if (match_relparams_is_generator(tgt->nodes[q].op) && tgt->nodes[q].gen_rule < 0)
            tgt->nodes[q].gen_rule = i;
    }
    return 1;
}

void match_rule_compiled_free(xf_target_tmpl *tgt)
{
    if (!tgt || !tgt->dims) return;
    xf_rule_dims_free(tgt->dims);
    xf_free(tgt->dims);
    tgt->dims = NULL;
}

/* The rule's symbolic dims into tgt (1), none needed or usable (1, with
 * pat->views_exact for reshapes that do not follow), or -1 out of memory. */
static int compile_dims(const xf_rule *r, xf_pattern *pat, xf_target_tmpl *tgt)
{
    if (!xf_rule_has_views(r)) return 1;
    xf_rule_dims *d = xf_malloc(sizeof *d);
    if (!d || xf_rule_dims_infer(r, d, NULL) != XF_OK) {
        xf_free(d);
        return -1;
    }
    if (!d->ok) {
        xf_rule_dims_free(d);
        xf_free(d);
        pat->views_exact = 1;
        return 1;
    }
    tgt->dims = d;
    return 1;
}

/* The source splits that may match any cut of their axis (cut_free):
 * those ir's xf_rule_split_cuts_freely names, the one definition the
 * verifier and the validity domain use too (parts that leave the rule only,
 * replaced part for part by a target split whose parts leave it only, so
 * cut as the model's: split(relu(relu(x))) => split(relu(x))). Any other
 * split cuts as the rule's does (match.c, same_partition), as the cut
 * reaches what the verifier fixed: the source reading the parts ((y0, y1)
 * = split(x), z = reduce_sum(y0) - reduce_sum(y1), proved at halves, false
 * at 5/3), the target reading them (split(slice(x, [0, 4))) and x[2] =>
 * the target's split and p1[0]: x[3] at 3/1, review of 2026-11-30), or the
 * parts swapped (p1, p0 of split(concat(x[4:8], x[0:4]))). Where the
 * target maps the parts to values sized by the inputs, the output shapes
 * and the validity domain pin the cut anyway. */
static void mark_free_cuts(const xf_rule *r, xf_pattern *pat)
{
    for (int k = 0; k < pat->n_nodes; k++) pat->nodes[k].cut_free = xf_rule_split_cuts_freely(r, k);
}

int match_rule_compile(const xf_rule *r, xf_pattern *pat, xf_target_tmpl *tgt, const char **why)
{
    memset(tgt, 0, sizeof *tgt);
    if (r->src.n_nodes == 0) {
        *why = "the source side has no operator";
        return 0;
    }
    if (r->dst.n_inputs != r->src.n_inputs || r->dst.n_outputs != r->src.n_outputs) {
        *why = "the two sides disagree on the number of inputs or outputs";
        return 0;
    }
    if (r->src.n_inputs > XF_MATCH_MAX_INPUTS) {
        *why = "more rule inputs than XF_MATCH_MAX_INPUTS";
        return 0;
    }
    if (r->src.n_outputs > XF_MATCH_MAX_OUTPUTS) {
        *why = "more rule outputs than XF_MATCH_MAX_OUTPUTS";
        return 0;
    }
    if (!check_sizes(&r->src, why) || !check_sizes(&r->dst, why)) return 0;
    int c = compile_source(r, pat, why);
    if (c == 1) c = compile_target(r, pat, tgt, why);
    if (c == 1) c = compile_dims(r, pat, tgt);
    if (c == 1) mark_free_cuts(r, pat);
    return c;
}

typedef struct words {
    uint64_t *w;
    size_t n;
} words;

static void put(words *b, int64_t v)
{
    assert(b->n < XF_RULE_FORM_WORDS);
    b->w[b->n++] = (uint64_t)v;
}

/* The first n bytes of p (n a multiple of 8), word by word. */
static void put_bytes(words *b, const void *p, size_t n)
{
    assert(b->n + n / 8 <= XF_RULE_FORM_WORDS);
    memcpy(b->w + b->n, p, n);
    b->n += n / 8;
}

/* Rule inputs renumbered by first use in the source (operators in order,
 * inputs in slot order), unread ones after them in their own order: a rule
 * and the same rule with its inputs renamed (ewadd(x1, x0) => ewadd(x0, x1)
 * is ewadd(x0, x1) => ewadd(x1, x0)) get the same form. */
static void canonical_inputs(const xf_pattern *pat, int *canon)
{
    int next = 0;
    for (int i = 0; i < pat->n_inputs; i++) canon[i] = -1;
    for (int k = 0; k < pat->n_nodes; k++)
        for (int s = 0; s < pat->nodes[k].n_in; s++) {
            xf_pat_ref r = pat->nodes[k].in[s];
            if (r.node < 0 && canon[r.idx] < 0) canon[r.idx] = next++;
        }
    for (int i = 0; i < pat->n_inputs; i++)
        if (canon[i] < 0) canon[i] = next++;
}

static void put_ref(words *b, xf_pat_ref r, const int *canon)
{
    put(b, r.node);
    put(b, r.node < 0 ? canon[r.idx] : r.idx);
}

static int first_input_rank(const xf_graph *g, const xf_node *n)
{
    return n->n_inputs > 0 && n->inputs[0] >= 0 ? g->values[n->inputs[0]].shape.rank : 0;
}

static void source_words(const xf_rule *r, const xf_pattern *pat, const int *canon, words *b)
{
    const xf_graph *g = &r->src;
    int orig[XF_MATCH_MAX_INPUTS];
    for (int i = 0; i < pat->n_inputs; i++) orig[canon[i]] = i;
    put(b, pat->n_nodes);
    put(b, pat->n_inputs);
    put(b, pat->n_outputs);
    for (int c = 0; c < pat->n_inputs; c++) {
        put(b, pat->in_dtype[orig[c]]);
        put(b, pat->in_used[orig[c]]);
        put(b, pat->in_scalar[orig[c]]); /* a scalar's rule is not its bias twin's */
    }
    for (int k = 0; k < pat->n_nodes; k++) {
        const xf_pat_node *pn = &pat->nodes[k];
        const xf_node *n = &g->nodes[k];
        put(b, pn->op);
        put(b, pn->n_in);
        put(b, pn->n_out);
        for (int s = 0; s < pn->n_in; s++) put_ref(b, pn->in[s], canon);
        for (int o = 0; o < pn->n_out; o++) {
            put(b, pn->out_rule[o]);
            put(b, pn->n_users[o]);
            put(b, pn->out_bare[o]);
        }
        xf_params rel;
        memset(&rel, 0, sizeof rel);
        const xf_shape *in0 = n->n_inputs > 0 ? &g->values[n->inputs[0]].shape : NULL;
        match_form(n->op, &n->params, n->n_inputs, n->n_outputs, in0, &rel, NULL);
        if (pat->views_exact && n->op == XF_OP_RESHAPE) rel = n->params;
        /* a source generator binds only one shape at a match, from this one
         * (match.c): rules that differ in it are different actions */
        if (match_relparams_is_generator(n->op)) rel = n->params;
        put_bytes(b, &rel, offsetof(xf_params, split));
        put(b, match_relparams_rank_polymorphic(n->op) ? -1 : first_input_rank(g, n));
    }
    for (int t = 0; t < pat->n_nodes; t++) {
        const xf_pat_step *st = &pat->steps[t];
        put(b, st->node);
        put(b, st->anchor);
        put(b, st->a_node);
        put(b, st->anchor == XF_ANCHOR_INPUT_USER ? canon[st->a_idx] : st->a_idx);
        put(b, st->a_out);
    }
    for (int i = 0; i < pat->n_outputs; i++) put_ref(b, pat->out[i], canon);
}

static void target_words(const xf_rule *r, const xf_target_tmpl *tgt, int n_outputs,
                         const int *canon, words *b)
{
    const xf_graph *g = &r->dst;
    put(b, tgt->n_nodes);
    for (int q = 0; q < tgt->n_nodes; q++) {
        const xf_tgt_node *tn = &tgt->nodes[q];
        const xf_node *n = &g->nodes[tn->dst_node];
        put(b, tn->op);
        put(b, tn->n_in);
        put(b, tn->n_out);
        for (int s = 0; s < tn->n_in; s++) put_ref(b, tn->in[s], canon);
        put(b, tn->depthwise);
        for (int o = 0; o < tn->n_out; o++) put(b, tn->split_rule[o]);
        put(b, tn->gen_user);
        put(b, tn->gen_slot);
        put(b, tn->gen_rule);
        /* what match_instantiate_full starts from (instantiate.c) */
        xf_params p;
        memset(&p, 0, sizeof p);
        int rank = first_input_rank(g, n);
        if (match_relparams_is_generator(tn->op)) {
            p = n->params;
        } else {
            match_relparams_to_relative(tn->op, &n->params,
                                     match_relparams_axis_rank(tn->op, &n->params, rank), &p);
            if (tn->op == XF_OP_SPLIT) memset(p.split, 0, sizeof p.split); /* from shapes */
            if (tn->op == XF_OP_RESHAPE && tgt->dims) { /* from the symbolic dims */
                p.n_shape = 0;
                memset(p.shape, 0, sizeof p.shape);
            }
        }
        put_bytes(b, &p, sizeof p - sizeof p % 8);
        put(b, match_relparams_rank_polymorphic(tn->op) ? -1 : rank);
    }
    for (int i = 0; i < n_outputs; i++) put_ref(b, tgt->out[i], canon);
}

xf_status match_rule_canonical_domain(const xf_rule *r, const xf_pattern *pat, xf_domain *out,
                                   xf_error *err)
{
    int canon[XF_MATCH_MAX_INPUTS];
    canonical_inputs(pat, canon);
    xf_status st = xf_domain_copy(&r->domain, out, err);
    for (int i = 0; i < out->n; i++)
        for (int k = 0; k < out->a[i].n; k++) {
            int in = out->a[i].dim[k].input;
            if (in >= 0 && in < pat->n_inputs) out->a[i].dim[k].input = (int16_t)canon[in];
        }
    return st == XF_OK ? xf_domain_normalize(out, err) : st;
}

size_t match_rule_form_words(const xf_rule *r, const xf_pattern *pat, const xf_target_tmpl *tgt,
                          uint64_t *w)
{
    words b = {w, 0};
    int canon[XF_MATCH_MAX_INPUTS];
    canonical_inputs(pat, canon);
    source_words(r, pat, canon, &b);
    target_words(r, tgt, pat->n_outputs, canon, &b);
    return b.n;
}
