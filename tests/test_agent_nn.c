/*
 * test_agent_nn.c — the neural-network toolkit of agent/ (agent/nn/nn.h).
 * Every backward pass is compared with central finite differences of its
 * forward (random inputs from a fixed seed, loss Σ r·out accumulated in
 * double, relative error bound): linear (input, weights, bias), the
 * activations, layer norm, softmax and log-softmax with a mask, the
 * categorical cross-entropy and entropy, the LSTM cell (all six inputs),
 * the MDN negative log-likelihood, an MLP end to end, MSE and binary
 * cross-entropy on logits. Forward values are checked against independent
 * computations: a naive matmul,
 * a hand-computed Gaussian NLL (K = 1), normalised rows, masked entries.
 * Plus: Adam minimises a quadratic (and its first step is lr·sign(g)),
 * weight decay, gradient clipping, the parameter store's errors,
 * checkpoints (byte-identical round trip, errors naming the tensor,
 * corruption), determinism with a seed, and sampling (categorical
 * frequencies, MDN temperature).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agent/nn/nn.h"
#include "testutil.h"

/* ------------------------------------------------------------ helpers */

#define GC_H 1e-2f     /* finite-difference step */
#define GC_FLOOR 1e-2  /* relative-error denominator floor */
#define GC_TOL 1e-2    /* largest accepted relative error */

static float *rnd(size_t n, xf_rng *r, float lo, float hi)
{
    float *x = malloc(n * sizeof(float));
    ck_assert_ptr_nonnull(x);
    for (size_t i = 0; i < n; i++) x[i] = xf_rng_uniform(r, lo, hi);
    return x;
}

static float *zeros(size_t n)
{
    float *x = calloc(n, sizeof(float));
    ck_assert_ptr_nonnull(x);
    return x;
}

static double dot(const float *a, const float *b, size_t n)
{
    double s = 0.0;
    for (size_t i = 0; i < n; i++) s += (double)a[i] * b[i];
    return s;
}

static void expect_grad(const char *what, xf_nn_loss_fn f, void *u, float *x, const float *g,
                        size_t n)
{
    size_t at = 0;
    double e = xf_nn_gradcheck(f, u, x, g, n, GC_H, GC_FLOOR, &at);
    ck_assert_msg(e < GC_TOL, "%s: relative error %g at entry %zu (analytic %g)", what, e, at,
                  (double)g[at]);
}

static void expect_finite(const char *what, const float *x, size_t n)
{
    for (size_t i = 0; i < n; i++) ck_assert_msg(isfinite(x[i]), "%s[%zu] = %g", what, i, (double)x[i]);
}

/* ------------------------------------------------------------ linear */

typedef struct lin_ctx {
    int B, I, O;
    float *in, *w, *b, *out, *r;
} lin_ctx;

static double lin_loss(void *u)
{
    lin_ctx *c = u;
    xf_nn_linear_forward(c->out, c->in, c->w, c->b, c->B, c->I, c->O);
    return dot(c->out, c->r, (size_t)c->B * (size_t)c->O);
}

START_TEST(linear_forward_matches_naive)
{
    xf_rng r;
    xf_rng_seed(&r, 11);
    int B = 7, I = 13, O = 5;
    float *in = rnd((size_t)B * I, &r, -1, 1), *w = rnd((size_t)I * O, &r, -1, 1);
    float *b = rnd((size_t)O, &r, -1, 1), *out = zeros((size_t)B * O);
    xf_nn_linear_forward(out, in, w, b, B, I, O);
    for (int i = 0; i < B; i++)
        for (int o = 0; o < O; o++) {
            double s = b[o];
            for (int k = 0; k < I; k++) s += (double)in[i * I + k] * w[k * O + o];
            ck_assert_msg(fabs(out[i * O + o] - s) < 1e-5, "out[%d,%d] = %g, naive %g", i, o,
                          (double)out[i * O + o], s);
        }
    /* Without bias. */
    xf_nn_linear_forward(out, in, w, NULL, B, I, O);
    double s = 0.0;
    for (int k = 0; k < I; k++) s += (double)in[2 * I + k] * w[k * O + 3];
    ck_assert(fabs(out[2 * O + 3] - s) < 1e-5);
    free(in), free(w), free(b), free(out);
}
END_TEST

START_TEST(linear_gradients)
{
    xf_rng r;
    xf_rng_seed(&r, 12);
    lin_ctx c = {6, 9, 4, NULL, NULL, NULL, NULL, NULL};
    size_t ni = (size_t)c.B * c.I, nw = (size_t)c.I * c.O, no = (size_t)c.B * c.O;
    c.in = rnd(ni, &r, -1, 1), c.w = rnd(nw, &r, -1, 1), c.b = rnd((size_t)c.O, &r, -1, 1);
    c.out = zeros(no), c.r = rnd(no, &r, -1, 1);
    float *din = zeros(ni), *dw = zeros(nw), *db = zeros((size_t)c.O);
    lin_loss(&c);
    xf_nn_linear_backward(din, dw, db, c.r, c.in, c.w, c.B, c.I, c.O);
    expect_grad("linear d/din", lin_loss, &c, c.in, din, ni);
    expect_grad("linear d/dw", lin_loss, &c, c.w, dw, nw);
    expect_grad("linear d/db", lin_loss, &c, c.b, db, (size_t)c.O);
    /* Accumulation: a second backward doubles every gradient. */
    float d0 = din[3], w0 = dw[5], b0 = db[1];
    xf_nn_linear_backward(din, dw, db, c.r, c.in, c.w, c.B, c.I, c.O);
    ck_assert(fabsf(din[3] - 2 * d0) < 1e-5f && fabsf(dw[5] - 2 * w0) < 1e-5f &&
              fabsf(db[1] - 2 * b0) < 1e-5f);
    free(c.in), free(c.w), free(c.b), free(c.out), free(c.r), free(din), free(dw), free(db);
}
END_TEST

/* -------------------------------------------------------- activations */

typedef struct act_ctx {
    xf_nn_act a;
    size_t n;
    float *in, *out, *r;
} act_ctx;

static double act_loss(void *u)
{
    act_ctx *c = u;
    xf_nn_act_forward(c->a, c->out, c->in, c->n);
    return dot(c->out, c->r, c->n);
}

