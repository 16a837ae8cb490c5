/*
 * apply.c — xf_match_apply: one rewrite step. The new graph is a shared
 * clone of the old one (constants borrowed, so a step costs no weight copy)
 * on which the rule's instantiated target is added, every use of a matched
 * output is redirected to the target's output, matched nodes nobody uses
 * any more are deleted (transitively, but only among the matched nodes: dead
 * code elsewhere in the model is not ours to remove), and the arrays are
 * compacted by moving the last nodes into the holes (node order is not
 * kept; everything downstream orders nodes topologically). Only the new
 * nodes run shape inference and the cycle check searches only the region
 * between the redirected uses and the target's inputs (by the index's
 * topological positions), so a step is linear in the graph's size with
 * small constants, dominated by xf_graph_clone_shared itself.
 *
 * Target nodes are added in the order of xf_graph_topo_order on the rule's
 * destination graph, the order xf_match_instantiate fills xf_match_target
 * in. They are named "rule<id>_<n>" with n above every such number already
 * in the graph, so names stay unique along a whole rewrite sequence. A
 * graph output keeps its name: the target value that now stands for it
 * takes the name of the value it replaced (keep_output_names).
 *
 * xf_match_apply_from also says which node of g every node of the result
 * copies, so the environment can keep what it knows about them (matching
 * keys, costs) instead of recomputing it. match_apply_in_place makes the
 * same edits on g itself (the closure, which owns its graph, saves the
 * copy: a 400-node graph's copy was a third of a long closure's time).
 */
#include "ir/ir.h"
#include "match/match_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* n when `s` is "rule<int>_<n>" or "rule<int>_<n>:<k>", else -1. */
static long long rule_name_number(const char *s)
{
    if (!s || s[0] != 'r' || strncmp(s, "rule", 4) != 0) return -1;
    const char *p = s + 4;
    if (*p == '-') p++;
    if (*p < '0' || *p > '9') return -1;
    while (*p >= '0' && *p <= '9') p++;
    if (*p++ != '_' || *p < '0' || *p > '9') return -1;
    long long n = 0;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (n > (1LL << 50)) return -1;
        n = n * 10 + (*p - '0');
    }
    if (*p == ':') {
        p++;
        while (*p >= '0' && *p <= '9') p++;
    }
    return *p == '\0' ? n : -1;
}

/* First free number for "rule<id>_<n>" names in g. */
static long long next_name_number(const xf_graph *g)
{
    long long mx = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        long long n = rule_name_number(g->nodes[i].name);
        if (n > mx) mx = n;
    }
    for (int v = 0; v < g->n_values; v++) {
        long long n = rule_name_number(g->values[v].name);
        if (n > mx) mx = n;
    }
    return mx + 1;
}

