/*
 * test_agent_split_layout.c — the step of xf_agent_prepare that takes the
 * parts of an even split to their common layout once, before the split
 * (agent/rewrite/split_layout.c).
 *
 * On the modelzoo GPT (merged Q/K/V, split three ways, each part reshaped
 * to heads and transposed, K to [h, d, S]): each layer's Split, three
 * Reshapes and three Transposes become one Reshape, one Transpose, one
 * Split and K's own Transpose; the function is unchanged, also after ONNX
 * export and import, after finishing and in the unbatched layout. On
 * small graphs: parts transposed alike need no extra Transpose; a split
 * into unequal parts, a part with a second reader, parts with no unit dim
 * to split along (batch 2) and the option turned off leave the graph as it
 * was.
 */
#include <stdlib.h>
#include <string.h>

#include "agent_fixture.h"
#include "testutil.h"

static void prepare(const xf_graph *model, int on, xf_graph *work, xf_prepare_stats *ps)
{
    xf_error err;
    xf_prepare_options po = xf_prepare_options_default();
    po.split_layout = on;
    ck_assert_msg(xf_agent_prepare(model, &po, work, ps, &err) == XF_OK, "%s", err.msg);
    ck_assert_msg(xf_graph_validate(work, &err) == XF_OK, "%s", err.msg);
}

START_TEST(gpt_heads_taken_once)
{
    xf_graph model, off, on;
    xf_test_modelzoo_build("gpt", "--layers 2 --hidden 16 --heads 2 --seq 6 --vocab 50", &model);
    xf_prepare_stats ps_off, ps_on;
    prepare(&model, 0, &off, &ps_off);
    prepare(&model, 1, &on, &ps_on);
    ck_assert_int_eq(ps_off.merged_split_layouts, 0);
    ck_assert_int_eq(ps_on.merged_split_layouts, 2);
    /* per layer: two Reshapes and one Transpose fewer (K keeps one), one Split */
    ck_assert_int_eq(xf_test_count_op(&on, XF_OP_SPLIT), xf_test_count_op(&off, XF_OP_SPLIT));
    ck_assert_int_eq(xf_test_count_op(&on, XF_OP_RESHAPE),
                     xf_test_count_op(&off, XF_OP_RESHAPE) - 4);
    ck_assert_int_eq(xf_test_count_op(&on, XF_OP_TRANSPOSE),
                     xf_test_count_op(&off, XF_OP_TRANSPOSE) - 2);
    ck_assert_int_eq(on.n_nodes, off.n_nodes - 6);
    /* the merged split runs along a unit axis into parts of one */
    int found = 0;
    for (int i = 0; i < on.n_nodes; i++) {
        const xf_node *n = &on.nodes[i];
        if (n->op != XF_OP_SPLIT) continue;
        const xf_shape *in = &on.values[n->inputs[0]].shape;
        ck_assert_int_eq(n->n_outputs, 3);
        ck_assert_int_eq(in->dims[n->params.axis], 3);
        ck_assert_int_eq(on.values[n->outputs[0]].shape.dims[n->params.axis], 1);
        found++;
    }
    ck_assert_int_eq(found, 2);
    xf_test_expect_same_function(&model, &on, 3, 1e-5);
    xf_fx_expect_written_same(&model, &on, 4);
    xf_error err;
    xf_graph ub;
    int dropped = 0;
    ck_assert_msg(xf_agent_unbatch(&on, &ub, &dropped, &err) == XF_OK, "%s", err.msg);
    ck_assert_int_gt(dropped, 0);
    xf_test_expect_same_function(&model, &ub, 6, 1e-5);
    xf_graph_free(&ub);
    xf_graph_free(&on);
    xf_graph_free(&off);
    xf_graph_free(&model);
}
END_TEST

/* x [b, 4, 12] split along the last axis into `sizes`, each part reshaped
 * to [b, 4, 2, 2] and transposed by perm, or by perm_k for part 1; the
 * transposed parts are outputs. With `extra` part 0 also goes to a relu. */
