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
 * smallest (source hash, target hash) over the renaming search of
 * rule_orders.c: every order of its inputs that lists them sorted by
 * (dtype, rank, dims) — interchangeable inputs are tried in every order —
 * and every joint order of the mapped outputs (output i of the source
 * stays paired with output i of the target). Two
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

int xf_rule_key_cmp(const xf_rule_key *a, const xf_rule_key *b)
{
    if (a->src != b->src) return a->src < b->src ? -1 : 1;
    if (a->dst != b->dst) return a->dst < b->dst ? -1 : 1;
    return 0;
}

xf_status xf_rule_key_as_written(const xf_rule *r, xf_rule_key *key, xf_error *err)
{
    *key = (xf_rule_key){0, 0};
    xf_status st = xf_graph_hash_checked(&r->src, XF_HASH_CONTENT, &key->src, err);
    if (st == XF_OK) st = xf_graph_hash_checked(&r->dst, XF_HASH_CONTENT, &key->dst, err);
    return st;
}

typedef struct search {
    xf_rule *r;
    const int *src_in, *dst_in, *src_out, *dst_out; /* original orders */
    xf_rule_key best, rev;
    int have;
    xf_status st; /* a side that could not be hashed stops the search */
    xf_error *err;
} search;

/* Inputs a and b by type (the source's values; the target's agree). */
static int input_cmp(void *ctx, int a, int b)
{
    const search *s = ctx;
    const xf_graph *g = &s->r->src;
    return type_cmp(&g->values[s->src_in[a]], &g->values[s->src_in[b]]);
}

/* Hashes both sides under order o. */
static int try_order(void *ctx, const xf_rule_order *o)
{
    search *s = ctx;
    xf_rule *r = s->r;
    for (int i = 0; i < r->src.n_inputs; i++) {
        r->src.inputs[i] = s->src_in[o->in[i]];
        r->dst.inputs[i] = s->dst_in[o->in[i]];
    }
    for (int i = 0; i < r->src.n_outputs; i++) {
        r->src.outputs[i] = s->src_out[o->out[i]];
        r->dst.outputs[i] = s->dst_out[o->out[i]];
    }
    xf_rule_key k;
    s->st = xf_rule_key_as_written(r, &k, s->err);
    if (s->st != XF_OK) return 1;
    xf_rule_key rk = {k.dst, k.src};
    if (!s->have || xf_rule_key_cmp(&k, &s->best) < 0) s->best = k;
    if (!s->have || xf_rule_key_cmp(&rk, &s->rev) < 0) s->rev = rk;
    s->have = 1;
    return 0;
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
    size_t bytes = sizeof(int) * (size_t)(2 * n_in + 2 * n_out + 1);
    int *mem = xf_malloc(bytes);
    if (!mem) return XF_FAIL(err, XF_ERR_NOMEM, "out of memory computing a rule key");
    int *src_in = mem, *dst_in = mem + n_in;
    int *src_out = mem + 2 * n_in, *dst_out = src_out + n_out;
    copy_ints(src_in, r->src.inputs, n_in);
    copy_ints(dst_in, r->dst.inputs, n_in);
    copy_ints(src_out, r->src.outputs, n_out);
    copy_ints(dst_out, r->dst.outputs, n_out);
    search s = {r, src_in, dst_in, src_out, dst_out, {0, 0}, {0, 0}, 0, XF_OK, err};
    int all = n_in <= MAX_INPUTS && n_out <= MAX_OUTPUTS;
    xf_rule_orders orders = {n_in, n_out, input_cmp, all ? MAX_INPUTS : 0, all ? MAX_OUTPUTS : 0,
                             0, try_order, &s};
    xf_status st = xf_rule_orders_each(&orders, err);
    copy_ints(r->src.inputs, src_in, n_in);
    copy_ints(r->dst.inputs, dst_in, n_in);
    copy_ints(r->src.outputs, src_out, n_out);
    copy_ints(r->dst.outputs, dst_out, n_out);
    xf_free(mem);
    if (st == XF_OK) st = s.st;
    if (st != XF_OK) return st;
    *key = s.best;
    if (reversed) *reversed = s.rev;
    return XF_OK;
}
