/*
 * import_order.c — resolving an ONNX graph's names before anything is
 * built. ONNX connects nodes only by value names and does not promise that
 * nodes are listed in execution order, so the importer registers every
 * producer (graph inputs, initializers, node outputs), rejects names that
 * are produced twice or consumed but never produced, and computes a
 * topological order of the nodes with xf_topo_kahn (file order where the file is already
 * ordered), naming a node on the cycle when there is none. Names used inside
 * subgraph attributes (If/Loop bodies) count as dependencies too. It also
 * counts the consumers of every value (the op mapping fuses an activation
 * into a convolution only when it is the convolution's sole consumer).
 */
#include "import_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct edge {
    int from, to;
} edge;

typedef struct edges {
    edge *e;
    size_t n, cap;
} edges;

static int push_edge(edges *es, int from, int to)
{
    if (es->n == es->cap) {
        size_t nc = es->cap ? es->cap * 2 : 256;
        edge *p = xf_realloc(es->e, nc * sizeof *p);
        if (!p) return 0;
        es->e = p;
        es->cap = nc;
    }
    es->e[es->n].from = from;
    es->e[es->n].to = to;
    es->n++;
    return 1;
}

/* Compressed adjacency: for node i, list[start[i] .. start[i+1]). */
typedef struct csr {
    int *start, *list;
} csr;

static int build_csr(const edges *es, int n_nodes, int by_from, csr *c)
{
    c->start = xf_calloc((size_t)n_nodes + 2, sizeof(int));
    c->list = xf_malloc(sizeof(int) * (es->n + 1));
    int *fill = xf_calloc((size_t)n_nodes + 1, sizeof(int));
    if (!c->start || !c->list || !fill) {
        xf_free(fill);
        return 0;
    }
    for (size_t k = 0; k < es->n; k++) c->start[(by_from ? es->e[k].from : es->e[k].to) + 1]++;
    for (int i = 0; i < n_nodes; i++) c->start[i + 1] += c->start[i];
    for (size_t k = 0; k < es->n; k++) {
        int key = by_from ? es->e[k].from : es->e[k].to;
        c->list[c->start[key] + fill[key]++] = by_from ? es->e[k].to : es->e[k].from;
    }
    xf_free(fill);
    return 1;
}

static void csr_free(csr *c)
{
    xf_free(c->start);
    xf_free(c->list);
}

static xf_status nomem(imp_state *st, xf_error *err)
{
    return XF_FAIL(err, XF_ERR_NOMEM, "%s: out of memory resolving value names", st->file);
}

static void set_node(imp_state *st, int i)
{
    st->node_index = i;
    st->node = st->graph->node[i];
}

/* Describes who produces symbol s, for the duplicate-producer message. */
static void describe_producer(const imp_state *st, int s, char *buf, size_t n)
{
    const imp_sym *sy = &st->syms[s];
    if (sy->producer >= 0) {
        const Onnx__NodeProto *p = st->graph->node[sy->producer];
        snprintf(buf, n, "node %d '%s' (%s)", sy->producer, ox_str(p->name),
                 ox_str(p->op_type));
    } else
        snprintf(buf, n, "%s", sy->init ? "an initializer" : "a graph input");
}

static xf_status register_producers(imp_state *st, xf_error *err)
{
    const Onnx__GraphProto *gp = st->graph;
    for (size_t i = 0; i < gp->n_initializer; i++) {
        const char *nm = ox_str(gp->initializer[i]->name);
        if (!nm[0]) return XF_FAIL(err, XF_ERR_PARSE, "%s: initializer %zu has no name", st->file, i);
        if (ox_sym_find(st, nm) >= 0)
            return XF_FAIL(err, XF_ERR_GRAPH, "%s: initializer '%s' is given twice", st->file, nm);
        int s = ox_sym_new(st, nm, err);
        if (s < 0) return err->code;
        st->syms[s].init = gp->initializer[i];
        if (ox_map_put(&st->names, nm, s, err) != XF_OK) return err->code;
    }
    for (size_t i = 0; i < gp->n_input; i++) {
        const char *nm = ox_str(gp->input[i]->name);
        if (!nm[0]) return XF_FAIL(err, XF_ERR_PARSE, "%s: graph input %zu has no name", st->file, i);
        int s = ox_sym_find(st, nm);
        if (s >= 0 && st->syms[s].is_input)
            return XF_FAIL(err, XF_ERR_GRAPH, "%s: graph input '%s' is listed twice", st->file, nm);
        if (s >= 0) continue; /* an input with an initializer is a constant */
        s = ox_sym_new(st, nm, err);
        if (s < 0) return err->code;
        st->syms[s].is_input = 1;
        if (ox_map_put(&st->names, nm, s, err) != XF_OK) return err->code;
    }
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *n = gp->node[i];
        for (size_t k = 0; k < n->n_output; k++) {
            const char *nm = ox_str(n->output[k]);
            if (!nm[0]) continue;
            int s = ox_sym_find(st, nm);
            if (s >= 0) {
                char who[512];
                describe_producer(st, s, who, sizeof who);
                set_node(st, (int)i);
                return ox_node_fail(st, err, XF_ERR_GRAPH,
                                     "output '%s' is produced twice (also by %s)", nm, who);
            }
            s = ox_sym_new(st, nm, err);
            if (s < 0) return err->code;
            st->syms[s].producer = (int)i;
            if (ox_map_put(&st->names, nm, s, err) != XF_OK) return err->code;
        }
    }
    return XF_OK;
}

