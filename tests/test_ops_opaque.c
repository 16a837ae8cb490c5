/*
 * test_ops_opaque.c — the opaque nodes the interpreter runs (ir/opaque_run.c,
 * ir/ops_lstm.c), built through the public graph API: LSTM on a case
 * worked by hand, and its directions, sequence_lens, layouts, peepholes
 * and input_forget against each other's definitions; If choosing its
 * branch from bool and int conditions, binding the outer values it
 * captures by name, surviving a clone, and refusing a branch whose output
 * disagrees with the node; the shape arithmetic (Range, Mod, ScatterND)
 * against ONNX's definitions, and a Range whose size changed with its
 * inputs refused by name. ONNX's own LSTM and If cases run in
 * test_onnx_backend.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* ------------------------------------------------------------------ LSTM */

static float sig(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

/* Runs one LSTM node; in[k] NULL for an omitted input (k < 8); fills
 * y, yh, yc (caller frees). */
static xf_status run_lstm(const xf_lstm_attrs *a, xf_tensor *const *in, xf_tensor *out,
                          xf_error *err)
{
    xf_graph g;
    xf_graph_init(&g);
    int ids[8];
    int n_in = 0;
    for (int k = 0; k < 8; k++)
        if (in[k]) n_in = k + 1;
    for (int k = 0; k < n_in; k++) {
        char nm[8] = {'i', (char)('0' + k), 0};
        ids[k] = in[k] ? xf_graph_add_input(&g, nm, in[k]->dtype, &in[k]->shape, err) : -1;
        ck_assert(!in[k] || ids[k] >= 0);
    }
    const xf_shape *x = &in[0]->shape;
    int64_t dirs = a->direction == 2 ? 2 : 1, H = a->hidden_size;
    int64_t seq = x->dims[a->layout ? 1 : 0], batch = x->dims[a->layout ? 0 : 1];
    int64_t dy0[4] = {seq, dirs, batch, H}, dy1[4] = {batch, seq, dirs, H};
    int64_t ds0[3] = {dirs, batch, H}, ds1[3] = {batch, dirs, H};
    xf_shape sh[3] = {xf_shape_make(4, a->layout ? dy1 : dy0),
                      xf_shape_make(3, a->layout ? ds1 : ds0),
                      xf_shape_make(3, a->layout ? ds1 : ds0)};
    xf_dtype dt[3] = {XF_F32, XF_F32, XF_F32};
    xf_opaque *o = xf_calloc(1, sizeof *o); /* the graph frees it */
    o->op_type = xf_strdup("LSTM");
    o->domain = xf_strdup("");
    o->kernel = XF_OPAQUE_LSTM;
    o->lstm = *a;
    int node = xf_graph_add_opaque(&g, o, ids, n_in, dt, sh, 3, "lstm", err);
    ck_assert_int_ge(node, 0);
    for (int k = 0; k < 3; k++) xf_graph_mark_output(&g, g.nodes[node].outputs[k], err);
    xf_tensor args[8];
    int n_args = 0;
    for (int k = 0; k < n_in; k++)
        if (in[k]) args[n_args++] = *in[k];
    xf_status st = xf_interp_run(&g, args, n_args, out, err);
    xf_graph_free(&g);
    return st;
}

static xf_tensor *tensor(int rank, const int64_t *dims, const float *v)
{
    xf_tensor *t = calloc(1, sizeof *t);
    xf_shape s = xf_shape_make(rank, dims);
    xf_error err;
    ck_assert_int_eq(xf_tensor_alloc(t, XF_F32, &s, &err), XF_OK);
    if (v) memcpy(t->data, v, xf_tensor_bytes(t));
    else xf_test_fill(t, (uint64_t)(rank * 31 + dims[0] * 7 + dims[rank - 1]), 0);
    return t;
}

static void tensor_drop(xf_tensor *t)
{
    if (!t) return;
    xf_tensor_free(t);
    free(t);
}

static void expect_near(const float *got, const float *want, int64_t n, const char *what)
{
    for (int64_t i = 0; i < n; i++)
        ck_assert_msg(fabsf(got[i] - want[i]) <= 1e-5f + 1e-5f * fabsf(want[i]),
                      "%s[%lld] = %.7g, want %.7g", what, (long long)i, (double)got[i],
                      (double)want[i]);
}

/* hidden 1, input 1, two steps, every weight chosen: the gates by hand */
START_TEST(lstm_by_hand)
{
    int64_t dx[3] = {2, 1, 1}, dw[3] = {1, 4, 1}, db[2] = {1, 8}, ds[3] = {1, 1, 1};
    float xv[2] = {0.5f, -1.0f};
    float w[4] = {0.3f, -0.2f, 0.8f, 0.5f};  /* i, o, f, c */
    float r[4] = {0.1f, 0.4f, -0.3f, 0.7f};
    float b[8] = {0.05f, 0.0f, 0.1f, -0.1f, 0.02f, 0.03f, 0.0f, 0.04f};
    float h0v[1] = {0.2f}, c0v[1] = {-0.4f};
    xf_tensor *in[8] = {tensor(3, dx, xv), tensor(3, dw, w), tensor(3, dw, r), tensor(2, db, b),
                        NULL, tensor(3, ds, h0v), tensor(3, ds, c0v), NULL};
    xf_lstm_attrs a = {1, 0, 0, 0, 0.0f};
    xf_tensor out[3];
    xf_error err;
    ck_assert_msg(run_lstm(&a, in, out, &err) == XF_OK, "%s", err.msg);
    float h = h0v[0], c = c0v[0], y[2];
    for (int t = 0; t < 2; t++) {
        float gi = w[0] * xv[t] + r[0] * h + b[0] + b[4];
        float go = w[1] * xv[t] + r[1] * h + b[1] + b[5];
        float gf = w[2] * xv[t] + r[2] * h + b[2] + b[6];
        float gc = w[3] * xv[t] + r[3] * h + b[3] + b[7];
        c = sig(gf) * c + sig(gi) * tanhf(gc);
        h = sig(go) * tanhf(c);
        y[t] = h;
    }
    expect_near(out[0].data, y, 2, "Y");
    expect_near(out[1].data, &h, 1, "Y_h");
    expect_near(out[2].data, &c, 1, "Y_c");
    for (int k = 0; k < 3; k++) xf_tensor_free(&out[k]);
    for (int k = 0; k < 8; k++) tensor_drop(in[k]);
}
END_TEST

/* X [seq 3, batch 2, in 3], hidden 4; weights for `dirs` directions */
#define SEQ 3
#define BATCH 2
#define IN 3
#define HID 4

static void lstm_inputs(xf_tensor **in, int dirs, int peep)
{
    int64_t dx[3] = {SEQ, BATCH, IN}, dw[3] = {dirs, 4 * HID, IN}, dr[3] = {dirs, 4 * HID, HID};
    int64_t db[2] = {dirs, 8 * HID}, ds[3] = {dirs, BATCH, HID}, dp[2] = {dirs, 3 * HID};
    memset(in, 0, 8 * sizeof *in);
    in[0] = tensor(3, dx, NULL);
    in[1] = tensor(3, dw, NULL);
    in[2] = tensor(3, dr, NULL);
    in[3] = tensor(2, db, NULL);
    in[5] = tensor(3, ds, NULL);
    in[6] = tensor(3, ds, NULL);
    if (peep) in[7] = tensor(2, dp, NULL);
}

/* Direction d's slice of a [dirs, ...] weight as a new one-direction tensor. */
static xf_tensor *dir_slice(const xf_tensor *t, int d)
{
    int64_t dims[XF_MAX_DIMS];
    memcpy(dims, t->shape.dims, sizeof dims);
    dims[0] = 1;
    xf_tensor *s = tensor(t->shape.rank, dims, NULL);
    size_t n = xf_tensor_bytes(s);
    memcpy(s->data, (const char *)t->data + (size_t)d * n, n);
    return s;
}

/* Reverse == forward over the time-reversed sequence (Y reversed too), and
 * bidirectional == forward and reverse side by side, with peepholes. */
START_TEST(lstm_directions)
{
    xf_tensor *bi[8], out_bi[3], out[2][3];
    lstm_inputs(bi, 2, 1);
    xf_lstm_attrs a = {HID, 2, 0, 0, 0.0f};
    xf_error err;
    ck_assert_msg(run_lstm(&a, bi, out_bi, &err) == XF_OK, "%s", err.msg);
    for (int d = 0; d < 2; d++) {
        xf_tensor *one[8] = {NULL};
        one[0] = bi[0];
        for (int k = 1; k < 8; k++)
            if (bi[k]) one[k] = dir_slice(bi[k], d);
        xf_lstm_attrs ad = {HID, d, 0, 0, 0.0f};
        ck_assert_msg(run_lstm(&ad, one, out[d], &err) == XF_OK, "%s", err.msg);
        for (int t = 0; t < SEQ; t++) /* Y [seq, dirs, batch, hid] */
            expect_near((float *)out_bi[0].data + (t * 2 + d) * BATCH * HID,
                        (float *)out[d][0].data + t * BATCH * HID, BATCH * HID, "Y");
        expect_near((float *)out_bi[1].data + d * BATCH * HID, out[d][1].data, BATCH * HID, "Y_h");
        expect_near((float *)out_bi[2].data + d * BATCH * HID, out[d][2].data, BATCH * HID, "Y_c");
        if (d == 1) { /* reverse == forward on the reversed sequence */
            xf_tensor *rx = tensor(3, bi[0]->shape.dims, NULL);
            for (int t = 0; t < SEQ; t++)
                memcpy((float *)rx->data + t * BATCH * IN,
                       (float *)bi[0]->data + (SEQ - 1 - t) * BATCH * IN,
                       sizeof(float) * BATCH * IN);
            xf_tensor *fw[8];
            memcpy(fw, one, sizeof fw);
            fw[0] = rx;
            xf_lstm_attrs af = {HID, 0, 0, 0, 0.0f};
            xf_tensor of[3];
            ck_assert_msg(run_lstm(&af, fw, of, &err) == XF_OK, "%s", err.msg);
            for (int t = 0; t < SEQ; t++)
                expect_near((float *)of[0].data + t * BATCH * HID,
                            (float *)out[1][0].data + (SEQ - 1 - t) * BATCH * HID, BATCH * HID,
                            "reversed Y");
            expect_near(of[1].data, out[1][1].data, BATCH * HID, "reversed Y_h");
            for (int k = 0; k < 3; k++) xf_tensor_free(&of[k]);
            tensor_drop(rx);
        }
        for (int k = 1; k < 8; k++) tensor_drop(one[k]);
        for (int k = 0; k < 3; k++) xf_tensor_free(&out[d][k]);
    }
    for (int k = 0; k < 3; k++) xf_tensor_free(&out_bi[k]);
    for (int k = 0; k < 8; k++) tensor_drop(bi[k]);
}
END_TEST

/* layout 1 == layout 0 with X, Y and the states transposed; sequence_lens
 * stops an entry early (Y zero after, Y_h its last step), as a run over
 * the shorter sequence does; input_forget ties f to 1 - i (changes Y). */
START_TEST(lstm_layout_lengths_forget)
{
    xf_tensor *in[8], o0[3], o1[3];
    lstm_inputs(in, 1, 0);
    xf_lstm_attrs a = {HID, 0, 0, 0, 0.0f};
    xf_error err;
    ck_assert_msg(run_lstm(&a, in, o0, &err) == XF_OK, "%s", err.msg);
    /* layout 1: X [batch, seq, in], states [batch, dirs, hid] */
    int64_t dx[3] = {BATCH, SEQ, IN}, ds[3] = {BATCH, 1, HID};
    xf_tensor *t[8];
    memcpy(t, in, sizeof t);
    t[0] = tensor(3, dx, NULL);
    t[5] = tensor(3, ds, in[5]->data);
    t[6] = tensor(3, ds, in[6]->data);
    for (int s = 0; s < SEQ; s++)
        for (int b = 0; b < BATCH; b++)
            memcpy((float *)t[0]->data + (b * SEQ + s) * IN,
                   (float *)in[0]->data + (s * BATCH + b) * IN, sizeof(float) * IN);
    xf_lstm_attrs a1 = {HID, 0, 1, 0, 0.0f};
    ck_assert_msg(run_lstm(&a1, t, o1, &err) == XF_OK, "%s", err.msg);
    for (int s = 0; s < SEQ; s++)
        for (int b = 0; b < BATCH; b++)
            expect_near((float *)o1[0].data + (b * SEQ + s) * HID,
                        (float *)o0[0].data + (s * BATCH + b) * HID, HID, "layout-1 Y");
    expect_near(o1[1].data, o0[1].data, BATCH * HID, "layout-1 Y_h");
    for (int k = 0; k < 3; k++) xf_tensor_free(&o1[k]);
    tensor_drop(t[0]);
    tensor_drop(t[5]);
    tensor_drop(t[6]);

    /* sequence_lens {3, 1}: entry 1 stops after one step */
    int64_t dl[1] = {BATCH};
    xf_tensor lens;
    xf_shape ls = xf_shape_make(1, dl);
    ck_assert_int_eq(xf_tensor_alloc(&lens, XF_I32, &ls, &err), XF_OK);
    ((int32_t *)lens.data)[0] = SEQ;
    ((int32_t *)lens.data)[1] = 1;
    memcpy(t, in, sizeof t);
    t[4] = &lens;
    ck_assert_msg(run_lstm(&a, t, o1, &err) == XF_OK, "%s", err.msg);
    expect_near(o1[0].data, o0[0].data, BATCH * HID, "Y at step 0"); /* both ran step 0 */
    float zero[HID] = {0};
    for (int s = 1; s < SEQ; s++) {
        expect_near((float *)o1[0].data + s * BATCH * HID, (float *)o0[0].data + s * BATCH * HID,
                    HID, "entry 0's Y");
        expect_near((float *)o1[0].data + (s * BATCH + 1) * HID, zero, HID, "entry 1's Y past its end");
    }
    expect_near(o1[1].data, o0[1].data, HID, "entry 0's Y_h");
    expect_near((float *)o1[1].data + HID, (float *)o0[0].data + HID, HID, "entry 1's Y_h");
    for (int k = 0; k < 3; k++) xf_tensor_free(&o1[k]);
    xf_tensor_free(&lens);

    /* input_forget: a different function (f = 1 - i) */
    xf_lstm_attrs af = {HID, 0, 0, 1, 0.0f};
    ck_assert_msg(run_lstm(&af, in, o1, &err) == XF_OK, "%s", err.msg);
    double diff = 0;
    for (int i = 0; i < BATCH * HID; i++)
        diff += fabs(((float *)o1[2].data)[i] - ((float *)o0[2].data)[i]);
    ck_assert_msg(diff > 1e-3, "input_forget changed nothing");
    for (int k = 0; k < 3; k++) xf_tensor_free(&o1[k]);

    /* a sequence length past the sequence is refused by name */
    memcpy(t, in, sizeof t);
    ck_assert_int_eq(xf_tensor_alloc(&lens, XF_I32, &ls, &err), XF_OK);
    ((int32_t *)lens.data)[0] = SEQ + 1;
    ((int32_t *)lens.data)[1] = 1;
    t[4] = &lens;
    ck_assert_int_ne(run_lstm(&a, t, o1, &err), XF_OK);
    xf_test_expect_contains(err.msg, "sequence_lens[0] = 4");
    xf_tensor_free(&lens);
    for (int k = 0; k < 3; k++) xf_tensor_free(&o0[k]);
    for (int k = 0; k < 8; k++) tensor_drop(in[k]);
}
END_TEST

/* -------------------------------------------------------------------- If */

/* A branch: y = op(x) with x the captured outer value "x" [3]. */
static void branch(xf_graph *b, xf_op op, int64_t n_out)
{
    xf_error err;
    xf_graph_init(b);
    int64_t d[1] = {3};
    xf_shape s = xf_shape_make(1, d);
    int x = xf_graph_add_input(b, "x", XF_F32, &s, &err);
    xf_params p = xf_params_default();
    int y = xf_graph_op(b, op, &p, &x, 1, &err);
    if (n_out > 3) { /* an output the node does not declare */
        xf_params c = xf_params_default();
        c.axis = 0;
        int two[2] = {y, y};
        y = xf_graph_op(b, XF_OP_CONCAT, &c, two, 2, &err);
    }
    ck_assert_int_ge(y, 0);
    xf_graph_mark_output(b, y, &err);
}

/* cond (dtype cdt) and x [3] -> If(then relu(x), else neg(x)) -> y */
static void if_graph(xf_graph *g, xf_dtype cdt, int bad_else)
{
    xf_error err;
    xf_graph_init(g);
    int64_t d[1] = {3};
    xf_shape s = xf_shape_make(1, d), scalar = xf_shape_make(0, d);
    int cond = xf_graph_add_input(g, "cond", cdt, &scalar, &err);
    int x = xf_graph_add_input(g, "x", XF_F32, &s, &err);
    xf_opaque *o = xf_calloc(1, sizeof *o); /* the graph frees it */
    o->op_type = xf_strdup("If");
    o->domain = xf_strdup("");
    o->kernel = XF_OPAQUE_IF;
    o->n_branches = 2;
    o->branches = xf_calloc(2, sizeof *o->branches);
    branch(&o->branches[0], XF_OP_RELU, 3);
    branch(&o->branches[1], XF_OP_NEG, bad_else ? 6 : 3);
    o->n_captured = 1;
    o->captured = xf_calloc(1, sizeof *o->captured);
    o->captured[0] = xf_strdup("x");
    int ins[2] = {cond, x};
    xf_dtype dt = XF_F32;
    int node = xf_graph_add_opaque(g, o, ins, 2, &dt, &s, 1, "if", &err);
    ck_assert_int_ge(node, 0);
    xf_graph_mark_output(g, g->nodes[node].outputs[0], &err);
}

static void run_if(const xf_graph *g, xf_dtype cdt, int truth, float *y)
{
    int64_t d[1] = {3};
    xf_shape s = xf_shape_make(1, d), scalar = xf_shape_make(0, d);
    xf_tensor in[2], out;
    xf_error err;
    ck_assert_int_eq(xf_tensor_alloc(&in[0], cdt, &scalar, &err), XF_OK);
    if (cdt == XF_BOOL) *(uint8_t *)in[0].data = (uint8_t)truth;
    else *(int64_t *)in[0].data = truth ? 7 : 0;
    ck_assert_int_eq(xf_tensor_alloc(&in[1], XF_F32, &s, &err), XF_OK);
    float xv[3] = {-1.5f, 0.0f, 2.0f};
    memcpy(in[1].data, xv, sizeof xv);
    ck_assert_msg(xf_interp_run(g, in, 2, &out, &err) == XF_OK, "%s", err.msg);
    memcpy(y, out.data, sizeof(float) * 3);
    xf_tensor_free(&in[0]);
    xf_tensor_free(&in[1]);
    xf_tensor_free(&out);
}

START_TEST(if_runs_the_chosen_branch)
{
    static const float relu[3] = {0.0f, 0.0f, 2.0f}, neg[3] = {1.5f, -0.0f, -2.0f};
    xf_dtype types[2] = {XF_BOOL, XF_I64};
    for (int k = 0; k < 2; k++) {
        xf_graph g, c;
        if_graph(&g, types[k], 0);
        float y[3];
        run_if(&g, types[k], 1, y);
        expect_near(y, relu, 3, "then");
        run_if(&g, types[k], 0, y);
        expect_near(y, neg, 3, "else");
        /* a clone (shared weights too) carries its own branches */
        xf_error err;
        ck_assert_int_eq(xf_graph_clone_shared(&g, &c, &err), XF_OK);
        xf_graph_free(&g);
        run_if(&c, types[k], 0, y);
        expect_near(y, neg, 3, "cloned else");
        xf_graph_free(&c);
    }
}
END_TEST

START_TEST(if_branch_disagreeing_with_the_node_fails)
{
    xf_graph g;
    if_graph(&g, XF_BOOL, 1);
    float y[3];
    run_if(&g, XF_BOOL, 1, y); /* the then branch is fine */
    int64_t d[1] = {3};
    xf_shape s = xf_shape_make(1, d), scalar = xf_shape_make(0, d);
    xf_tensor in[2], out;
    xf_error err;
    ck_assert_int_eq(xf_tensor_alloc(&in[0], XF_BOOL, &scalar, &err), XF_OK);
    *(uint8_t *)in[0].data = 0;
    ck_assert_int_eq(xf_tensor_alloc(&in[1], XF_F32, &s, &err), XF_OK);
    memset(in[1].data, 0, xf_tensor_bytes(&in[1]));
    ck_assert_int_eq(xf_interp_run(&g, in, 2, &out, &err), XF_ERR_SHAPE);
    xf_test_expect_contains(err.msg, "'if'");
    xf_test_expect_contains(err.msg, "else branch's output 0 is float32 [6]");
    xf_tensor_free(&in[0]);
    xf_tensor_free(&in[1]);
    xf_graph_free(&g);
}
END_TEST

/* ------------------------------------------------------ shape arithmetic */

/* A rank-0 or 1-D int64 tensor of n values (caller frees). */
static xf_tensor i64s(int rank, int64_t n, const int64_t *v)
{
    xf_tensor t;
    xf_error err;
    xf_shape s = xf_shape_make(rank, &n);
    ck_assert_int_eq(xf_tensor_alloc(&t, XF_I64, &s, &err), XF_OK);
    memcpy(t.data, v, xf_tensor_bytes(&t));
    return t;
}

/* Runs kernel k on in[0 .. n) into *out (allocated here, caller frees). */
static xf_status calc(xf_opaque_kernel k, const xf_opaque_calc *c, int n, const xf_tensor *in,
                      xf_tensor *out, xf_error *err)
{
    xf_opaque o;
    memset(&o, 0, sizeof o);
    o.kernel = k;
    if (c) o.calc = *c;
    const xf_tensor *p[4] = {&in[0], &in[1], &in[2], &in[3]};
    xf_dtype dt;
    xf_shape sh;
    memset(out, 0, sizeof *out);
    xf_status st = xf_opaque_calc_infer(&o, n, p, &dt, &sh, err);
    if (!st) st = xf_tensor_alloc(out, dt, &sh, err);
    if (!st) st = xf_opaque_calc_run(&o, n, p, out, err);
    return st;
}

START_TEST(range_counts_like_onnx)
{
    /* (start, limit, delta) -> elements: ONNX's max(ceil((limit-start)/delta), 0) */
    static const int64_t cases[][4] = {{0, 5, 1, 5},  {0, 5, 2, 3},   {10, 4, -3, 2},
                                       {3, 3, 1, 0},  {5, 0, 1, 0},   {-2, 7, 4, 3},
                                       {0, -5, -1, 5}, {7, 7, -2, 0}};
    xf_error err;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        xf_tensor in[3] = {i64s(0, 1, &cases[c][0]), i64s(0, 1, &cases[c][1]),
                           i64s(0, 1, &cases[c][2])};
        xf_tensor out;
        ck_assert_msg(calc(XF_OPAQUE_RANGE, NULL, 3, in, &out, &err) == XF_OK, "%s", err.msg);
        ck_assert_int_eq(xf_shape_numel(&out.shape), cases[c][3]);
        for (int64_t i = 0; i < cases[c][3]; i++)
            ck_assert_int_eq(((int64_t *)out.data)[i], cases[c][0] + i * cases[c][2]);
        xf_tensor_free(&out);
        for (int i = 0; i < 3; i++) xf_tensor_free(&in[i]);
    }
    /* float: 0.5, 1.25, 2.0 from (0.5, 2.5, 0.75) */
    float fv[3] = {0.5f, 2.5f, 0.75f};
    xf_tensor f[3];
    for (int i = 0; i < 3; i++) {
        xf_shape s0 = xf_shape_make(0, NULL);
        ck_assert_int_eq(xf_tensor_alloc(&f[i], XF_F32, &s0, &err), XF_OK);
        *(float *)f[i].data = fv[i];
    }
    xf_tensor out;
    ck_assert_int_eq(calc(XF_OPAQUE_RANGE, NULL, 3, f, &out, &err), XF_OK);
    float want[3] = {0.5f, 1.25f, 2.0f};
    expect_near(out.data, want, 3, "range");
    ck_assert_int_eq(xf_shape_numel(&out.shape), 3);
    xf_tensor_free(&out);
    /* a zero step is refused */
    *(float *)f[2].data = 0;
    ck_assert_int_eq(calc(XF_OPAQUE_RANGE, NULL, 3, f, &out, &err), XF_ERR_INVALID);
    xf_test_expect_contains(err.msg, "delta");
    xf_tensor_free(&out);
    for (int i = 0; i < 3; i++) xf_tensor_free(&f[i]);
}
END_TEST

