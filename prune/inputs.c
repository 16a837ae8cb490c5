/*
 * inputs.c — canonical input order of a rule: inputs sorted by first use
 * (a depth-first walk of the source outputs in order, then the target's;
 * unused inputs last), and within each group of same-typed inputs the
 * group's names handed out in natural order ("x2" before "x10") in that
 * sequence, so a rule reads matmul(x0, w0) rather than matmul(x1, w2). Both
 * sides are changed alike; nothing but the input order and names changes.
 */
#include "prune/prune.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Natural order: runs of digits compare by value. */
static int natural_cmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            while (*a == '0') a++;
            while (*b == '0') b++;
            size_t la = 0, lb = 0;
            while (isdigit((unsigned char)a[la])) la++;
            while (isdigit((unsigned char)b[lb])) lb++;
            if (la != lb) return la < lb ? -1 : 1;
            int c = strncmp(a, b, la);
            if (c) return c;
            a += la;
            b += lb;
            continue;
        }
        if (*a != *b) return (unsigned char)*a < (unsigned char)*b ? -1 : 1;
        a++;
        b++;
    }
    return *a ? 1 : *b ? -1 : 0;
}

static int cmp_names(const void *pa, const void *pb)
{
    return natural_cmp(*(char *const *)pa, *(char *const *)pb);
}

/* Depth-first walk from value v; input positions in order of first use. */
static void walk(const xf_graph *g, const int *pos_of, int v, unsigned char *seen_node,
                 unsigned char *used, int *order, int *n)
{
    const xf_value *val = &g->values[v];
    if (val->kind == XF_VALUE_INPUT) {
        int p = pos_of[v];
        if (p >= 0 && !used[p]) {
            used[p] = 1;
            order[(*n)++] = p;
        }
        return;
    }
    if (val->kind != XF_VALUE_NODE || seen_node[val->producer]) return;
    seen_node[val->producer] = 1;
    const xf_node *nd = &g->nodes[val->producer];
    for (int i = 0; i < nd->n_inputs; i++)
        if (nd->inputs[i] >= 0) walk(g, pos_of, nd->inputs[i], seen_node, used, order, n);
}

static int same_type(const xf_value *a, const xf_value *b)
{
    return a->dtype == b->dtype && xf_shape_equal(&a->shape, &b->shape);
}

xf_status xf_prune_canonical_inputs(xf_rule *r, xf_error *err)
{
    int n = r->src.n_inputs;
    if (r->dst.n_inputs != n)
        return XF_FAIL(err, XF_ERR_INVALID, "prune: rule sides read %d and %d inputs", n,
                       r->dst.n_inputs);
    if (n == 0) return XF_OK;
    int nv = r->src.n_values > r->dst.n_values ? r->src.n_values : r->dst.n_values;
    int nn = r->src.n_nodes > r->dst.n_nodes ? r->src.n_nodes : r->dst.n_nodes;
    xf_status st = XF_OK;
    int *order = xf_malloc((size_t)n * sizeof *order);
    int *pos_of = xf_malloc(((size_t)nv + 1) * sizeof *pos_of);
    int *src_in = xf_malloc((size_t)n * sizeof *src_in);
    int *dst_in = xf_malloc((size_t)n * sizeof *dst_in);
    unsigned char *used = xf_calloc((size_t)n, 1);
    unsigned char *seen = xf_malloc((size_t)nn + 1);
    char **names = xf_calloc((size_t)n, sizeof *names); /* new name per new position */
    char **group = xf_calloc((size_t)n, sizeof *group);
    if (!order || !pos_of || !src_in || !dst_in || !used || !seen || !names || !group) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (rule inputs)");
        goto out;
    }
    int m = 0;
    for (int side = 0; side < 2; side++) {
        const xf_graph *g = side ? &r->dst : &r->src;
        for (int i = 0; i < g->n_values; i++) pos_of[i] = -1;
        for (int k = 0; k < n; k++) pos_of[g->inputs[k]] = k;
        memset(seen, 0, (size_t)nn + 1);
        for (int o = 0; o < g->n_outputs; o++) walk(g, pos_of, g->outputs[o], seen, used, order, &m);
    }
    for (int k = 0; k < n; k++)
        if (!used[k]) order[m++] = k;
    /* Names: per type group, the group's names sorted, in the new order. */
    int have_all = 1;
    for (int k = 0; k < n; k++)
        if (!r->src.values[r->src.inputs[k]].name) have_all = 0;
    if (have_all) {
        for (int k = 0; k < n; k++) used[k] = 0; /* now: position already named */
        for (int a = 0; a < n; a++) {
            if (used[a]) continue;
            const xf_value *ta = &r->src.values[r->src.inputs[order[a]]];
            int g = 0;
            for (int b = a; b < n; b++)
                if (!used[b] && same_type(ta, &r->src.values[r->src.inputs[order[b]]]))
                    group[g++] = r->src.values[r->src.inputs[order[b]]].name;
            qsort(group, (size_t)g, sizeof *group, cmp_names);
            int q = 0;
            for (int b = a; b < n; b++)
                if (!used[b] && same_type(ta, &r->src.values[r->src.inputs[order[b]]])) {
                    used[b] = 1;
                    names[b] = xf_strdup(group[q++]);
                    if (!names[b]) {
                        st = XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (input names)");
                        goto out;
                    }
                }
        }
    }
    for (int k = 0; k < n; k++) {
        src_in[k] = r->src.inputs[order[k]];
        dst_in[k] = r->dst.inputs[order[k]];
    }
    memcpy(r->src.inputs, src_in, (size_t)n * sizeof *src_in);
    memcpy(r->dst.inputs, dst_in, (size_t)n * sizeof *dst_in);
    if (have_all)
        for (int k = 0; k < n; k++) {
            xf_value *sv = &r->src.values[r->src.inputs[k]];
            xf_value *dv = &r->dst.values[r->dst.inputs[k]];
            char *copy = xf_strdup(names[k]);
            if (!copy) {
                st = XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (input names)");
                goto out;
            }
            xf_graph_release(&r->src, sv->name);
            sv->name = names[k];
            names[k] = NULL;
            xf_graph_release(&r->dst, dv->name);
            dv->name = copy;
        }
out:
    if (names)
        for (int k = 0; k < n; k++) xf_free(names[k]);
    xf_free(names);
    xf_free(group);
    xf_free(order);
    xf_free(pos_of);
    xf_free(src_in);
    xf_free(dst_in);
    xf_free(used);
    xf_free(seen);
    return st;
}