/* Structural checks of m against g and the rule before anything is built. */
static xf_status check_match(const xf_ruleset *rs, const xf_graph *g, const xf_match *m,
                             const xf_rule **rule, xf_error *err)
{
    if (m->rule < 0 || m->rule >= xf_ruleset_count(rs))
        return XF_FAIL(err, XF_ERR_INVALID, "match names rule %d, the rule set has %d rules",
                       m->rule, xf_ruleset_count(rs));
    const xf_rule *r = xf_ruleset_rule(rs, m->rule);
    if (m->n_nodes != r->src.n_nodes || m->n_inputs != r->src.n_inputs ||
        m->n_inputs != r->dst.n_inputs || m->n_outputs != r->dst.n_outputs ||
        m->n_nodes > XF_MATCH_MAX_NODES || m->n_inputs > XF_MATCH_MAX_INPUTS ||
        m->n_outputs > XF_MATCH_MAX_OUTPUTS || r->dst.n_nodes > XF_MATCH_MAX_NODES)
        return XF_FAIL(err, XF_ERR_INVALID,
                       "match of rule %d (%s) has %d nodes, %d inputs, %d outputs, which do not "
                       "fit the rule",
                       m->rule, xf_ruleset_text(rs, m->rule), m->n_nodes, m->n_inputs,
                       m->n_outputs);
    for (int i = 0; i < m->n_nodes; i++) {
        if (m->nodes[i] < 0 || m->nodes[i] >= g->n_nodes)
            return XF_FAIL(err, XF_ERR_INVALID, "match of rule %d: node %d does not exist",
                           m->rule, m->nodes[i]);
        for (int j = 0; j < i; j++)
            if (m->nodes[j] == m->nodes[i])
                return XF_FAIL(err, XF_ERR_INVALID,
                               "match of rule %d binds node %d to two source operators", m->rule,
                               m->nodes[i]);
    }
    for (int i = 0; i < m->n_inputs; i++) /* -1: a rule input neither side reads */
        if (m->inputs[i] < -1 || m->inputs[i] >= g->n_values)
            return XF_FAIL(err, XF_ERR_INVALID, "match of rule %d: input value %d does not exist",
                           m->rule, m->inputs[i]);
    for (int i = 0; i < m->n_outputs; i++)
        if (m->outputs[i] < 0 || m->outputs[i] >= g->n_values)
            return XF_FAIL(err, XF_ERR_INVALID,
                           "match of rule %d: output value %d does not exist", m->rule,
                           m->outputs[i]);
    *rule = r;
    return XF_OK;
}

/* Adds the target's nodes to out; tgt[i] receives the value replacing
 * matched output i (a new node's output or a bound input). */
static xf_status add_target(const xf_ruleset *rs, const xf_rule *r, const xf_match *m,
                            const xf_match_target *t, xf_graph *out, int *tgt, xf_error *err)
{
    const xf_graph *d = &r->dst;
    int order[XF_MATCH_MAX_NODES];
    xf_status st = xf_graph_topo_order(d, order, err);
    if (st != XF_OK) return st;
    int *vmap = xf_malloc(sizeof(int) * ((size_t)d->n_values + 1));
    if (!vmap) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory applying a rule");
    for (int v = 0; v < d->n_values; v++) vmap[v] = -1;
    for (int j = 0; j < d->n_inputs; j++) vmap[d->inputs[j]] = m->inputs[j];
    long long number = next_name_number(out);
    long long id = (long long)xf_ruleset_rule_id(rs, m->rule);
    for (int k = 0; k < d->n_nodes && st == XF_OK; k++) {
        const xf_node *dn = &d->nodes[order[k]];
        if (dn->n_inputs > XF_MATCH_MAX_ARITY || t->n_in[k] != dn->n_inputs || t->op[k] != dn->op) {
            st = XF_FAIL(err, XF_ERR_INTERNAL,
                         "rule %lld: target operator %d (%s) does not agree with its "
                         "instantiation",
                         id, k, xf_op_get(dn->op)->name);
            break;
        }
        int ins[XF_MATCH_MAX_ARITY];
        for (int a = 0; a < dn->n_inputs; a++) {
            int dv = dn->inputs[a];
            ins[a] = dv >= 0 ? vmap[dv] : -1;
            if (dv >= 0 && ins[a] < 0)
                st = XF_FAIL(err, XF_ERR_UNSUPPORTED,
                             "rule %lld: target operator %d reads a constant or an unknown value",
                             id, k);
        }
        if (st != XF_OK) break;
        char name[64];
        snprintf(name, sizeof name, "rule%lld_%lld", id, number++);
        int idx = xf_graph_add_node(out, t->op[k], &t->params[k], ins, dn->n_inputs,
                                    dn->n_outputs, name, err);
        if (idx < 0) {
            xf_error_prefix(err, "rule %lld (%s), target operator %d", id,
                            xf_ruleset_text(rs, m->rule), k);
            st = err ? err->code : XF_ERR_SHAPE;
            break;
        }
        for (int o = 0; o < dn->n_outputs; o++) vmap[dn->outputs[o]] = out->nodes[idx].outputs[o];
    }
    for (int i = 0; i < m->n_outputs && st == XF_OK; i++) {
        tgt[i] = vmap[d->outputs[i]];
        const xf_value *a = &out->values[m->outputs[i]];
        const xf_value *b = tgt[i] >= 0 ? &out->values[tgt[i]] : NULL;
        if (!b || a->dtype != b->dtype || !xf_shape_equal(&a->shape, &b->shape)) {
            char sa[96], sb[96];
            st = XF_FAIL(err, XF_ERR_SHAPE,
                         "rule %lld (%s): target output %d is %s, the matched value is %s", id,
                         xf_ruleset_text(rs, m->rule), i,
                         b ? xf_shape_str(&b->shape, sb, sizeof sb) : "missing",
                         xf_shape_str(&a->shape, sa, sizeof sa));
        }
    }
    xf_free(vmap);
    return st;
}

