/*
 * inputs.c — canonical input order of a rule: inputs sorted by first use
 * (a depth-first walk of the source outputs in order, then the target's;
 * unused inputs last), and within each group of same-typed inputs the
 * group's names handed out in natural order ("x2" before "x10") in that
 * sequence, so a rule reads matmul(x0, w0) rather than matmul(x1, w2). Both
 * sides are changed alike; nothing but the input order and names changes.
 * The order is computed in one place, on a fed rule (flat.c):
 * xf_prune_canonical_inputs feeds an xf_rule and applies the order to it;
 * pruning's term view reads it directly.
 */
#include "prune/prune_internal.h"

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
    return natural_cmp(*(const char *const *)pa, *(const char *const *)pb);
}

/* Depth-first walk from value v of side s: inputs in order of first use
 * (in[].used per input, in[].order per position). */
static void walk(const pr_flat_side *s, int v, unsigned char *seen, pr_flat_input *in, int *n)
{
    if (v < s->n_inputs) {
        if (!in[v].used) {
            in[v].used = 1;
            in[(*n)++].order = v;
        }
        return;
    }
    int k = s->values[v].producer;
    if (seen[k]) return;
    seen[k] = 1;
    const pr_flat_node *nd = &s->nodes[k];
    for (int i = 0; i < nd->n_in; i++) {
        int x = s->ins[nd->in + i];
        if (x >= 0) walk(s, x, seen, in, n);
    }
}

static int same_type(const pr_flat_side *s, int a, int b)
{
    return s->values[a].dtype == s->values[b].dtype &&
           xf_shape_equal(&s->values[a].shape, &s->values[b].shape);
}

xf_status pr_flat_canonical(pr_flat *f, xf_error *err)
{
    const pr_flat_side *src = &f->side[0];
    int n = src->n_inputs;
    int nn = src->n_nodes > f->side[1].n_nodes ? src->n_nodes : f->side[1].n_nodes;
    if (!xf_grow((void **)&f->seen, &f->cap_seen, nn, 1))
        return XF_FAIL(err, XF_ERR_NOMEM, "out of memory (rule inputs)");
    pr_flat_input *in = f->in;
    for (int k = 0; k < n; k++) in[k].used = 0;
    int m = 0;
    for (int side = 0; side < 2; side++) {
        const pr_flat_side *s = &f->side[side];
        if (s->n_nodes > 0) memset(f->seen, 0, (size_t)s->n_nodes);
        for (int o = 0; o < s->n_outputs; o++) walk(s, s->outputs[o], f->seen, in, &m);
    }
    for (int k = 0; k < n; k++)
        if (!in[k].used) in[m++].order = k;
    /* Names: per type group, the group's names sorted, in the new order. */
    int have_all = 1;
    for (int k = 0; k < n; k++)
        if (in[k].name_at < 0) have_all = 0;
    if (!have_all) {
        for (int k = 0; k < n; k++) in[k].name_of = in[in[k].order].name_at;
        return XF_OK;
    }
    for (int k = 0; k < n; k++) in[k].used = 0; /* now: position already named */
    for (int a = 0; a < n; a++) {
        if (in[a].used) continue;
        int g = 0;
        for (int b = a; b < n; b++)
            if (!in[b].used && same_type(src, in[a].order, in[b].order))
                f->group[g++] = f->names + in[in[b].order].name_at;
        qsort(f->group, (size_t)g, sizeof *f->group, cmp_names);
        int q = 0;
        for (int b = a; b < n; b++)
            if (!in[b].used && same_type(src, in[a].order, in[b].order)) {
                in[b].used = 1;
                in[b].name_of = (int32_t)(f->group[q++] - f->names);
            }
    }
    return XF_OK;
}

xf_status xf_prune_canonical_inputs(xf_rule *r, xf_error *err)
{
    int n = r->src.n_inputs;
    if (r->dst.n_inputs != n)
        return XF_FAIL(err, XF_ERR_INVALID, "prune: rule sides read %d and %d inputs", n,
                       r->dst.n_inputs);
    if (n == 0) return XF_OK;
    pr_flat f;
    pr_flat_init(&f);
    int *src_in = xf_malloc((size_t)n * sizeof *src_in);
    int *dst_in = xf_malloc((size_t)n * sizeof *dst_in);
    char **names = xf_calloc((size_t)n, sizeof *names); /* new name per new position */
    xf_status st = XF_OK;
    if (!src_in || !dst_in || !names)
        st = XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (rule inputs)");
    if (st == XF_OK) {
        st = xf_rule_feed(r, &f.sink[0], &f.sink[1], err);
        if (st == XF_OK) st = pr_flat_canonical(&f, err);
        if (st != XF_OK) xf_error_prefix(err, "prune");
    }
    if (st != XF_OK) goto out;
    int have_all = 1; /* else the names stay with their inputs */
    for (int k = 0; k < n; k++)
        if (f.in[k].name_at < 0) have_all = 0;
    for (int k = 0; have_all && k < n && st == XF_OK; k++)
        if (!(names[k] = xf_strdup(f.names + f.in[k].name_of)))
            st = XF_FAIL(err, XF_ERR_NOMEM, "prune: out of memory (input names)");
    if (st != XF_OK) goto out;
    for (int k = 0; k < n; k++) {
        src_in[k] = r->src.inputs[f.in[k].order];
        dst_in[k] = r->dst.inputs[f.in[k].order];
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
    xf_free(src_in);
    xf_free(dst_in);
    pr_flat_free(&f);
    return st;
}
