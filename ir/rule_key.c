/*
 * rule_key.c — the identity of a rule modulo renaming of its inputs
 * (xf_rule_key_of; `xferdb diff` matches the rules of two databases by it).
 *
 * The canonical structural hash (xf_graph_hash) ignores names but not input
 * positions: ewadd(x0, x1) and ewadd(x1, x0) hash differently because x0 is
 * input 0 in both. A renaming is a bijection between the inputs of two
 * rules that keeps each input's dtype and shape (x0:[2,4] may only become
 * another [2,4] float32 input: the shapes are part of what a rule says) and
 * is applied to source and target alike. So the key of a rule is the
 * smallest (source hash, target hash) over every order of its inputs that
 * lists them sorted by (dtype, rank, dims) — interchangeable inputs are
 * tried in every order — and over every joint order of the mapped outputs
 * (output i of the source stays paired with output i of the target). Two
 * rules have equal keys exactly when one is a renaming of the other (up to
 * 128-bit hash collisions). Rules with more than MAX_INPUTS inputs or
 * MAX_OUTPUTS outputs only try the sorted order (documented). The key of
 * the reversed rule (target => source) comes out of the same search, so
 * diff can say when the other database has a rule the other way round.
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

#define MAX_INPUTS 8
#define MAX_OUTPUTS 5

static int type_cmp(const xf_value *a, const xf_value *b)
{
    if (a->dtype != b->dtype) return a->dtype < b->dtype ? -1 : 1;
    if (a->shape.rank != b->shape.rank) return a->shape.rank < b->shape.rank ? -1 : 1;
    for (int d = 0; d < a->shape.rank; d++)
        if (a->shape.dims[d] != b->shape.dims[d]) return a->shape.dims[d] < b->shape.dims[d] ? -1 : 1;
    return 0;
}

/* Lexicographic next permutation of p[0..n); 0 after the last one. */
static int next_perm(int *p, int n)
{
    int i = n - 2;
    while (i >= 0 && p[i] >= p[i + 1]) i--;
    if (i < 0) return 0;
    int j = n - 1;
    while (p[j] <= p[i]) j--;
    int t = p[i];
    p[i] = p[j];
    p[j] = t;
    for (int a = i + 1, b = n - 1; a < b; a++, b--) t = p[a], p[a] = p[b], p[b] = t;
    return 1;
}

int xf_rule_key_cmp(const xf_rule_key *a, const xf_rule_key *b)
{
    if (a->src != b->src) return a->src < b->src ? -1 : 1;
    if (a->dst != b->dst) return a->dst < b->dst ? -1 : 1;
    return 0;
}

typedef struct search {
    xf_rule *r;
    const int *src_in, *dst_in, *src_out, *dst_out; /* original orders */
    const int *sorted;                              /* inputs sorted by type */
    int n_in, n_out, all_orders;
    xf_rule_key best, rev;
    int have;
} search;

/* Hashes both sides under input order p and output order q. */
static void try_order(search *s, const int *p, const int *q)
{
    xf_rule *r = s->r;
    for (int i = 0; i < s->n_in; i++) {
        r->src.inputs[i] = s->src_in[p[i]];
        r->dst.inputs[i] = s->dst_in[p[i]];
    }
    for (int i = 0; i < s->n_out; i++) {
        r->src.outputs[i] = s->src_out[q[i]];
        r->dst.outputs[i] = s->dst_out[q[i]];
    }
    xf_rule_key k = {xf_graph_hash(&r->src), xf_graph_hash(&r->dst)};
    xf_rule_key rk = {k.dst, k.src};
    if (!s->have || xf_rule_key_cmp(&k, &s->best) < 0) s->best = k;
    if (!s->have || xf_rule_key_cmp(&rk, &s->rev) < 0) s->rev = rk;
    s->have = 1;
}

/* Every order of the outputs for input order p. */
static void try_outputs(search *s, const int *p)
{
    int q[MAX_OUTPUTS];
    for (int i = 0; i < s->n_out && i < MAX_OUTPUTS; i++) q[i] = i;
    if (!s->all_orders || s->n_out > MAX_OUTPUTS) {
        int *ident = malloc(sizeof(int) * ((size_t)s->n_out + 1));
        if (!ident) return;
        for (int i = 0; i < s->n_out; i++) ident[i] = i;
        try_order(s, p, ident);
        free(ident);
        return;
    }
    do try_order(s, p, q);
    while (next_perm(q, s->n_out));
}

/* Every input order that keeps the sorted type sequence. */
static void try_inputs(search *s)
{
    const xf_graph *g = &s->r->src;
    if (!s->all_orders) {
        try_outputs(s, s->sorted);
        return;
    }
    int p[MAX_INPUTS];
    for (int i = 0; i < s->n_in; i++) p[i] = i;
    do {
        int ok = 1;
        for (int i = 0; i < s->n_in && ok; i++)
            ok = type_cmp(&g->values[s->src_in[p[i]]], &g->values[s->src_in[s->sorted[i]]]) == 0;
        if (ok) try_outputs(s, p);
    } while (next_perm(p, s->n_in));
}

/* Stable insertion sort of input positions by type (rules have few inputs). */
static void sort_by_type(const xf_graph *g, const int *inputs, int *idx, int n)
{
    for (int i = 0; i < n; i++) idx[i] = i;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && type_cmp(&g->values[inputs[idx[j - 1]]], &g->values[inputs[idx[j]]]) > 0; j--) {
            int t = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = t;
        }
}

/* memcpy of n ints; a rule without inputs has NULL arrays. */
static void copy_ints(int *dst, const int *src, int n)
{
    if (n > 0) memcpy(dst, src, sizeof(int) * (size_t)n);
}

xf_status xf_rule_key_of(xf_rule *r, xf_rule_key *key, xf_rule_key *reversed,
                             xf_error *err)
{
    int n_in = r->src.n_inputs, n_out = r->src.n_outputs;
    if (r->dst.n_inputs != n_in || r->dst.n_outputs != n_out)
        return XF_FAIL(err, XF_ERR_INVALID, "source and target have different interfaces");
    size_t bytes = sizeof(int) * (size_t)(3 * n_in + 2 * n_out + 1);
    int *mem = malloc(bytes);
    if (!mem) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory computing a rule key");
    int *src_in = mem, *dst_in = mem + n_in, *sorted = mem + 2 * n_in;
    int *src_out = mem + 3 * n_in, *dst_out = src_out + n_out;
    copy_ints(src_in, r->src.inputs, n_in);
    copy_ints(dst_in, r->dst.inputs, n_in);
    copy_ints(src_out, r->src.outputs, n_out);
    copy_ints(dst_out, r->dst.outputs, n_out);
    sort_by_type(&r->src, src_in, sorted, n_in);
    search s = {r, src_in, dst_in, src_out, dst_out, sorted, n_in, n_out,
                n_in <= MAX_INPUTS && n_out <= MAX_OUTPUTS, {0, 0}, {0, 0}, 0};
    try_inputs(&s);
    copy_ints(r->src.inputs, src_in, n_in);
    copy_ints(r->dst.inputs, dst_in, n_in);
    copy_ints(r->src.outputs, src_out, n_out);
    copy_ints(r->dst.outputs, dst_out, n_out);
    free(mem);
    if (!s.have) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory computing a rule key");
    *key = s.best;
    if (reversed) *reversed = s.rev;
    return XF_OK;
}
