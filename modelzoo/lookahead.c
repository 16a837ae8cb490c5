/*
 * lookahead.c — the look-ahead cases of issue 35 as zoo models: small
 * graphs whose cheapest form under the proved rules is reached only
 * through graphs that cost more than the input, so that greedy (which
 * never goes up) and TASO's search with alpha 1.05 (which never queues a
 * graph 5% above its best) miss it by construction. bench_lookahead and
 * test_agent_lookahead measure and prove that on them (docs/agent-search.md).
 *
 *  - lookahead-transpose: out = transpose(a0·b0 + a1·b1 + ...), --layers
 *    products (default 2) of activations a_i: [n, k], b_i: [k, n]
 *    (--hidden n, --width k). The transpose of the [n, n] sum is the
 *    dearest operator; the cheapest graph transposes the small operands
 *    instead, (b0ᵀ·a0ᵀ) + (b1ᵀ·a1ᵀ) + ..., but the rules get there only by
 *    distributing the transpose over the adds (each distribution another
 *    [n, n] transpose) and moving each through its product: 2·layers − 1
 *    rule applications, and every order of them passes a dearer graph.
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

xf_status zoo_build_lookahead_transpose(const xf_zoo_config *c, xf_graph *g, xf_error *err)
{
    int64_t n = c->v[XF_ZOO_HIDDEN], k = c->v[XF_ZOO_WIDTH], products = c->v[XF_ZOO_LAYERS];
    zb b;
    zoo_init(&b, g, "lookahead-transpose", c->seed, err);
    if (k >= n)
        zoo_fail(&b, XF_ERR_INVALID, "--width (%lld) must be below --hidden (%lld)", (long long)k,
                 (long long)n);
    if (products < 2 || products > 8)
        zoo_fail(&b, XF_ERR_INVALID, "--layers (%lld): 2 to 8 products", (long long)products);
    int64_t tall[2] = {n, k}, wide[2] = {k, n};
    int sum = -1;
    for (int64_t i = 0; i < products && b.st == XF_OK; i++) {
        char na[16], nb[16], nm[16], ns[16];
        snprintf(na, sizeof na, "a%d", (int)i);
        snprintf(nb, sizeof nb, "b%d", (int)i);
        snprintf(nm, sizeof nm, "p%d", (int)i);
        snprintf(ns, sizeof ns, "s%d", (int)i);
        int x = zoo_input(&b, na, XF_F32, 2, tall);
        int y = zoo_input(&b, nb, XF_F32, 2, wide);
        int p = zoo_binary(&b, XF_OP_MATMUL, x, y, nm);
        sum = i == 0 ? p : zoo_binary(&b, XF_OP_ADD, sum, p, ns);
    }
    zoo_output(&b, transpose2(&b, sum, "t"), "out");
    return zoo_finish(&b);
}