START_TEST(activation_gradients)
{
    xf_rng r;
    xf_rng_seed(&r, 13);
    size_t n = 40;
    for (int a = XF_NN_ACT_NONE; a <= XF_NN_ACT_SIGMOID; a++) {
        act_ctx c = {(xf_nn_act)a, n, rnd(n, &r, -3, 3), zeros(n), rnd(n, &r, -1, 1)};
        /* Keep relu's kink away from the finite-difference step. */
        for (size_t i = 0; i < n; i++)
            if (fabsf(c.in[i]) < 0.1f) c.in[i] = c.in[i] < 0 ? -0.5f : 0.5f;
        float *din = zeros(n);
        act_loss(&c);
        xf_nn_act_backward(c.a, din, c.r, c.out, n);
        expect_grad(xf_nn_act_name(c.a), act_loss, &c, c.in, din, n);
        free(c.in), free(c.out), free(c.r), free(din);
    }
    /* Values and in-place use; sigmoid saturates without NaN. */
    float x[4] = {-2.0f, 0.0f, 3.0f, -100.0f}, y[4];
    xf_nn_relu_forward(y, x, 4);
    ck_assert(y[0] == 0.0f && y[1] == 0.0f && y[2] == 3.0f);
    xf_nn_sigmoid_forward(y, x, 4);
    ck_assert(fabsf(y[2] - 1.0f / (1.0f + expf(-3.0f))) < 1e-6f && y[3] >= 0.0f && y[3] < 1e-30f);
    xf_nn_tanh_forward(x, x, 4);
    ck_assert(fabsf(x[0] - tanhf(-2.0f)) < 1e-7f);
    ck_assert_str_eq(xf_nn_act_name(XF_NN_ACT_SIGMOID), "sigmoid");
}
END_TEST

/* --------------------------------------------------------- layer norm */

typedef struct ln_ctx {
    int B, C;
    float *in, *g, *b, *out, *mean, *rstd, *r;
} ln_ctx;

static double ln_loss(void *u)
{
    ln_ctx *c = u;
    xf_nn_layernorm_forward(c->out, c->mean, c->rstd, c->in, c->g, c->b, c->B, c->C);
    return dot(c->out, c->r, (size_t)c->B * (size_t)c->C);
}