START_TEST(mod_follows_the_divisor_or_the_dividend)
{
    int64_t a[4] = {7, -7, 7, -7}, b[4] = {3, 3, -3, -3};
    int64_t py[4] = {1, 2, -2, -1}, c_fmod[4] = {1, -1, 1, -1};
    xf_tensor in[2] = {i64s(1, 4, a), i64s(1, 4, b)}, out;
    xf_error err;
    xf_opaque_calc c = {0};
    ck_assert_int_eq(calc(XF_OPAQUE_MOD, &c, 2, in, &out, &err), XF_OK);
    xf_test_expect_i64(&out, py, 4);
    xf_tensor_free(&out);
    c.fmod = 1;
    ck_assert_int_eq(calc(XF_OPAQUE_MOD, &c, 2, in, &out, &err), XF_OK);
    xf_test_expect_i64(&out, c_fmod, 4);
    xf_tensor_free(&out);
    /* broadcast of a scalar divisor; division by zero refused */
    int64_t four = 4, zero = 0;
    xf_tensor_free(&in[1]);
    in[1] = i64s(0, 1, &four);
    c.fmod = 0;
    int64_t want[4] = {3, 1, 3, 1};
    ck_assert_int_eq(calc(XF_OPAQUE_MOD, &c, 2, in, &out, &err), XF_OK);
    xf_test_expect_i64(&out, want, 4);
    xf_tensor_free(&out);
    xf_tensor_free(&in[1]);
    in[1] = i64s(0, 1, &zero);
    ck_assert_int_eq(calc(XF_OPAQUE_MOD, &c, 2, in, &out, &err), XF_ERR_INVALID);
    xf_tensor_free(&out);
    for (int i = 0; i < 2; i++) xf_tensor_free(&in[i]);
}
END_TEST

