/*
 * topo.c — the one topological sort: Kahn's algorithm over successor lists,
 * taking the smallest ready index first (a binary min-heap), so the order
 * is deterministic and a DAG already listed in order comes back unchanged.
 * xf_graph_topo_order runs it on a graph's nodes; the ONNX importer runs
 * it on a file's nodes before any graph exists.
 */
#include "ir.h"

static void heap_push(int *h, int *n, int v)
{
    int i = (*n)++;
    h[i] = v;
    while (i > 0 && h[(i - 1) / 2] > h[i]) {
        int p = (i - 1) / 2, t = h[p];
        h[p] = h[i];
        h[i] = t;
        i = p;
    }
}

static int heap_pop(int *h, int *n)
{
    int top = h[0];
    h[0] = h[--(*n)];
    for (int i = 0;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < *n && h[l] < h[m]) m = l;
        if (r < *n && h[r] < h[m]) m = r;
        if (m == i) break;
        int t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
    return top;
}

int xf_topo_kahn(int n, const int *start, const int *succ, int *indeg, int *order, int *heap)
{
    int n_heap = 0, n_done = 0;
    for (int i = 0; i < n; i++)
        if (indeg[i] == 0) heap[n_heap++] = i; /* ascending: already a heap */
    while (n_heap > 0) {
        int v = heap_pop(heap, &n_heap);
        order[n_done++] = v;
        for (int e = start[v]; e < start[v + 1]; e++)
            if (--indeg[succ[e]] == 0) heap_push(heap, &n_heap, succ[e]);
    }
    return n_done;
}