START_TEST(layernorm_values_and_gradients)
{
    xf_rng r;
    xf_rng_seed(&r, 14);
    ln_ctx c = {5, 8, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    size_t n = (size_t)c.B * c.C;
    c.in = rnd(n, &r, -2, 2), c.g = rnd((size_t)c.C, &r, 0.5f, 1.5f);
    c.b = rnd((size_t)c.C, &r, -1, 1), c.out = zeros(n), c.r = rnd(n, &r, -1, 1);
    c.mean = zeros((size_t)c.B), c.rstd = zeros((size_t)c.B);
    float *din = zeros(n), *dg = zeros((size_t)c.C), *dbeta = zeros((size_t)c.C);
    ln_loss(&c);
    /* (out - beta) / gamma has mean 0 and variance ≈ 1 per row. */
    for (int i = 0; i < c.B; i++) {
        double m = 0, v = 0;
        for (int j = 0; j < c.C; j++) m += (c.out[i * c.C + j] - c.b[j]) / c.g[j];
        m /= c.C;
        for (int j = 0; j < c.C; j++) {
            double z = (c.out[i * c.C + j] - c.b[j]) / c.g[j] - m;
            v += z * z;
        }
        ck_assert_msg(fabs(m) < 1e-5 && fabs(v / c.C - 1.0) < 1e-3, "row %d: mean %g var %g", i, m,
                      v / c.C);
    }
    xf_nn_layernorm_backward(din, dg, dbeta, c.r, c.in, c.mean, c.rstd, c.g, c.B, c.C);
    expect_grad("layernorm d/din", ln_loss, &c, c.in, din, n);
    expect_grad("layernorm d/dgamma", ln_loss, &c, c.g, dg, (size_t)c.C);
    expect_grad("layernorm d/dbeta", ln_loss, &c, c.b, dbeta, (size_t)c.C);
    free(c.in), free(c.g), free(c.b), free(c.out), free(c.mean), free(c.rstd), free(c.r);
    free(din), free(dg), free(dbeta);
}
END_TEST

/* ----------------------------------------------------------- softmax */

typedef struct sm_ctx {
    int B, C, log;
    const uint8_t *mask;
    float *logits, *out, *r;
} sm_ctx;

/* Σ r·out over allowed entries (masked log-probs are -inf). */
static double sm_loss(void *u)
{
    sm_ctx *c = u;
    if (c->log)
        xf_nn_log_softmax_forward(c->out, c->logits, c->mask, c->B, c->C);
    else
        xf_nn_softmax_forward(c->out, c->logits, c->mask, c->B, c->C);
    double s = 0.0;
    for (size_t i = 0; i < (size_t)c->B * (size_t)c->C; i++)
        if (!c->mask || c->mask[i]) s += (double)c->out[i] * c->r[i];
    return s;
}

START_TEST(softmax_masked_gradients)
{
    xf_rng r;
    xf_rng_seed(&r, 15);
    enum { B = 4, C = 7 };
    /* Row 3 has every entry masked. */
    uint8_t mask[B * C];
    for (int i = 0; i < B * C; i++) mask[i] = (uint8_t)(i < 3 * C && (i % 3) != 1);
    for (int lg = 0; lg < 2; lg++) {
        for (int m = 0; m < 2; m++) {
            sm_ctx c = {B, C, lg, m ? mask : NULL, rnd(B * C, &r, -3, 3), zeros(B * C),
                        rnd(B * C, &r, -1, 1)};
            float *dl = zeros(B * C);
            sm_loss(&c);
            for (int i = 0; i < B; i++) {
                double s = 0.0;
                for (int j = 0; j < C; j++) {
                    float o = c.out[i * C + j];
                    int allowed = !m || mask[i * C + j];
                    if (!allowed)
                        ck_assert_msg(lg ? (isinf(o) && o < 0) : o == 0.0f, "masked entry %g", (double)o);
                    s += lg ? (allowed ? exp(o) : 0.0) : o;
                }
                ck_assert_msg(fabs(s - ((m && i == 3) ? 0.0 : 1.0)) < 1e-5, "row %d sums to %g", i, s);
            }
            if (lg)
                xf_nn_log_softmax_backward(dl, c.r, c.out, B, C);
            else
                xf_nn_softmax_backward(dl, c.r, c.out, B, C);
            expect_finite("dlogits", dl, B * C);
            if (m)
                for (int i = 0; i < B * C; i++)
                    if (!mask[i]) ck_assert_msg(dl[i] == 0.0f, "masked gradient %d = %g", i, (double)dl[i]);
            expect_grad(lg ? "log_softmax d/dlogits" : "softmax d/dlogits", sm_loss, &c, c.logits,
                        dl, B * C);
            free(c.logits), free(c.out), free(c.r), free(dl);
        }
    }
    /* Stable for huge logits. */
    float big[3] = {1000.0f, 999.0f, -1000.0f}, p[3];
    xf_nn_softmax_forward(p, big, NULL, 1, 3);
    ck_assert(fabsf(p[0] - 1.0f / (1.0f + expf(-1.0f))) < 1e-6f && p[2] == 0.0f);
}
END_TEST

/* Policy loss through log-softmax: Σ_b w_b·ce_b − β·Σ_b entropy_b. */
typedef struct pol_ctx {
    int B, C;
    const uint8_t *mask;
    const int *target;
    float *logits, *logp, *ce, *ent, *w;
} pol_ctx;

static double pol_loss(void *u)
{
    pol_ctx *c = u;
    xf_nn_log_softmax_forward(c->logp, c->logits, c->mask, c->B, c->C);
    xf_nn_cross_entropy_forward(c->ce, c->logp, c->target, c->B, c->C);
    xf_nn_entropy_forward(c->ent, c->logp, c->B, c->C);
    double s = 0.0;
    for (int i = 0; i < c->B; i++) s += (double)c->w[i] * c->ce[i] - 0.3 * c->ent[i];
    return s;
}

START_TEST(policy_loss_gradients)
{
    xf_rng r;
    xf_rng_seed(&r, 16);
    enum { B = 3, C = 6 };
    uint8_t mask[B * C];
    for (int i = 0; i < B * C; i++) mask[i] = (uint8_t)((i % 4) != 2);
    int target[B] = {0, 5, 3};
    float dent[B];
    pol_ctx c = {B, C, mask, target, rnd(B * C, &r, -2, 2), zeros(B * C), zeros(B), zeros(B),
                 rnd(B, &r, 0.5f, 1.5f)};
    pol_loss(&c);
    /* Independent values: ce = lse - logit[target]; entropy of uniform over allowed. */
    for (int i = 0; i < B; i++) {
        double s = 0;
        for (int j = 0; j < C; j++)
            if (mask[i * C + j]) s += exp(c.logits[i * C + j]);
        ck_assert(fabs(c.ce[i] - (log(s) - c.logits[i * C + target[i]])) < 1e-5);
        dent[i] = -0.3f;
    }
    float *dlogp = zeros(B * C), *dl = zeros(B * C);
    xf_nn_cross_entropy_backward(dlogp, c.w, target, B, C);
    xf_nn_entropy_backward(dlogp, dent, c.logp, B, C);
    xf_nn_log_softmax_backward(dl, dlogp, c.logp, B, C);
    expect_finite("policy dlogits", dl, B * C);
    expect_grad("cross-entropy + entropy d/dlogits", pol_loss, &c, c.logits, dl, B * C);
    /* Uniform logits: entropy = log(allowed count). */
    float u[4] = {0.5f, 0.5f, 0.5f, 0.5f}, lp[4], h;
    uint8_t m3[4] = {1, 0, 1, 1};
    xf_nn_log_softmax_forward(lp, u, m3, 1, 4);
    xf_nn_entropy_forward(&h, lp, 1, 4);
    ck_assert(fabsf(h - logf(3.0f)) < 1e-6f);
    ck_assert_int_eq(xf_nn_argmax(c.logits, NULL, C), xf_nn_argmax(c.logits, NULL, C));
    float am[3] = {5.0f, 1.0f, 2.0f};
    uint8_t amask[3] = {0, 1, 1}, none[3] = {0, 0, 0};
    ck_assert_int_eq(xf_nn_argmax(am, NULL, 3), 0);
    ck_assert_int_eq(xf_nn_argmax(am, amask, 3), 2);
    ck_assert_int_eq(xf_nn_argmax(am, none, 3), -1);
    free(c.logits), free(c.logp), free(c.ce), free(c.ent), free(c.w), free(dlogp), free(dl);
}
END_TEST

START_TEST(categorical_sampling)
{
    xf_rng r;
    xf_rng_seed(&r, 17);
    float p[4] = {0.2f, 0.0f, 0.5f, 0.3f}, zero[2] = {0, 0};
    int cnt[4] = {0, 0, 0, 0}, n = 20000;
    for (int i = 0; i < n; i++) {
        int k = xf_nn_categorical_sample(p, 4, &r);
        ck_assert(k >= 0 && k < 4);
        cnt[k]++;
    }
    ck_assert_int_eq(cnt[1], 0);
    for (int k = 0; k < 4; k++)
        ck_assert_msg(fabs((double)cnt[k] / n - p[k]) < 0.02, "component %d drawn %d times", k, cnt[k]);
    ck_assert_int_eq(xf_nn_categorical_sample(zero, 2, &r), -1);
}
END_TEST

/* --------------------------------------------------------------- MSE */

typedef struct mse_ctx {
    size_t n;
    float *pred, *target;
} mse_ctx;

static double mse_loss(void *u)
{
    mse_ctx *c = u;
    return 3.0 * xf_nn_mse_forward(c->pred, c->target, c->n);
}

static double bce_loss(void *u)
{
    mse_ctx *c = u;
    return 3.0 * xf_nn_bce_logits_forward(c->pred, c->target, c->n);
}

START_TEST(bce_values_and_gradient)
{
    /* −[t log σ(x) + (1−t) log(1−σ(x))] by hand; huge logits stay finite. */
    float x[3] = {0.5f, -2.0f, 80.0f}, t[3] = {1.0f, 0.25f, 0.0f};
    double s = 0;
    for (int i = 0; i < 2; i++) {
        double sg = 1 / (1 + exp(-(double)x[i]));
        s -= t[i] * log(sg) + (1 - t[i]) * log(1 - sg);
    }
    s += 80.0; /* t = 0: −log(1 − σ(80)) ≈ 80 */
    ck_assert_msg(fabs(xf_nn_bce_logits_forward(x, t, 3) - s / 3) < 1e-5, "bce %g, by hand %g",
                  (double)xf_nn_bce_logits_forward(x, t, 3), s / 3);
    xf_rng r;
    xf_rng_seed(&r, 25);
    mse_ctx c = {13, rnd(13, &r, -3, 3), rnd(13, &r, 0, 1)};
    float *g = zeros(13);
    xf_nn_bce_logits_backward(g, 3.0f, c.pred, c.target, c.n);
    expect_grad("bce d/dlogits", bce_loss, &c, c.pred, g, c.n);
    free(c.pred), free(c.target), free(g);
}
END_TEST

START_TEST(mse_values_and_gradient)
{
    float a[3] = {1.0f, 2.0f, 4.0f}, b[3] = {0.0f, 2.0f, 1.0f};
    ck_assert(fabsf(xf_nn_mse_forward(a, b, 3) - 10.0f / 3.0f) < 1e-6f);
    xf_rng r;
    xf_rng_seed(&r, 18);
    mse_ctx c = {17, rnd(17, &r, -1, 1), rnd(17, &r, -1, 1)};
    float *g = zeros(17);
    xf_nn_mse_backward(g, 3.0f, c.pred, c.target, c.n);
    expect_grad("mse d/dpred", mse_loss, &c, c.pred, g, c.n);
    free(c.pred), free(c.target), free(g);
}
END_TEST

/* -------------------------------------------------------------- LSTM */

typedef struct lstm_ctx {
    int B, I, H;
    float *x, *h0, *c0, *wx, *wh, *b, *h, *c, *rh, *rc;
    xf_nn_lstm_cache cache;
    int use_c; /* the loss also depends on the new cell state */
} lstm_ctx;

static double lstm_loss(void *u)
{
    lstm_ctx *t = u;
    xf_nn_lstm_forward(t->h, t->c, &t->cache, t->x, t->h0, t->c0, t->wx, t->wh, t->b, t->B, t->I,
                       t->H);
    size_t n = (size_t)t->B * (size_t)t->H;
    return dot(t->h, t->rh, n) + (t->use_c ? dot(t->c, t->rc, n) : 0.0);
}

START_TEST(lstm_gradients)
{
    xf_rng r;
    xf_rng_seed(&r, 19);
    for (int use_c = 0; use_c < 2; use_c++) {
        lstm_ctx t;
        memset(&t, 0, sizeof t);
        t.B = 3, t.I = 5, t.H = 4, t.use_c = use_c;
        size_t nx = (size_t)t.B * t.I, nh = (size_t)t.B * t.H, G = 4 * (size_t)t.H;
        t.x = rnd(nx, &r, -1, 1), t.h0 = rnd(nh, &r, -1, 1), t.c0 = rnd(nh, &r, -1, 1);
        t.wx = rnd((size_t)t.I * G, &r, -0.7f, 0.7f), t.wh = rnd((size_t)t.H * G, &r, -0.7f, 0.7f);
        t.b = rnd(G, &r, -0.5f, 0.5f), t.h = zeros(nh), t.c = zeros(nh);
        t.rh = rnd(nh, &r, -1, 1), t.rc = rnd(nh, &r, -1, 1);
        xf_nn_lstm_cache_init(&t.cache);
        ck_assert_int_eq(xf_nn_lstm_cache_reserve(&t.cache, t.B, t.H, NULL), XF_OK);
        lstm_loss(&t);
        /* Independent check of one unit: c = f c0 + i g, h = o tanh(c). */
        {
            int bi = 1, j = 2;
            double z[4];
            for (int q = 0; q < 4; q++) {
                int col = q * t.H + j;
                double s = t.b[col];
                for (int k = 0; k < t.I; k++) s += (double)t.x[bi * t.I + k] * t.wx[k * (int)G + col];
                for (int k = 0; k < t.H; k++) s += (double)t.h0[bi * t.H + k] * t.wh[k * (int)G + col];
                z[q] = s;
            }
            double ig = 1 / (1 + exp(-z[0])), fg = 1 / (1 + exp(-z[1])), gg = tanh(z[2]),
                   og = 1 / (1 + exp(-z[3]));
            double cc = fg * t.c0[bi * t.H + j] + ig * gg;
            ck_assert(fabs(t.c[bi * t.H + j] - cc) < 1e-5);
            ck_assert(fabs(t.h[bi * t.H + j] - og * tanh(cc)) < 1e-5);
        }
        float *dx = zeros(nx), *dh0 = zeros(nh), *dc0 = zeros(nh);
        float *dwx = zeros((size_t)t.I * G), *dwh = zeros((size_t)t.H * G), *db = zeros(G);
        xf_nn_lstm_backward(dx, dh0, dc0, dwx, dwh, db, t.rh, use_c ? t.rc : NULL, &t.cache, t.x,
                            t.h0, t.c0, t.wx, t.wh, t.B, t.I, t.H);
        expect_grad("lstm d/dx", lstm_loss, &t, t.x, dx, nx);
        expect_grad("lstm d/dh_prev", lstm_loss, &t, t.h0, dh0, nh);
        expect_grad("lstm d/dc_prev", lstm_loss, &t, t.c0, dc0, nh);
        expect_grad("lstm d/dwx", lstm_loss, &t, t.wx, dwx, (size_t)t.I * G);
        expect_grad("lstm d/dwh", lstm_loss, &t, t.wh, dwh, (size_t)t.H * G);
        expect_grad("lstm d/db", lstm_loss, &t, t.b, db, G);
        xf_nn_lstm_cache_free(&t.cache);
        free(t.x), free(t.h0), free(t.c0), free(t.wx), free(t.wh), free(t.b), free(t.h), free(t.c);
        free(t.rh), free(t.rc), free(dx), free(dh0), free(dc0), free(dwx), free(dwh), free(db);
    }
}
END_TEST

START_TEST(lstm_layout_in_store)
{
    xf_nn_params p;
    xf_nn_params_init(&p);
    xf_rng r;
    xf_rng_seed(&r, 20);
    xf_nn_lstm l;
    ck_assert_int_eq(xf_nn_lstm_add(&l, &p, "wm.lstm", 6, 3, &r, NULL), XF_OK);
    ck_assert_int_eq(xf_nn_params_count(&p), 3);
    ck_assert_int_eq(xf_nn_params_find(&p, "wm.lstm.wh"), l.wh);
    const xf_nn_tensor_info *ti = xf_nn_params_info(&p, l.wx);
    ck_assert(ti->rank == 2 && ti->dims[0] == 6 && ti->dims[1] == 12);
    const float *b = xf_nn_params_value(&p, l.b);
    for (int j = 0; j < 12; j++) ck_assert(b[j] == ((j >= 3 && j < 6) ? 1.0f : 0.0f));
    xf_nn_params_free(&p);
}
END_TEST

/* --------------------------------------------------------------- MDN */

typedef struct mdn_ctx {
    int B, K, D;
    float *raw, *y, *nll, *post, *r;
} mdn_ctx;

static double mdn_loss(void *u)
{
    mdn_ctx *c = u;
    xf_nn_mdn_forward(c->nll, c->post, c->raw, c->y, c->B, c->K, c->D);
    return dot(c->nll, c->r, (size_t)c->B);
}

START_TEST(mdn_gradients)
{
    xf_rng r;
    xf_rng_seed(&r, 21);
    mdn_ctx c = {4, 3, 2, NULL, NULL, NULL, NULL, NULL};
    int W = xf_nn_mdn_width(c.K, c.D);
    ck_assert_int_eq(W, 15);
    size_t n = (size_t)c.B * (size_t)W;
    c.raw = rnd(n, &r, -1, 1), c.y = rnd((size_t)c.B * c.D, &r, -1.5f, 1.5f);
    c.nll = zeros((size_t)c.B), c.post = zeros((size_t)c.B * c.K), c.r = rnd((size_t)c.B, &r, 0.5f, 1.5f);
    float *draw = zeros(n);
    mdn_loss(&c);
    for (int i = 0; i < c.B; i++) {
        double s = 0;
        for (int k = 0; k < c.K; k++) s += c.post[i * c.K + k];
        ck_assert_msg(fabs(s - 1.0) < 1e-5, "posterior of row %d sums to %g", i, s);
    }
    xf_nn_mdn_backward(draw, c.r, c.post, c.raw, c.y, c.B, c.K, c.D);
    expect_grad("mdn d/draw", mdn_loss, &c, c.raw, draw, n);
    /* Far-away target: the logsumexp keeps the NLL and gradient finite. */
    c.y[0] = 300.0f;
    memset(draw, 0, n * sizeof(float));
    mdn_loss(&c);
    expect_finite("mdn nll far", c.nll, (size_t)c.B);
    ck_assert(c.nll[0] > 1e4f);
    xf_nn_mdn_backward(draw, c.r, c.post, c.raw, c.y, c.B, c.K, c.D);
    expect_finite("mdn draw far", draw, n);
    free(c.raw), free(c.y), free(c.nll), free(c.post), free(c.r), free(draw);
}
END_TEST

START_TEST(mdn_single_gaussian_by_hand)
{
    /* K = 1, D = 2: π = 1, nll = Σ_d ½((y−μ)/σ)² + log σ + ½ log 2π. */
    float raw[5] = {0.7f, 0.5f, -1.0f, 0.2f, -0.3f}; /* logit, μ0, μ1, s0, s1 */
    float y[2] = {1.5f, 0.0f}, nll, post;
    xf_nn_mdn_forward(&nll, &post, raw, y, 1, 1, 2);
    double s0 = exp(0.2), s1 = exp(-0.3);
    double z0 = (1.5 - 0.5) / s0, z1 = (0.0 + 1.0) / s1;
    double hand = 0.5 * z0 * z0 + log(s0) + 0.5 * z1 * z1 + log(s1) + log(2 * 3.14159265358979323846);
    ck_assert_msg(fabs(nll - hand) < 1e-5, "nll %g, by hand %g", (double)nll, hand);
    ck_assert(fabsf(post - 1.0f) < 1e-7f);
    /* Two identical components give the same NLL as one. */
    float raw2[10] = {0.3f, -2.0f,                /* logits */
                      0.5f, -1.0f, 0.5f, -1.0f,   /* means of k0, k1 */
                      0.2f, -0.3f, 0.2f, -0.3f};  /* log-sigmas of k0, k1 */
    float nll2, post2[2];
    xf_nn_mdn_forward(&nll2, post2, raw2, y, 1, 2, 2);
    ck_assert_msg(fabsf(nll2 - nll) < 1e-5f, "mixture of equal components %g vs %g", (double)nll2,
                  (double)nll);
}
END_TEST

START_TEST(mdn_sampling_temperature)
{
    xf_rng r;
    xf_rng_seed(&r, 22);
    /* K = 3, D = 2; component 1 has the largest logit. */
    float raw[15] = {0.0f, 0.5f, -0.2f,             /* logits */
                     -3.0f, 3.0f, 1.0f, 2.0f, 4.0f, -4.0f, /* means */
                     0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};  /* log-sigmas: σ = 1 */
    float out[2];
    xf_nn_mdn_sample(out, raw, 1, 3, 2, 0.0f, &r);
    ck_assert(out[0] == 1.0f && out[1] == 2.0f);
    for (int i = 0; i < 200; i++) {
        xf_nn_mdn_sample(out, raw, 1, 3, 2, 1e-4f, &r);
        ck_assert_msg(fabsf(out[0] - 1.0f) < 0.06f && fabsf(out[1] - 2.0f) < 0.06f,
                      "τ=1e-4 sample (%g, %g) away from the best mean", (double)out[0], (double)out[1]);
    }
    /* τ = 1: components drawn with their mixture weights; τ = 2 flattens them. */
    double pi[3], s = 0;
    for (int k = 0; k < 3; k++) s += exp(raw[k]);
    for (int k = 0; k < 3; k++) pi[k] = exp(raw[k]) / s;
    int n = 6000, cnt[3] = {0, 0, 0};
    for (int i = 0; i < n; i++) {
        xf_nn_mdn_sample(out, raw, 1, 3, 2, 1.0f, &r);
        int best = 0;
        double bd = 1e30;
        for (int k = 0; k < 3; k++) {
            double d = fabs(out[0] - raw[3 + 2 * k]) + fabs(out[1] - raw[4 + 2 * k]);
            if (d < bd) bd = d, best = k;
        }
        cnt[best]++;
    }
    /* Nearest-mean attribution is ≈ exact: the means are ≥ 5σ apart in L1. */
    for (int k = 0; k < 3; k++)
        ck_assert_msg(fabs((double)cnt[k] / n - pi[k]) < 0.04, "component %d: %d of %d, π = %g", k,
                      cnt[k], n, pi[k]);
    /* Spread grows as sqrt(τ). */
    float one[5] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f}; /* K = 1, D = 2, μ = 0, σ = 1 */
    double v1 = 0, v4 = 0;
    for (int i = 0; i < n; i++) {
        xf_nn_mdn_sample(out, one, 1, 1, 2, 1.0f, &r);
        v1 += (double)out[0] * out[0];
        xf_nn_mdn_sample(out, one, 1, 1, 2, 4.0f, &r);
        v4 += (double)out[0] * out[0];
    }
    ck_assert_msg(fabs(v1 / n - 1.0) < 0.1 && fabs(v4 / n - 4.0) < 0.4, "variances %g, %g", v1 / n,
                  v4 / n);
}
END_TEST