/* Redirects uses of matched outputs in the old nodes and the graph outputs
 * (new nodes read the old values: redirecting them could close a cycle).
 * redirected[i] marks the old nodes that now read a target output; returns
 * the smallest topological position (in g) among them, INT_MAX for none. */
static int redirect(xf_graph *out, int n_old_nodes, const xf_match *m, const int *tgt,
                    const xf_graph_index *ix, uint8_t *redirected)
{
    int min_pos = INT_MAX;
    for (int i = 0; i < n_old_nodes; i++) {
        xf_node *n = &out->nodes[i];
        for (int k = 0; k < n->n_inputs; k++)
            for (int o = 0; o < m->n_outputs; o++)
                if (n->inputs[k] == m->outputs[o]) {
                    n->inputs[k] = tgt[o];
                    redirected[i] = 1;
                    if (ix->topo_pos[i] < min_pos) min_pos = ix->topo_pos[i];
                    break;
                }
    }
    for (int i = 0; i < out->n_outputs; i++)
        for (int o = 0; o < m->n_outputs; o++)
            if (out->outputs[i] == m->outputs[o]) {
                out->outputs[i] = tgt[o];
                break;
            }
    return min_pos;
}

/* 1 when the rewrite closed a cycle. g was acyclic, so any cycle runs
 * through a target node: from a target output into a redirected node, then
 * along old edges to a value a target node reads. The search goes backwards
 * from those values over old edges and stops below min_pos: a node before
 * every redirected node in g's topological order cannot depend on one
 * through old edges alone. Usually it visits a handful of nodes. */
/* Pushes the producers of node n's inputs that are old nodes, not seen yet
 * and not below topological position min_pos. */
static int push_producers(const xf_graph *out, const xf_node *n, int n_old,
                          const xf_graph_index *ix, int min_pos, int *stack, int top,
                          uint8_t *seen)
{
    for (int k = 0; k < n->n_inputs; k++) {
        int v = n->inputs[k];
        if (v < 0 || out->values[v].kind != XF_VALUE_NODE) continue;
        int p = out->values[v].producer;
        if (p >= n_old || seen[p] || ix->topo_pos[p] < min_pos) continue;
        seen[p] = 1;
        stack[top++] = p;
    }
    return top;
}

static int closes_cycle(const xf_graph *out, int n_old, const xf_graph_index *ix,
                        const uint8_t *redirected, int min_pos, int *stack, uint8_t *seen)
{
    if (min_pos == INT_MAX) return 0;
    int top = 0;
    for (int t = n_old; t < out->n_nodes; t++)
        top = push_producers(out, &out->nodes[t], n_old, ix, min_pos, stack, top, seen);
    while (top > 0) {
        int p = stack[--top];
        if (redirected[p]) return 1;
        top = push_producers(out, &out->nodes[p], n_old, ix, min_pos, stack, top, seen);
    }
    return 0;
}

/* Deletes the matched nodes whose outputs nobody uses, transitively among
 * the matched nodes, and compacts out; node_from (may be NULL) gets the
 * origin of every remaining node (see xf_match_apply_from). */
