/*
 * test_rule_key.c — rule identity in ir/: the renaming search
 * (xf_rule_orders_each) visits exactly the class-keeping input orders
 * times the output orders times the orientations, within its limits; and
 * over it both kinds of key (the graph-hash pair of xf_rule_key_of, and a
 * text with inputs numbered by first use, the kind prune and the coverage
 * bench take) give a renamed, reordered or reversed rule the same identity
 * and a different rule another. Prune's own key is checked through its
 * renaming stage in test_prune.c.
 */
#include <stdio.h>
#include <string.h>

#include "testutil.h"

/* ------------------------------------------------------------ the search */

typedef struct seen {
    const int *cls; /* class of each input */
    int sorted;     /* inputs are ordered by class */
    int n_in, n_out, n;
    char orders[256][32]; /* each visited order as text */
} seen;

static int cls_cmp(void *ctx, int a, int b)
{
    const seen *s = ctx;
    return (s->cls[a] > s->cls[b]) - (s->cls[a] < s->cls[b]);
}

static int record(void *ctx, const xf_rule_order *o)
{
    seen *s = ctx;
    ck_assert_int_lt(s->n, 256);
    char *t = s->orders[s->n++];
    int len = 0;
    for (int i = 0; i < s->n_in; i++) {
        if (i > 0 && s->sorted) ck_assert_int_le(s->cls[o->in[i - 1]], s->cls[o->in[i]]);
        len += snprintf(t + len, 32 - (size_t)len, "%d", o->in[i]);
    }
    len += snprintf(t + len, 32 - (size_t)len, "/");
    for (int i = 0; i < s->n_out; i++) len += snprintf(t + len, 32 - (size_t)len, "%d", o->out[i]);
    snprintf(t + len, 32 - (size_t)len, "/%d", o->swap);
    for (int i = 0; i < s->n - 1; i++) ck_assert_str_ne(s->orders[i], t);
    return 0;
}

/* Visits of the search over 5 inputs of classes 1 0 1 0 2 and 3 outputs. */
static int count_orders(int use_cmp, int max_in, int max_out, int both, seen *s)
{
    static const int cls[5] = {1, 0, 1, 0, 2};
    memset(s, 0, sizeof *s);
    s->cls = cls;
    s->sorted = use_cmp;
    s->n_in = 5;
    s->n_out = 3;
    xf_rule_orders o = {5, 3, use_cmp ? cls_cmp : NULL, max_in, max_out, both, record, s};
    xf_error err;
    ck_assert_int_eq(xf_rule_orders_each(&o, &err), XF_OK);
    return s->n;
}

START_TEST(orders_keep_classes_within_limits)
{
    static seen s;
    /* 2! orders of class 0 times 2! of class 1, 3! output orders, 2 sides */
    ck_assert_int_eq(count_orders(1, 8, 5, 1, &s), 2 * 2 * 6 * 2);
    ck_assert_int_eq(count_orders(1, 8, 5, 0, &s), 2 * 2 * 6);
    /* past max_in only the sorted order, past max_out only the given one */
    ck_assert_int_eq(count_orders(1, 4, 5, 0, &s), 6);
    ck_assert_str_eq(s.orders[0], "13024/012/0");
    ck_assert_int_eq(count_orders(1, 8, 2, 0, &s), 4);
    ck_assert_str_eq(s.orders[3], "31204/012/0");
    /* no classes: the inputs keep their order */
    ck_assert_int_eq(count_orders(0, 8, 5, 1, &s), 12);
    ck_assert_str_eq(s.orders[11], "01234/210/1");
}
END_TEST

/* ------------------------------------------------------------ the keys */

/* Inputs a, b : [2,4] (b : [b_rows,4]). The rule is
 *   ewadd(a, b), relu(p) => ewadd(b, a), relu(q)
 * with p, q each a or b; b_first declares b before a (and names them
 * otherwise: a renaming), outs_swapped lists the outputs the other way,
 * reversed builds target => source. */
