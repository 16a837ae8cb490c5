/*
 * lookahead.c — the look-ahead cases of issue 35 as zoo models: small
 * graphs whose cheapest form under the proved rules is reached only
 * through graphs that cost more than the input, so that greedy (which
 * never goes up) and TASO's search with alpha 1.05 (which never queues a
 * graph 5% above its best) miss it by construction. bench_lookahead and
 * test_agent_lookahead measure and prove that on them (docs/agent-search.md).
 *
 *  - lookahead-transpose: out = transpose(a·b + c·d), a, c: [n, k], b, d:
 *    [k, n] (activations, --hidden n, --width k). The transpose of the
 *    [n, n] sum is the dearest operator; the cheapest graph transposes the
 *    small operands instead, (bᵀ·aᵀ) + (dᵀ·cᵀ), but the rules get there
 *    only by first distributing the transpose over the add (a second
 *    [n, n] transpose), then moving each through its product.
 *  - lookahead-transpose3: the same over three products, a longer chain
 *    (two distributions before the first saving).
 */
#include "modelzoo/builder_internal.h"

static int transpose2(zb *b, int x, const char *name)
{
    xf_params p = xf_params_default();
    p.n_axes = 2;
    p.axes[0] = 1;
    p.axes[1] = 0;
    return zoo_node(b, XF_OP_TRANSPOSE, &p, &x, 1, name);
}

static xf_status build_products(const xf_zoo_config *c, int products, xf_graph *g, xf_error *err)
{
    int64_t n = c->v[XF_ZOO_HIDDEN], k = c->v[XF_ZOO_WIDTH];
    zb b;
    zoo_init(&b, g, products == 2 ? "lookahead-transpose" : "lookahead-transpose3", c->seed, err);
    if (k >= n) zoo_fail(&b, XF_ERR_INVALID, "--width (%lld) must be below --hidden (%lld)",
                         (long long)k, (long long)n);
    int64_t tall[2] = {n, k}, wide[2] = {k, n};
    int sum = -1;
    for (int i = 0; i < products; i++) {
        char na[8], nb[8], nm[8], ns[8];
        snprintf(na, sizeof na, "a%d", i);
        snprintf(nb, sizeof nb, "b%d", i);
        snprintf(nm, sizeof nm, "p%d", i);
        snprintf(ns, sizeof ns, "s%d", i);
        int x = zoo_input(&b, na, XF_F32, 2, tall);
        int y = zoo_input(&b, nb, XF_F32, 2, wide);
        int p = zoo_binary(&b, XF_OP_MATMUL, x, y, nm);
        sum = i == 0 ? p : zoo_binary(&b, XF_OP_ADD, sum, p, ns);
    }
    zoo_output(&b, transpose2(&b, sum, "t"), "out");
    return zoo_finish(&b);
}

xf_status zoo_build_lookahead_transpose(const xf_zoo_config *c, xf_graph *g, xf_error *err)
{
    return build_products(c, 2, g, err);
}

xf_status zoo_build_lookahead_transpose3(const xf_zoo_config *c, xf_graph *g, xf_error *err)
{
    return build_products(c, 3, g, err);
}