/* --------------------------------------------------------------- MLP */

typedef struct mlp_ctx {
    xf_nn_mlp m;
    xf_nn_params p;
    xf_nn_mlp_cache cache;
    int B;
    float *in, *r;
} mlp_ctx;

static double mlp_loss(void *u)
{
    mlp_ctx *c = u;
    const float *y = xf_nn_mlp_forward(&c->m, &c->p, &c->cache, c->in, c->B);
    return dot(y, c->r, (size_t)c->B * (size_t)xf_nn_mlp_out(&c->m));
}

START_TEST(mlp_gradients)
{
    xf_rng r;
    xf_rng_seed(&r, 23);
    xf_nn_act outs[2] = {XF_NN_ACT_NONE, XF_NN_ACT_SIGMOID};
    for (int v = 0; v < 2; v++) {
        mlp_ctx c;
        memset(&c, 0, sizeof c);
        xf_nn_params_init(&c.p);
        xf_nn_mlp_cache_init(&c.cache);
        int dims[4] = {5, 7, 6, 3};
        ck_assert_int_eq(xf_nn_mlp_add(&c.m, &c.p, "mlp", 3, dims, XF_NN_ACT_TANH, outs[v], &r, NULL),
                         XF_OK);
        ck_assert_int_eq(xf_nn_params_count(&c.p), 6);
        ck_assert_int_eq((int)xf_nn_params_total(&c.p), 5 * 7 + 7 + 7 * 6 + 6 + 6 * 3 + 3);
        /* Non-zero biases so their gradients are exercised at a general point. */
        xf_nn_init_uniform(xf_nn_params_value(&c.p, c.m.layer[0].b), 7, -0.5f, 0.5f, &r);
        c.B = 4;
        c.in = rnd((size_t)c.B * 5, &r, -1, 1), c.r = rnd((size_t)c.B * 3, &r, -1, 1);
        ck_assert_int_eq(xf_nn_mlp_cache_reserve(&c.cache, &c.m, c.B, NULL), XF_OK);
        float *din = zeros((size_t)c.B * 5);
        mlp_loss(&c);
        xf_nn_params_zero_grad(&c.p);
        xf_nn_mlp_backward(&c.m, &c.p, &c.cache, din, c.r, c.in, c.B);
        expect_grad("mlp d/din", mlp_loss, &c, c.in, din, (size_t)c.B * 5);
        /* All parameters at once: the store is one contiguous vector. */
        expect_grad("mlp d/dparams", mlp_loss, &c, c.p.value, c.p.grad, xf_nn_params_total(&c.p));
        xf_nn_mlp_cache_free(&c.cache);
        xf_nn_params_free(&c.p);
        free(c.in), free(c.r), free(din);
    }
}
END_TEST