typedef struct spec {
    int p_is_b, q_is_b, b_first, outs_swapped, reversed;
    int64_t b_rows;
} spec;

static void side(xf_graph *g, const spec *sp, int target)
{
    int64_t da[2] = {2, 4}, db[2] = {sp->b_rows, 4};
    xf_shape sa = xf_shape_make(2, da), sb = xf_shape_make(2, db);
    xf_error err;
    int a, b;
    if (sp->b_first) {
        b = xf_graph_add_input(g, "u", XF_F32, &sb, &err);
        a = xf_graph_add_input(g, "v", XF_F32, &sa, &err);
    } else {
        a = xf_graph_add_input(g, "a", XF_F32, &sa, &err);
        b = xf_graph_add_input(g, "b", XF_F32, &sb, &err);
    }
    ck_assert(a >= 0 && b >= 0);
    int args[2] = {target ? b : a, target ? a : b};
    int sum = xf_graph_op(g, XF_OP_ADD, NULL, args, 2, &err);
    int which = target ? sp->q_is_b : sp->p_is_b;
    int rl = xf_graph_op(g, XF_OP_RELU, NULL, which ? &b : &a, 1, &err);
    ck_assert(sum >= 0 && rl >= 0);
    ck_assert_int_eq(xf_graph_mark_output(g, sp->outs_swapped ? rl : sum, &err), XF_OK);
    ck_assert_int_eq(xf_graph_mark_output(g, sp->outs_swapped ? sum : rl, &err), XF_OK);
}

static void make_rule(xf_rule *r, spec sp)
{
    xf_rule_init(r);
    side(&r->src, &sp, sp.reversed);
    side(&r->dst, &sp, !sp.reversed);
}

static void hash_key(spec sp, xf_rule_key *key, xf_rule_key *rev)
{
    xf_rule r;
    xf_error err;
    make_rule(&r, sp);
    ck_assert_int_eq(xf_rule_key_of(&r, key, rev, &err), XF_OK);
    xf_rule_free(&r);
}

/* Text of value v with inputs numbered by first use ("$k:rank"). */
typedef struct text_key {
    const xf_rule *r;
    int leaf[8], n_leaf;
    char best[256], cur[256];
    int have;
} text_key;

static void put_value(text_key *t, const xf_graph *g, int v, size_t *len)
{
    const xf_value *val = &g->values[v];
    char *out = t->cur;
    if (val->producer < 0) {
        int k = 0;
        while (k < t->n_leaf && t->leaf[k] != v) k++;
        if (k == t->n_leaf) t->leaf[t->n_leaf++] = v;
        *len += (size_t)snprintf(out + *len, 256 - *len, "$%d:%d", k, val->shape.rank);
        return;
    }
    const xf_node *nd = &g->nodes[val->producer];
    *len += (size_t)snprintf(out + *len, 256 - *len, "%s(", xf_op_get(nd->op)->name);
    for (int i = 0; i < nd->n_inputs; i++) {
        if (i) *len += (size_t)snprintf(out + *len, 256 - *len, ",");
        put_value(t, g, nd->inputs[i], len);
    }
    *len += (size_t)snprintf(out + *len, 256 - *len, ")");
}

static int text_order(void *ctx, const xf_rule_order *o)
{
    text_key *t = ctx;
    const xf_graph *a = o->swap ? &t->r->dst : &t->r->src, *b = o->swap ? &t->r->src : &t->r->dst;
    size_t len = 0;
    t->n_leaf = 0;
    for (int i = 0; i < a->n_outputs; i++) put_value(t, a, a->outputs[o->out[i]], &len);
    len += (size_t)snprintf(t->cur + len, 256 - len, "=>");
    for (int i = 0; i < b->n_outputs; i++) put_value(t, b, b->outputs[o->out[i]], &len);
    if (!t->have || strcmp(t->cur, t->best) < 0) memcpy(t->best, t->cur, sizeof t->best);
    t->have = 1;
    return 0;
}