/* Adds an edge producer(name) -> node for each outer name a subgraph uses. */
static int subgraph_deps(imp_state *st, const Onnx__GraphProto *sg, int node, edges *es, int depth)
{
    if (depth > 64) return 1; /* deeper nesting than any real model; ignore */
    for (size_t i = 0; i < sg->n_node; i++) {
        const Onnx__NodeProto *n = sg->node[i];
        for (size_t k = 0; k < n->n_input; k++) {
            int s = ox_sym_find(st, ox_str(n->input[k]));
            if (s >= 0) st->syms[s].uses++, st->syms[s].sub_uses++;
            if (s >= 0 && st->syms[s].producer >= 0 && st->syms[s].producer != node &&
                !push_edge(es, st->syms[s].producer, node))
                return 0;
        }
        for (size_t a = 0; a < n->n_attribute; a++) {
            const Onnx__AttributeProto *at = n->attribute[a];
            if (at->g && !subgraph_deps(st, at->g, node, es, depth + 1)) return 0;
            for (size_t j = 0; j < at->n_graphs; j++)
                if (!subgraph_deps(st, at->graphs[j], node, es, depth + 1)) return 0;
        }
    }
    return 1;
}

static xf_status collect_edges(imp_state *st, edges *es, xf_error *err)
{
    const Onnx__GraphProto *gp = st->graph;
    for (size_t i = 0; i < gp->n_node; i++) {
        const Onnx__NodeProto *n = gp->node[i];
        for (size_t k = 0; k < n->n_input; k++) {
            const char *nm = ox_str(n->input[k]);
            if (!nm[0]) continue;
            int s = ox_sym_find(st, nm);
            if (s < 0)
                return XF_FAIL(err, XF_ERR_GRAPH,
                               "%s: dangling input '%s' of node %zu '%s' (%s): no node, graph "
                               "input or initializer produces it",
                               st->file, nm, i, ox_str(n->name), ox_str(n->op_type));
            st->syms[s].uses++;
            if (st->syms[s].producer >= 0 && !push_edge(es, st->syms[s].producer, (int)i))
                return nomem(st, err);
        }
        for (size_t a = 0; a < n->n_attribute; a++) {
            const Onnx__AttributeProto *at = n->attribute[a];
            if (at->g && !subgraph_deps(st, at->g, (int)i, es, 0)) return nomem(st, err);
            for (size_t j = 0; j < at->n_graphs; j++)
                if (!subgraph_deps(st, at->graphs[j], (int)i, es, 0)) return nomem(st, err);
        }
    }
    for (size_t i = 0; i < gp->n_output; i++) {
        int s = ox_sym_find(st, ox_str(gp->output[i]->name));
        if (s >= 0) st->syms[s].uses++;
    }
    return XF_OK;
}

/* A node on a cycle: walk back through unfinished predecessors; after
 * n_nodes steps the walk is inside a cycle. */
static int node_on_cycle(int n_nodes, const csr *pred, const int *indeg)
{
    int cur = 0;
    while (cur < n_nodes && indeg[cur] == 0) cur++;
    for (int step = 0; step < n_nodes; step++) {
        int next = -1;
        for (int e = pred->start[cur]; e < pred->start[cur + 1] && next < 0; e++)
            if (indeg[pred->list[e]] > 0) next = pred->list[e];
        if (next < 0) break;
        cur = next;
    }
    return cur;
}

xf_status ox_resolve(imp_state *st, int **order_out, xf_error *err)
{
    *order_out = NULL;
    int n_nodes = (int)st->graph->n_node;
    xf_status rc = register_producers(st, err);
    if (rc != XF_OK) return rc;
    edges es = {NULL, 0, 0};
    csr succ = {NULL, NULL}, pred = {NULL, NULL};
    int *indeg = xf_calloc((size_t)n_nodes + 1, sizeof(int));
    int *heap = xf_malloc(sizeof(int) * ((size_t)n_nodes + 1));
    int *order = xf_malloc(sizeof(int) * ((size_t)n_nodes + 1));
    if (!indeg || !heap || !order) {
        rc = nomem(st, err);
        goto out;
    }
    if ((rc = collect_edges(st, &es, err)) != XF_OK) goto out;
    if (!build_csr(&es, n_nodes, 1, &succ) || !build_csr(&es, n_nodes, 0, &pred)) {
        rc = nomem(st, err);
        goto out;
    }
    for (size_t k = 0; k < es.n; k++) indeg[es.e[k].to]++;
    if (xf_topo_kahn(n_nodes, succ.start, succ.list, indeg, order, heap) < n_nodes) {
        set_node(st, node_on_cycle(n_nodes, &pred, indeg));
        rc = ox_node_fail(st, err, XF_ERR_GRAPH,
                           "the graph has a cycle through this node (its inputs depend on its "
                           "own outputs)");
        goto out;
    }
    *order_out = order;
    order = NULL;
out:
    xf_free(es.e);
    csr_free(&succ);
    csr_free(&pred);
    xf_free(indeg);
    xf_free(heap);
    xf_free(order);
    return rc;
}