START_TEST(mlp_errors)
{
    xf_nn_params p;
    xf_nn_params_init(&p);
    xf_nn_mlp m;
    xf_error err;
    xf_rng r;
    xf_rng_seed(&r, 1);
    int dims[3] = {4, 0, 2};
    ck_assert_int_eq(xf_nn_mlp_add(&m, &p, "head", 2, dims, XF_NN_ACT_RELU, XF_NN_ACT_NONE, &r, &err),
                     XF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "head"));
    ck_assert_int_eq(xf_nn_mlp_add(&m, &p, "head", 0, dims, XF_NN_ACT_RELU, XF_NN_ACT_NONE, &r, &err),
                     XF_ERR_INVALID);
    xf_nn_params_free(&p);
}
END_TEST

/* ------------------------------------------------------ Adam, clipping */

START_TEST(adam_minimises_quadratic)
{
    xf_nn_params p;
    xf_nn_params_init(&p);
    int d1 = 5, d2[2] = {2, 3};
    ck_assert_int_eq(xf_nn_params_add(&p, "a", 1, &d1, NULL, NULL), XF_OK);
    ck_assert_int_eq(xf_nn_params_add(&p, "b", 2, d2, NULL, NULL), XF_OK);
    size_t n = xf_nn_params_total(&p);
    ck_assert_int_eq((int)n, 11);
    float target[11], scale[11];
    for (size_t i = 0; i < n; i++) target[i] = (float)i * 0.3f - 1.0f, scale[i] = 1.0f + (float)i;
    xf_nn_adam opt = xf_nn_adam_default(0.05f);
    for (int it = 0; it < 600; it++) {
        /* f = Σ scale·(w − t)², ∇ = 2·scale·(w − t) */
        for (size_t i = 0; i < n; i++) p.grad[i] = 2 * scale[i] * (p.value[i] - target[i]);
        float before = p.value[0];
        xf_nn_adam_step(&opt, &p);
        if (it == 0)
            ck_assert_msg(fabsf(before - p.value[0] - 0.05f) < 1e-4f,
                          "first bias-corrected step %g, expected lr", (double)(before - p.value[0]));
    }
    ck_assert_int_eq((int)opt.step, 600);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(fabsf(p.value[i] - target[i]) < 1e-2f, "w[%zu] = %g, minimum %g", i,
                      (double)p.value[i], (double)target[i]);
    /* Decoupled weight decay with zero gradients: value·(1 − lr·wd). */
    xf_nn_params_zero_grad(&p);
    memset(p.m, 0, n * sizeof(float));
    memset(p.v, 0, n * sizeof(float));
    xf_nn_adam wd = xf_nn_adam_default(0.1f);
    wd.weight_decay = 0.5f;
    float v3 = p.value[3];
    xf_nn_adam_step(&wd, &p);
    ck_assert(fabsf(p.value[3] - v3 * 0.95f) < 1e-6f);
    xf_nn_params_free(&p);
}
END_TEST