static xf_status remove_dead_matched(xf_graph *out, const xf_match *m, int n_old, int *node_from,
                                     xf_error *err)
{
    int n_total = out->n_nodes;
    int *uses = xf_malloc(sizeof(int) * ((size_t)out->n_values + 1));
    uint8_t *node_dead = xf_calloc((size_t)out->n_nodes + 1, 1);
    uint8_t *value_dead = xf_calloc((size_t)out->n_values + 1, 1);
    int *nmap = node_from ? xf_malloc(sizeof(int) * ((size_t)n_total + 1)) : NULL;
    xf_status st = XF_OK;
    if (!uses || !node_dead || !value_dead || (node_from && !nmap)) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory applying a rule");
        goto out;
    }
    xf_edit_use_counts(out, uses);
    for (int changed = 1; changed;) {
        changed = 0;
        for (int i = 0; i < m->n_nodes; i++) {
            xf_node *n = &out->nodes[m->nodes[i]];
            if (node_dead[m->nodes[i]]) continue;
            int used = 0;
            for (int k = 0; k < n->n_outputs; k++) used |= uses[n->outputs[k]] > 0;
            if (used) continue;
            node_dead[m->nodes[i]] = 1;
            for (int k = 0; k < n->n_outputs; k++) value_dead[n->outputs[k]] = 1;
            for (int k = 0; k < n->n_inputs; k++)
                if (n->inputs[k] >= 0) uses[n->inputs[k]]--;
            changed = 1;
        }
    }
    st = xf_edit_compact_fill(out, node_dead, value_dead, nmap, err);
    for (int i = 0; i < n_total && st == XF_OK && node_from; i++)
        if (nmap[i] >= 0) node_from[nmap[i]] = i < n_old ? i : -1;
out:
    xf_free(uses);
    xf_free(node_dead);
    xf_free(value_dead);
    xf_free(nmap);
    return st;
}

/* Graph outputs keep their names (a caller fetches outputs by name): a
 * graph output that now reads target value t gives t the name of the value
 * it replaced, whose value (about to die) takes t's "rule<id>_<n>". When t
 * cannot take it (it already names another graph output, or it is not a
 * target node's output), an identity of t is added to carry the name.
 * was[i]: graph output i before the redirect. */
static xf_status keep_output_names(const xf_ruleset *rs, const xf_match *m, int n_old,
                                   const int *was, xf_graph *out, xf_error *err)
{
    for (int i = 0; i < out->n_outputs; i++) {
        int w = was[i], t = out->outputs[i];
        if (w == t) continue;
        const xf_value *tv = &out->values[t];
        int taken = tv->kind != XF_VALUE_NODE || tv->producer < n_old;
        for (int j = 0; j < out->n_outputs && !taken; j++)
            taken = j != i && out->outputs[j] == t && (j < i || was[j] == t);
        if (taken) {
            char name[64];
            snprintf(name, sizeof name, "rule%lld_%lld", (long long)xf_ruleset_rule_id(rs, m->rule),
                     next_name_number(out));
            int id = xf_graph_op(out, XF_OP_IDENTITY, NULL, &t, 1, err);
            if (id < 0) return err ? err->code : XF_ERR_GRAPH;
            xf_node *nd = &out->nodes[out->values[id].producer];
            char *nn = xf_strdup(name);
            if (!nn) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory applying a rule");
            xf_graph_release(out, nd->name);
            nd->name = nn;
            out->outputs[i] = t = id;
        }
        char *keep = out->values[w].name;
        out->values[w].name = out->values[t].name;
        out->values[t].name = keep;
    }
    return XF_OK;
}

/* Redirects, checks for a cycle and removes what died (out holds g's
 * clone plus the target nodes from n_old on). */