START_TEST(scatter_nd_writes_and_reduces)
{
    /* data [2,3]; indices [[1],[0]] write whole rows; [[0,2]] one element */
    int64_t data[6] = {1, 2, 3, 4, 5, 6}, rows[2] = {1, 0}, upd[6] = {10, 20, 30, 40, 50, 60};
    xf_error err;
    xf_tensor in[3], out;
    xf_shape s23 = xf_shape_make(2, (int64_t[]){2, 3}), s21 = xf_shape_make(2, (int64_t[]){2, 1});
    ck_assert_int_eq(xf_tensor_alloc(&in[0], XF_I64, &s23, &err), XF_OK);
    ck_assert_int_eq(xf_tensor_alloc(&in[1], XF_I64, &s21, &err), XF_OK);
    ck_assert_int_eq(xf_tensor_alloc(&in[2], XF_I64, &s23, &err), XF_OK);
    memcpy(in[0].data, data, sizeof data);
    memcpy(in[1].data, rows, sizeof rows);
    memcpy(in[2].data, upd, sizeof upd);
    ck_assert_int_eq(calc(XF_OPAQUE_SCATTER_ND, NULL, 3, in, &out, &err), XF_OK);
    int64_t want[6] = {40, 50, 60, 10, 20, 30};
    xf_test_expect_i64(&out, want, 6);
    xf_tensor_free(&out);
    xf_opaque_calc add = {.reduction = 1};
    ck_assert_int_eq(calc(XF_OPAQUE_SCATTER_ND, &add, 3, in, &out, &err), XF_OK);
    int64_t want_add[6] = {41, 52, 63, 14, 25, 36};
    xf_test_expect_i64(&out, want_add, 6);
    xf_tensor_free(&out);
    /* an index out of range is refused, not written */
    ((int64_t *)in[1].data)[0] = 2;
    ck_assert_int_eq(calc(XF_OPAQUE_SCATTER_ND, NULL, 3, in, &out, &err), XF_ERR_INVALID);
    xf_test_expect_contains(err.msg, "out of range");
    xf_tensor_free(&out);
    for (int i = 0; i < 3; i++) xf_tensor_free(&in[i]);
}
END_TEST