START_TEST(clip_grad_norm)
{
    xf_nn_params p;
    xf_nn_params_init(&p);
    int d1 = 2, d2 = 1;
    ck_assert_int_eq(xf_nn_params_add(&p, "x", 1, &d1, NULL, NULL), XF_OK);
    ck_assert_int_eq(xf_nn_params_add(&p, "y", 1, &d2, NULL, NULL), XF_OK);
    p.grad[0] = 3, p.grad[1] = 0, p.grad[2] = 4; /* norm 5 */
    ck_assert(fabsf(xf_nn_clip_grad_norm(&p, 10.0f) - 5.0f) < 1e-6f);
    ck_assert(p.grad[0] == 3.0f && p.grad[2] == 4.0f);
    ck_assert(fabsf(xf_nn_clip_grad_norm(&p, 1.0f) - 5.0f) < 1e-6f);
    ck_assert(fabsf(p.grad[0] - 0.6f) < 1e-6f && fabsf(p.grad[2] - 0.8f) < 1e-6f);
    ck_assert(fabsf(xf_nn_clip_grad_norm(&p, 0.0f) - 1.0f) < 1e-6f);
    xf_nn_params_zero_grad(&p);
    ck_assert(xf_nn_clip_grad_norm(&p, 1.0f) == 0.0f && p.grad[2] == 0.0f);
    xf_nn_params_free(&p);
}
END_TEST

/* ------------------------------------------------- store, checkpoints */