static xf_status rewire(const xf_ruleset *rs, const xf_graph_index *ix, const xf_match *m,
                        const int *tgt, int n_old, xf_graph *out, int *node_from, xf_error *err)
{
    uint8_t *flags = xf_calloc(2 * (size_t)n_old + 1, 1); /* redirected, seen */
    int *stack = xf_malloc(sizeof(int) * ((size_t)n_old + 1));
    int *was = xf_malloc(sizeof(int) * ((size_t)out->n_outputs + 1));
    xf_status st = XF_OK;
    if (!flags || !stack || !was) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "out of memory applying a rule");
    } else {
        memcpy(was, out->outputs, sizeof(int) * (size_t)out->n_outputs);
        int min_pos = redirect(out, n_old, m, tgt, ix, flags);
        if (closes_cycle(out, n_old, ix, flags, min_pos, stack, flags + n_old))
            st = XF_FAIL(err, XF_ERR_GRAPH, "rule %d (%s) would close a cycle at this location",
                         m->rule, xf_ruleset_text(rs, m->rule));
    }
    if (st == XF_OK) st = keep_output_names(rs, m, n_old, was, out, err);
    xf_free(flags);
    xf_free(stack);
    xf_free(was);
    if (st == XF_OK) st = remove_dead_matched(out, m, n_old, node_from, err);
    return st;
}

xf_status xf_match_apply(const xf_ruleset *rs, const xf_graph *g, const xf_graph_index *ix,
                         const xf_match *m, xf_graph *out, xf_error *err)
{
    return xf_match_apply_from(rs, g, ix, m, out, NULL, err);
}

/* The checks and the instantiation of m in g, before anything is built. */
static xf_status prepare(const xf_ruleset *rs, const xf_graph *g, const xf_graph_index *ix,
                         const xf_match *m, const xf_rule **r, xf_match_target *t, xf_error *err)
{
    if (!ix || ix->n_nodes != g->n_nodes || ix->n_values != g->n_values)
        return XF_FAIL(err, XF_ERR_INVALID, "apply: the graph index was built for another graph");
    xf_status st = check_match(rs, g, m, r, err);
    if (st != XF_OK) return st;
    st = xf_match_instantiate(rs, g, ix, m, t, err);
    if (st != XF_OK) return st;
    if (t->n_nodes != (*r)->dst.n_nodes)
        return XF_FAIL(err, XF_ERR_INTERNAL,
                       "rule %d: instantiation has %d operators, the target side %d", m->rule,
                       t->n_nodes, (*r)->dst.n_nodes);
    return XF_OK;
}

/* Adds the target to out (g's graph, prepared) and rewires it. */
static xf_status edit(const xf_ruleset *rs, const xf_rule *r, const xf_graph_index *ix,
                      const xf_match *m, const xf_match_target *t, xf_graph *out, int *node_from,
                      xf_error *err)
{
    int n_old = out->n_nodes;
    int tgt[XF_MATCH_MAX_OUTPUTS];
    xf_status st = add_target(rs, r, m, t, out, tgt, err);
    if (st == XF_OK) st = rewire(rs, ix, m, tgt, n_old, out, node_from, err);
    return st;
}

xf_status xf_match_apply_from(const xf_ruleset *rs, const xf_graph *g, const xf_graph_index *ix,
                              const xf_match *m, xf_graph *out, int *node_from, xf_error *err)
{
    xf_graph_init(out);
    const xf_rule *r = NULL;
    xf_match_target t;
    xf_status st = prepare(rs, g, ix, m, &r, &t, err);
    if (st == XF_OK) st = xf_graph_clone_shared(g, out, err);
    if (st != XF_OK) return st;
    st = edit(rs, r, ix, m, &t, out, node_from, err);
    if (st != XF_OK) xf_graph_free(out);
    return st;
}

xf_status match_apply_in_place(const xf_ruleset *rs, xf_graph *g, const xf_graph_index *ix,
                               const xf_match *m, int *node_from, xf_error *err)
{
    const xf_rule *r = NULL;
    xf_match_target t;
    xf_status st = prepare(rs, g, ix, m, &r, &t, err);
    return st == XF_OK ? edit(rs, r, ix, m, &t, g, node_from, err) : st;
}