/* The interpreter runs a Range whose size a graph recorded at one input
 * value; at another value the node is refused by name rather than run
 * into a buffer of the wrong size. */
START_TEST(range_of_another_size_is_refused_by_name)
{
    xf_graph g;
    xf_graph_init(&g);
    xf_error err;
    xf_shape s0 = xf_shape_make(0, NULL);
    int ids[3];
    for (int i = 0; i < 3; i++) {
        char nm[4] = {'a', (char)('0' + i), 0};
        ids[i] = xf_graph_add_input(&g, nm, XF_I64, &s0, &err);
    }
    xf_opaque *o = xf_calloc(1, sizeof *o);
    o->op_type = xf_strdup("Range");
    o->domain = xf_strdup("");
    o->kernel = XF_OPAQUE_RANGE;
    int64_t four = 4;
    xf_shape s4 = xf_shape_make(1, &four);
    xf_dtype dt = XF_I64;
    int node = xf_graph_add_opaque(&g, o, ids, 3, &dt, &s4, 1, "pos", &err);
    ck_assert_int_ge(node, 0);
    ck_assert_int_eq(xf_graph_mark_output(&g, g.nodes[node].outputs[0], &err), XF_OK);
    int64_t v[3] = {0, 4, 1};
    xf_tensor in[3] = {i64s(0, 1, &v[0]), i64s(0, 1, &v[1]), i64s(0, 1, &v[2])}, out;
    ck_assert_msg(xf_interp_run(&g, in, 3, &out, &err) == XF_OK, "%s", err.msg);
    int64_t want[4] = {0, 1, 2, 3};
    xf_test_expect_i64(&out, want, 4);
    xf_tensor_free(&out);
    ((int64_t *)in[1].data)[0] = 6;
    ck_assert_int_eq(xf_interp_run(&g, in, 3, &out, &err), XF_ERR_SHAPE);
    xf_test_expect_contains(err.msg, "'pos'");
    xf_test_expect_contains(err.msg, "depends on data");
    for (int i = 0; i < 3; i++) xf_tensor_free(&in[i]);
    xf_graph_free(&g);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("ops_opaque");
    TCase *t = tcase_create("opaque");
    tcase_add_test(t, lstm_by_hand);
    tcase_add_test(t, lstm_directions);
    tcase_add_test(t, lstm_layout_lengths_forget);
    tcase_add_test(t, if_runs_the_chosen_branch);
    tcase_add_test(t, if_branch_disagreeing_with_the_node_fails);
    tcase_add_test(t, range_counts_like_onnx);
    tcase_add_test(t, mod_follows_the_divisor_or_the_dividend);
    tcase_add_test(t, scatter_nd_writes_and_reduces);
    tcase_add_test(t, range_of_another_size_is_refused_by_name);
    suite_add_tcase(s, t);
    return xf_test_run(s);
}