static void split_graph(xf_graph *g, int64_t b, const int64_t *sizes, const int64_t *perm,
                        const int64_t *perm_k, int extra)
{
    xf_graph_init(g);
    xf_error err;
    int x = xf_fx_input(g, "x", xf_fx_shape(3, b, 4, 12, 0));
    xf_params sp = xf_params_default();
    sp.axis = -1;
    sp.n_split = 3;
    memcpy(sp.split, sizes, 3 * sizeof *sizes);
    int sn = xf_graph_add_node(g, XF_OP_SPLIT, &sp, &x, 1, 3, "qkv", &err);
    ck_assert_msg(sn >= 0, "%s", err.msg);
    for (int i = 0; i < 3; i++) {
        int part = g->nodes[sn].outputs[i];
        xf_params rp = xf_params_default();
        rp.n_shape = 4;
        const int64_t q[4] = {b, 4, 2, sizes[i] / 2};
        memcpy(rp.shape, q, sizeof q);
        int r = xf_fx_op(g, XF_OP_RESHAPE, &rp, part, -1);
        xf_params tp = xf_params_default();
        tp.n_axes = 4;
        memcpy(tp.axes, i == 1 ? perm_k : perm, 4 * sizeof *perm);
        char name[16] = "part0";
        name[4] = (char)('0' + i);
        int tn = xf_graph_add_node(g, XF_OP_TRANSPOSE, &tp, &r, 1, 1, name, &err);
        ck_assert_msg(tn >= 0, "%s", err.msg);
        xf_fx_output(g, g->nodes[tn].outputs[0]);
        if (extra && i == 0) xf_fx_output(g, xf_fx_op(g, XF_OP_RELU, NULL, part, -1));
    }
}

static const int64_t EVEN[3] = {4, 4, 4}, UNEVEN[3] = {4, 2, 6};
static const int64_t HEADS[4] = {0, 2, 1, 3}, HEADS_T[4] = {0, 2, 3, 1};

START_TEST(alike_parts_need_no_transpose)
{
    xf_graph model, work;
    xf_prepare_stats ps;
    split_graph(&model, 1, EVEN, HEADS, HEADS, 0);
    prepare(&model, 1, &work, &ps);
    ck_assert_int_eq(ps.merged_split_layouts, 1);
    ck_assert_int_eq(xf_test_count_op(&work, XF_OP_TRANSPOSE), 1);
    ck_assert_int_eq(xf_test_count_op(&work, XF_OP_RESHAPE), 1);
    ck_assert_int_eq(work.n_nodes, 3);
    for (int o = 0; o < 3; o++) {
        ck_assert(xf_shape_equal(&work.values[work.outputs[o]].shape,
                                 &model.values[model.outputs[o]].shape));
        ck_assert_str_eq(work.values[work.outputs[o]].name, model.values[model.outputs[o]].name);
    }
    xf_test_expect_same_function(&model, &work, 3, 0);
    xf_graph_free(&work);
    xf_graph_free(&model);
    /* K transposed otherwise: one more Transpose, the same function */
    split_graph(&model, 1, EVEN, HEADS, HEADS_T, 0);
    prepare(&model, 1, &work, &ps);
    ck_assert_int_eq(ps.merged_split_layouts, 1);
    ck_assert_int_eq(xf_test_count_op(&work, XF_OP_TRANSPOSE), 2);
    xf_test_expect_same_function(&model, &work, 4, 0);
    xf_graph_free(&work);
    xf_graph_free(&model);
}
END_TEST

START_TEST(left_alone)
{
    struct {
        int64_t b;
        const int64_t *sizes;
        int extra, on;
    } cases[] = {
        {1, EVEN, 0, 1},   /* the control: merged */
        {1, UNEVEN, 0, 1}, /* unequal parts */
        {1, EVEN, 1, 1},   /* part 0 has a second reader */
        {2, EVEN, 0, 1},   /* batch 2: no unit dim to split along */
        {1, EVEN, 0, 0},   /* the option off */
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        xf_graph model, work;
        xf_prepare_stats ps;
        split_graph(&model, cases[c].b, cases[c].sizes, HEADS, HEADS_T, cases[c].extra);
        prepare(&model, cases[c].on, &work, &ps);
        if (c == 0) {
            ck_assert_int_eq(ps.merged_split_layouts, 1);
        } else {
            ck_assert_int_eq(ps.merged_split_layouts, 0);
            ck_assert_int_eq(work.n_nodes, model.n_nodes);
            ck_assert_uint_eq(xf_graph_hash(&work), xf_graph_hash(&model));
        }
        xf_test_expect_same_function(&model, &work, 3, 0);
        xf_graph_free(&work);
        xf_graph_free(&model);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("agent_split_layout");
    TCase *t = tcase_create("core");
    tcase_add_test(t, gpt_heads_taken_once);
    tcase_add_test(t, alike_parts_need_no_transpose);
    tcase_add_test(t, left_alone);
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