START_TEST(params_store)
{
    xf_nn_params p;
    xf_nn_params_init(&p);
    xf_error err;
    int d[2] = {3, 4}, bad[2] = {3, 0}, id = -5;
    ck_assert_int_eq(xf_nn_params_add(&p, "enc.w", 2, d, &id, &err), XF_OK);
    ck_assert_int_eq(id, 0);
    ck_assert_int_eq(xf_nn_params_add(&p, "enc.w", 2, d, &id, &err), XF_ERR_INVALID);
    ck_assert_int_eq(id, -1);
    ck_assert_ptr_nonnull(strstr(err.msg, "enc.w"));
    ck_assert_int_eq(xf_nn_params_add(&p, "enc.b", 2, bad, NULL, &err), XF_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(err.msg, "enc.b"));
    ck_assert_int_eq(xf_nn_params_add(&p, "enc.c", 5, d, NULL, &err), XF_ERR_INVALID);
    char longname[100];
    memset(longname, 'a', sizeof longname - 1);
    longname[99] = '\0';
    ck_assert_int_eq(xf_nn_params_add(&p, longname, 1, d, NULL, &err), XF_ERR_INVALID);
    /* Many tensors: growth keeps ids, offsets and earlier values. */
    xf_nn_params_value(&p, 0)[11] = 7.0f;
    for (int i = 0; i < 100; i++) {
        char nm[32];
        snprintf(nm, sizeof nm, "t%d", i);
        int dd = 50 + i;
        ck_assert_int_eq(xf_nn_params_add(&p, nm, 1, &dd, &id, NULL), XF_OK);
        ck_assert_int_eq(id, i + 1);
    }
    ck_assert_int_eq(xf_nn_params_count(&p), 101);
    ck_assert(xf_nn_params_value(&p, 0)[11] == 7.0f);
    ck_assert_int_eq(xf_nn_params_find(&p, "t42"), 43);
    ck_assert_int_eq(xf_nn_params_find(&p, "nope"), -1);
    ck_assert_int_eq((int)xf_nn_params_size(&p, 43), 92);
    ck_assert_int_eq((int)xf_nn_params_info(&p, 43)->offset,
                     (int)(xf_nn_params_info(&p, 42)->offset + xf_nn_params_size(&p, 42)));
    size_t total = 12;
    for (int i = 0; i < 100; i++) total += (size_t)(50 + i);
    ck_assert_int_eq((int)xf_nn_params_total(&p), (int)total);
    float *g = xf_nn_params_grad(&p, 43);
    g[0] = 1.0f;
    xf_nn_params_zero_grad(&p);
    ck_assert(g[0] == 0.0f);
    xf_nn_params_free(&p);
    ck_assert_int_eq(xf_nn_params_count(&p), 0);
}
END_TEST

/* A small network: an MLP, a layer norm and an LSTM in one store. */
static void build_net(xf_nn_params *p, uint64_t seed, int hidden)
{
    xf_rng r;
    xf_rng_seed(&r, seed);
    xf_nn_params_init(p);
    xf_nn_mlp m;
    xf_nn_layernorm ln;
    xf_nn_lstm l;
    int dims[3] = {6, hidden, 4};
    ck_assert_int_eq(xf_nn_mlp_add(&m, p, "enc", 2, dims, XF_NN_ACT_RELU, XF_NN_ACT_NONE, &r, NULL),
                     XF_OK);
    ck_assert_int_eq(xf_nn_layernorm_add(&ln, p, "enc.ln", 4, NULL), XF_OK);
    ck_assert_int_eq(xf_nn_lstm_add(&l, p, "rnn", 4, 5, &r, NULL), XF_OK);
}

/* Whole contents of a stream. */
static unsigned char *slurp(FILE *f, long *len)
{
    fflush(f);
    *len = ftell(f);
    unsigned char *b = malloc((size_t)*len + 1);
    ck_assert_ptr_nonnull(b);
    rewind(f);
    ck_assert_int_eq((long)fread(b, 1, (size_t)*len, f), *len);
    return b;
}

START_TEST(checkpoint_round_trip)
{
    for (int moments = 0; moments < 2; moments++) {
        xf_nn_params a, b;
        build_net(&a, 1, 8);
        build_net(&b, 2, 8);
        for (size_t i = 0; i < a.total; i++) a.m[i] = (float)i, a.v[i] = 0.5f * (float)i;
        ck_assert(memcmp(a.value, b.value, a.total * sizeof(float)) != 0);
        FILE *f = tmpfile(), *g = tmpfile();
        ck_assert_ptr_nonnull(f);
        ck_assert_ptr_nonnull(g);
        ck_assert_int_eq(xf_nn_params_save(&a, f, moments, "a.ckpt", NULL), XF_OK);
        long la, lb;
        unsigned char *ba = slurp(f, &la);
        rewind(f);
        xf_error err;
        ck_assert_msg(xf_nn_params_load(&b, f, "a.ckpt", &err) == XF_OK, "%s", err.msg);
        ck_assert(memcmp(a.value, b.value, a.total * sizeof(float)) == 0);
        ck_assert(b.m[5] == (moments ? 5.0f : 0.0f) && b.v[5] == (moments ? 2.5f : 0.0f));
        ck_assert_int_eq(xf_nn_params_save(&b, g, moments, "b.ckpt", NULL), XF_OK);
        unsigned char *bb = slurp(g, &lb);
        ck_assert_int_eq(la, lb);
        ck_assert(memcmp(ba, bb, (size_t)la) == 0);
        free(ba), free(bb);
        fclose(f), fclose(g);
        xf_nn_params_free(&a), xf_nn_params_free(&b);
    }
}
END_TEST

/* Saves `src` and loads it into `dst`; returns the status, message in err. */
static xf_status save_load(const xf_nn_params *src, xf_nn_params *dst, long corrupt_at,
                           long truncate_to, xf_error *err)
{
    FILE *f = tmpfile();
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(xf_nn_params_save(src, f, 0, "agent.ckpt", NULL), XF_OK);
    long len;
    unsigned char *b = slurp(f, &len);
    fclose(f);
    if (corrupt_at >= 0) b[corrupt_at] ^= 0x10;
    if (truncate_to >= 0) len = truncate_to;
    f = tmpfile();
    ck_assert_int_eq((long)fwrite(b, 1, (size_t)len, f), len);
    rewind(f);
    xf_status st = xf_nn_params_load(dst, f, "agent.ckpt", err);
    fclose(f);
    free(b);
    return st;
}