static void text_of(spec sp, char *out)
{
    xf_rule r;
    xf_error err;
    make_rule(&r, sp);
    text_key t = {.r = &r};
    xf_rule_orders o = {0, r.src.n_outputs, NULL, 0, 4, 1, text_order, &t};
    ck_assert_int_eq(xf_rule_orders_each(&o, &err), XF_OK);
    memcpy(out, t.best, sizeof t.best);
    xf_rule_free(&r);
}

static const spec base = {0, 0, 0, 0, 0, 2};

START_TEST(hash_key_equal_up_to_renaming)
{
    xf_rule_key k, rev, k2, rev2;
    hash_key(base, &k, &rev);
    /* renamed inputs declared the other way, outputs reordered */
    spec sp = base;
    sp.b_first = sp.outs_swapped = 1;
    hash_key(sp, &k2, &rev2);
    ck_assert_int_eq(xf_rule_key_cmp(&k, &k2), 0);
    ck_assert_int_eq(xf_rule_key_cmp(&rev, &rev2), 0);
    /* read backwards: its key is the reversed key, and another rule */
    sp = base;
    sp.reversed = 1;
    hash_key(sp, &k2, &rev2);
    ck_assert_int_eq(xf_rule_key_cmp(&k2, &rev), 0);
    ck_assert_int_eq(xf_rule_key_cmp(&rev2, &k), 0);
    ck_assert_int_ne(xf_rule_key_cmp(&k2, &k), 0);
    /* relu of b on both sides is that reverse renamed (a <-> b) */
    sp = base;
    sp.p_is_b = sp.q_is_b = 1;
    hash_key(sp, &k2, &rev2);
    ck_assert_int_eq(xf_rule_key_cmp(&k2, &rev), 0);
    /* different rules: relu of a, then of b; b of another shape */
    sp = base;
    sp.q_is_b = 1;
    hash_key(sp, &k2, &rev2);
    ck_assert(xf_rule_key_cmp(&k2, &k) != 0 && xf_rule_key_cmp(&k2, &rev) != 0);
    sp = base;
    sp.b_rows = 1;
    hash_key(sp, &k2, &rev2);
    ck_assert(xf_rule_key_cmp(&k2, &k) != 0 && xf_rule_key_cmp(&k2, &rev) != 0);
    /* as written, input positions and output order count */
    xf_rule r;
    make_rule(&r, base);
    xf_rule_key w, w2;
    ck_assert_int_eq(xf_rule_key_as_written(&r, &w, NULL), XF_OK);
    xf_rule_free(&r);
    sp = base;
    sp.outs_swapped = 1;
    make_rule(&r, sp);
    ck_assert_int_eq(xf_rule_key_as_written(&r, &w2, NULL), XF_OK);
    xf_rule_free(&r);
    ck_assert_int_ne(xf_rule_key_cmp(&w, &w2), 0);
}
END_TEST

START_TEST(first_use_key_equal_up_to_renaming_and_sides)
{
    char k[256], k2[256];
    text_of(base, k);
    spec sp = base;
    sp.b_first = sp.outs_swapped = 1;
    text_of(sp, k2);
    ck_assert_str_eq(k, k2);
    /* both orientations are searched: the reverse is the same rule */
    sp = base;
    sp.reversed = 1;
    text_of(sp, k2);
    ck_assert_str_eq(k, k2);
    sp = base;
    sp.p_is_b = sp.q_is_b = 1;
    text_of(sp, k2);
    ck_assert_str_eq(k, k2);
    /* ranks only: another shape of the same rank is the same rule */
    sp = base;
    sp.b_rows = 1;
    text_of(sp, k2);
    ck_assert_str_eq(k, k2);
    sp = base;
    sp.q_is_b = 1;
    text_of(sp, k2);
    ck_assert_str_ne(k, k2);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("rule_key");
    TCase *t = tcase_create("core");
    tcase_add_test(t, orders_keep_classes_within_limits);
    tcase_add_test(t, hash_key_equal_up_to_renaming);
    tcase_add_test(t, first_use_key_equal_up_to_renaming_and_sides);
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