START_TEST(checkpoint_errors)
{
    xf_nn_params a, b;
    xf_error err;
    build_net(&a, 1, 8);
    /* Shape mismatch names the tensor and both shapes; b is unchanged. */
    build_net(&b, 2, 9);
    float keep = b.value[3];
    ck_assert_int_eq(save_load(&a, &b, -1, -1, &err), XF_ERR_MISMATCH);
    ck_assert_msg(strstr(err.msg, "'enc.l0.w'") && strstr(err.msg, "[6,8]") && strstr(err.msg, "[6,9]") &&
                      strstr(err.msg, "agent.ckpt"),
                  "%s", err.msg);
    ck_assert(b.value[3] == keep);
    xf_nn_params_free(&b);
    /* A tensor the network lacks / misses; a different name in place. */
    xf_nn_params c;
    xf_nn_params_init(&c);
    int d[2] = {6, 8};
    ck_assert_int_eq(xf_nn_params_add(&c, "enc.l0.w", 2, d, NULL, NULL), XF_OK);
    ck_assert_int_eq(save_load(&a, &c, -1, -1, &err), XF_ERR_MISMATCH);
    ck_assert_msg(strstr(err.msg, "'enc.l0.b'"), "%s", err.msg);
    ck_assert_int_eq(save_load(&c, &a, -1, -1, &err), XF_ERR_MISMATCH);
    ck_assert_msg(strstr(err.msg, "'enc.l0.b'") && strstr(err.msg, "missing"), "%s", err.msg);
    xf_nn_params_free(&c);
    xf_nn_params_init(&c);
    ck_assert_int_eq(xf_nn_params_add(&c, "dec.l0.w", 2, d, NULL, NULL), XF_OK);
    ck_assert_int_eq(save_load(&c, &a, -1, -1, &err), XF_ERR_MISMATCH);
    ck_assert_msg(strstr(err.msg, "'dec.l0.w'") && strstr(err.msg, "'enc.l0.w'"), "%s", err.msg);
    xf_nn_params_free(&c);
    /* Corruption, bad magic, truncation, version. */
    build_net(&b, 2, 8);
    ck_assert_int_eq(save_load(&a, &b, 200, -1, &err), XF_ERR_PARSE);
    ck_assert_msg(strstr(err.msg, "checksum"), "%s", err.msg);
    ck_assert_int_eq(save_load(&a, &b, 0, -1, &err), XF_ERR_PARSE);
    ck_assert_msg(strstr(err.msg, "magic"), "%s", err.msg);
    ck_assert_int_eq(save_load(&a, &b, 8, -1, &err), XF_ERR_PARSE);
    ck_assert_msg(strstr(err.msg, "version"), "%s", err.msg);
    ck_assert_int_eq(save_load(&a, &b, -1, 100, &err), XF_ERR_IO);
    ck_assert_msg(strstr(err.msg, "truncated"), "%s", err.msg);
    ck_assert(b.value[3] != a.value[3]);
    xf_nn_params_free(&a), xf_nn_params_free(&b);
}
END_TEST

START_TEST(copy_values)
{
    xf_nn_params a, b, c;
    xf_error err;
    build_net(&a, 1, 8);
    build_net(&b, 2, 8);
    build_net(&c, 2, 7);
    ck_assert_int_eq(xf_nn_params_copy_values(&b, &a, &err), XF_OK);
    ck_assert(memcmp(a.value, b.value, a.total * sizeof(float)) == 0);
    ck_assert_int_eq(xf_nn_params_copy_values(&c, &a, &err), XF_ERR_MISMATCH);
    ck_assert_msg(strstr(err.msg, "enc.l0.w"), "%s", err.msg);
    xf_nn_params_free(&a), xf_nn_params_free(&b), xf_nn_params_free(&c);
}
END_TEST

START_TEST(determinism)
{
    xf_nn_params a, b, c;
    build_net(&a, 42, 8);
    build_net(&b, 42, 8);
    build_net(&c, 43, 8);
    ck_assert(memcmp(a.value, b.value, a.total * sizeof(float)) == 0);
    ck_assert(memcmp(a.value, c.value, a.total * sizeof(float)) != 0);
    /* Xavier bound: |w| <= sqrt(6 / (6 + 8)) for enc.l0.w. */
    const float *w = xf_nn_params_value(&a, 0);
    float bound = sqrtf(6.0f / 14.0f), mx = 0;
    for (int i = 0; i < 48; i++) mx = fabsf(w[i]) > mx ? fabsf(w[i]) : mx;
    ck_assert(mx <= bound && mx > 0.5f * bound);
    /* Same forward and backward twice: identical bits. */
    xf_rng r;
    xf_rng_seed(&r, 5);
    float *x = rnd(64 * 48, &r, -1, 1), *w2 = rnd(48 * 40, &r, -1, 1), *dy = rnd(64 * 40, &r, -1, 1);
    float *y1 = zeros(64 * 40), *y2 = zeros(64 * 40), *g1 = zeros(48 * 40), *g2 = zeros(48 * 40);
    xf_nn_linear_forward(y1, x, w2, NULL, 64, 48, 40);
    xf_nn_linear_forward(y2, x, w2, NULL, 64, 48, 40);
    xf_nn_linear_backward(NULL, g1, NULL, dy, x, w2, 64, 48, 40);
    xf_nn_linear_backward(NULL, g2, NULL, dy, x, w2, 64, 48, 40);
    ck_assert(memcmp(y1, y2, sizeof(float) * 64 * 40) == 0);
    ck_assert(memcmp(g1, g2, sizeof(float) * 48 * 40) == 0);
    free(x), free(w2), free(dy), free(y1), free(y2), free(g1), free(g2);
    xf_nn_params_free(&a), xf_nn_params_free(&b), xf_nn_params_free(&c);
}
END_TEST

START_TEST(gradcheck_detects_wrong_gradient)
{
    xf_rng r;
    xf_rng_seed(&r, 24);
    act_ctx c = {XF_NN_ACT_TANH, 8, rnd(8, &r, -1, 1), zeros(8), rnd(8, &r, -1, 1)};
    float *din = zeros(8);
    act_loss(&c);
    xf_nn_act_backward(c.a, din, c.r, c.out, 8);
    din[5] *= 1.1f;
    size_t at = 0;
    double e = xf_nn_gradcheck(act_loss, &c, c.in, din, 8, GC_H, GC_FLOOR, &at);
    ck_assert_msg(e > GC_TOL && at == 5, "error %g at %zu", e, at);
    free(c.in), free(c.out), free(c.r), free(din);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("agent_nn");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, linear_forward_matches_naive);
    tcase_add_test(tc, linear_gradients);
    tcase_add_test(tc, activation_gradients);
    tcase_add_test(tc, layernorm_values_and_gradients);
    tcase_add_test(tc, softmax_masked_gradients);
    tcase_add_test(tc, policy_loss_gradients);
    tcase_add_test(tc, categorical_sampling);
    tcase_add_test(tc, mse_values_and_gradient);
    tcase_add_test(tc, bce_values_and_gradient);
    tcase_add_test(tc, lstm_gradients);
    tcase_add_test(tc, lstm_layout_in_store);
    tcase_add_test(tc, mdn_gradients);
    tcase_add_test(tc, mdn_single_gaussian_by_hand);
    tcase_add_test(tc, mdn_sampling_temperature);
    tcase_add_test(tc, mlp_gradients);
    tcase_add_test(tc, mlp_errors);
    tcase_add_test(tc, adam_minimises_quadratic);
    tcase_add_test(tc, clip_grad_norm);
    tcase_add_test(tc, params_store);
    tcase_add_test(tc, checkpoint_round_trip);
    tcase_add_test(tc, checkpoint_errors);
    tcase_add_test(tc, copy_values);
    tcase_add_test(tc, determinism);
    tcase_add_test(tc, gradcheck_detects_wrong_gradient);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return xf_test_run(suite());
}
