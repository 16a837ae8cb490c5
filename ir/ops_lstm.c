/*
 * ops_lstm.c — the float32 reference kernel of ONNX LSTM (opsets 7-22),
 * an opaque node the interpreter runs (rules never see inside it).
 *
 * ONNX semantics, gate order i, o, f, c in W [dirs, 4H, in], R [dirs, 4H,
 * H] and B [dirs, 8H] (Wb then Rb); default activations f = sigmoid,
 * g = h = tanh; peepholes P [dirs, 3H] in the order i, o, f:
 *   i = f(Xt Wi' + Ht-1 Ri' + Pi * Ct-1 + Wbi + Rbi)
 *   f = f(Xt Wf' + Ht-1 Rf' + Pf * Ct-1 + Wbf + Rbf)   (input_forget: 1 - i)
 *   c = g(Xt Wc' + Ht-1 Rc' + Wbc + Rbc)
 *   Ct = f * Ct-1 + i * c
 *   o = f(Xt Wo' + Ht-1 Ro' + Po * Ct + Wbo + Rbo)
 *   Ht = o * h(Ct)
 * clip bounds every activation's input to [-clip, clip]. sequence_lens
 * [batch] stops batch entry b after its length (Y is zero past it, Y_h and
 * Y_c hold the last step it ran; the reverse direction starts at its last
 * step). layout 1 reads X as [batch, seq, in] and writes Y [batch, seq,
 * dirs, H], Y_h and Y_c [batch, dirs, H]; layout 0: Y [seq, dirs, batch,
 * H], Y_h and Y_c [dirs, batch, H].
 */
#include "op_internal.h"

#include <math.h>
#include <string.h>

static float sigm(float x)
{
    if (x >= 0) return 1.0f / (1.0f + expf(-x));
    float e = expf(x);
    return e / (1.0f + e);
}

static float clipped(float x, float clip)
{
    if (clip > 0.0f) return x < -clip ? -clip : x > clip ? clip : x;
    return x;
}

typedef struct lstm_dims {
    int64_t seq, batch, in, hid, dirs;
    int layout;
} lstm_dims;

/* Element offsets of Y[t, d, b, 0] and of Y_h/Y_c[d, b, 0] in either layout. */
static int64_t y_at(const lstm_dims *m, int64_t t, int64_t d, int64_t b)
{
    if (m->layout) return ((b * m->seq + t) * m->dirs + d) * m->hid;
    return ((t * m->dirs + d) * m->batch + b) * m->hid;
}

static int64_t state_at(const lstm_dims *m, int64_t d, int64_t b)
{
    if (m->layout) return (b * m->dirs + d) * m->hid;
    return (d * m->batch + b) * m->hid;
}

static const float *x_at(const lstm_dims *m, const float *x, int64_t t, int64_t b)
{
    return x + (m->layout ? b * m->seq + t : t * m->batch + b) * m->in;
}

static float dot(const float *a, const float *b, int64_t n)
{
    float s = 0.0f;
    for (int64_t k = 0; k < n; k++) s += a[k] * b[k];
    return s;
}

/* One direction d over every batch entry; h and c hold [batch, H] states
 * (updated in place), gates 4H floats of scratch. */
static void run_direction(const lstm_dims *m, const xf_lstm_attrs *a, int64_t d, const float *x,
                          const float *w, const float *r, const float *bias, const float *peep,
                          const int64_t *lens, float *h, float *c, float *gates, float *y)
{
    const int64_t H = m->hid;
    const float *W = w + d * 4 * H * m->in, *R = r + d * 4 * H * H;
    const float *Bw = bias ? bias + d * 8 * H : NULL, *P = peep ? peep + d * 3 * H : NULL;
    int reverse = a->direction == 1 || (a->direction == 2 && d == 1);
    for (int64_t b = 0; b < m->batch; b++) {
        int64_t len = lens ? lens[b] : m->seq;
        float *hb = h + b * H, *cb = c + b * H;
        for (int64_t s = 0; s < len; s++) {
            int64_t t = reverse ? len - 1 - s : s;
            const float *xt = x_at(m, x, t, b);
            for (int64_t g = 0; g < 4 * H; g++) {
                float v = dot(W + g * m->in, xt, m->in) + dot(R + g * H, hb, H);
                if (Bw) v += Bw[g] + Bw[4 * H + g];
                gates[g] = v;
            }
            for (int64_t j = 0; j < H; j++) {
                float gi = gates[j], go = gates[H + j], gf = gates[2 * H + j],
                      gc = gates[3 * H + j];
                if (P) {
                    gi += P[j] * cb[j];
                    gf += P[2 * H + j] * cb[j];
                }
                float it = sigm(clipped(gi, a->clip));
                float ft = a->input_forget ? 1.0f - it : sigm(clipped(gf, a->clip));
                float ct = tanhf(clipped(gc, a->clip));
                float cn = ft * cb[j] + it * ct;
                if (P) go += P[H + j] * cn;
                float ot = sigm(clipped(go, a->clip));
                cb[j] = cn;
                gates[j] = ot * tanhf(clipped(cn, a->clip)); /* gates[0..H) is free now */
            }
            memcpy(hb, gates, sizeof(float) * (size_t)H);
            if (y) memcpy(y + y_at(m, t, d, b), hb, sizeof(float) * (size_t)H);
        }
    }
}

/* Checks X, W, R and the optional inputs against each other; fills *m. */
static xf_status check_inputs(const xf_lstm_attrs *a, int n_in, const xf_tensor *const *in,
                              lstm_dims *m, xf_error *err)
{
    if (n_in < 3 || !in[0] || !in[1] || !in[2])
        return XF_FAIL(err, XF_ERR_INVALID, "lstm: X, W and R are required");
    const xf_tensor *x = in[0], *w = in[1], *r = in[2];
    m->layout = a->layout;
    m->hid = a->hidden_size;
    m->dirs = a->direction == 2 ? 2 : 1;
    if (x->shape.rank != 3 || x->dtype != XF_F32)
        return XF_FAIL(err, XF_ERR_SHAPE, "lstm: X must be float32 of rank 3");
    m->seq = x->shape.dims[a->layout ? 1 : 0];
    m->batch = x->shape.dims[a->layout ? 0 : 1];
    m->in = x->shape.dims[2];
    int64_t H = m->hid;
    const struct {
        const xf_tensor *t;
        const char *name;
        int rank;
        int64_t d1, d2;
    } want[] = {{w, "W", 3, 4 * H, m->in},
                {r, "R", 3, 4 * H, H},
                {n_in > 3 ? in[3] : NULL, "B", 2, 8 * H, 0},
                {n_in > 5 ? in[5] : NULL, "initial_h", 3, a->layout ? m->dirs : m->batch, H},
                {n_in > 6 ? in[6] : NULL, "initial_c", 3, a->layout ? m->dirs : m->batch, H},
                {n_in > 7 ? in[7] : NULL, "P", 2, 3 * H, 0}};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        const xf_tensor *t = want[k].t;
        if (!t) continue;
        int64_t d0 = (k == 3 || k == 4) && a->layout ? m->batch : m->dirs;
        int ok = t->dtype == XF_F32 && t->shape.rank == want[k].rank && t->shape.dims[0] == d0 &&
                 t->shape.dims[1] == want[k].d1 && (want[k].rank == 2 || t->shape.dims[2] == want[k].d2);
        if (!ok) {
            char s[96], xs[96];
            return XF_FAIL(err, XF_ERR_SHAPE,
                           "lstm: input %s is %s %s, which does not fit X %s, hidden_size %lld "
                           "and %lld direction(s)",
                           want[k].name, xf_dtype_name(t->dtype),
                           xf_shape_str(&t->shape, s, sizeof s),
                           xf_shape_str(&x->shape, xs, sizeof xs), (long long)H,
                           (long long)m->dirs);
        }
    }
    const xf_tensor *sl = n_in > 4 ? in[4] : NULL;
    if (sl && (sl->shape.rank != 1 || sl->shape.dims[0] != m->batch ||
               (sl->dtype != XF_I32 && sl->dtype != XF_I64)))
        return XF_FAIL(err, XF_ERR_SHAPE, "lstm: sequence_lens must be int32 [batch]");
    return XF_OK;
}

/* Copies a [dirs, batch, H] state (layout 0) or [batch, dirs, H] (layout
 * 1) into or out of per-direction [batch, H] rows. */
static void state_copy(const lstm_dims *m, float *rows, float *state, int64_t d, int to_state)
{
    for (int64_t b = 0; b < m->batch; b++) {
        float *s = state + state_at(m, d, b), *row = rows + b * m->hid;
        if (to_state) memcpy(s, row, sizeof(float) * (size_t)m->hid);
        else memcpy(row, s, sizeof(float) * (size_t)m->hid);
    }
}

xf_status ir_lstm_run(const xf_lstm_attrs *a, int n_in, const xf_tensor *const *in, int n_out,
                      xf_tensor *out, xf_error *err)
{
    lstm_dims m;
    if (a->hidden_size < 1 || a->direction < 0 || a->direction > 2)
        return XF_FAIL(err, XF_ERR_INVALID, "lstm: hidden_size must be positive");
    xf_status st = check_inputs(a, n_in, in, &m, err);
    if (st) return st;
    int64_t state_n = m.dirs * m.batch * m.hid;
    int64_t want[3] = {m.seq * state_n, state_n, state_n};
    float *y[3] = {NULL, NULL, NULL};
    for (int k = 0; k < n_out && k < 3; k++) {
        int64_t n = xf_shape_numel(&out[k].shape);
        if (n == want[k] && out[k].dtype == XF_F32) y[k] = out[k].data;
        else if (out[k].shape.rank != 0) /* rank 0: an omitted output's placeholder */
            return XF_FAIL(err, XF_ERR_SHAPE, "lstm: output %d has %lld elements, expected %lld",
                           k, (long long)n, (long long)want[k]);
    }
    if (y[0]) memset(y[0], 0, sizeof(float) * (size_t)want[0]);
    int64_t lens_buf_n = m.batch > 0 ? m.batch : 1;
    float *h = xf_calloc((size_t)(m.batch * m.hid + 1), sizeof *h);
    float *c = xf_calloc((size_t)(m.batch * m.hid + 1), sizeof *c);
    float *gates = xf_malloc(sizeof(float) * (size_t)(4 * m.hid));
    float *hs = xf_calloc((size_t)state_n + 1, sizeof *hs), *cs = xf_calloc((size_t)state_n + 1, sizeof *cs);
    int64_t *lens = xf_malloc(sizeof(int64_t) * (size_t)lens_buf_n);
    if (!h || !c || !gates || !hs || !cs || !lens) {
        st = XF_FAIL(err, XF_ERR_NOMEM, "lstm: out of memory");
        goto out;
    }
    const xf_tensor *sl = n_in > 4 ? in[4] : NULL;
    for (int64_t b = 0; b < m.batch; b++) {
        int64_t v = !sl ? m.seq
                        : sl->dtype == XF_I32 ? ((const int32_t *)sl->data)[b]
                                              : ((const int64_t *)sl->data)[b];
        if (v < 0 || v > m.seq) {
            st = XF_FAIL(err, XF_ERR_INVALID,
                         "lstm: sequence_lens[%lld] = %lld is outside [0, %lld]", (long long)b,
                         (long long)v, (long long)m.seq);
            goto out;
        }
        lens[b] = v;
    }
    const float *h0 = n_in > 5 && in[5] ? in[5]->data : NULL;
    const float *c0 = n_in > 6 && in[6] ? in[6]->data : NULL;
    if (h0) memcpy(hs, h0, sizeof(float) * (size_t)state_n);
    if (c0) memcpy(cs, c0, sizeof(float) * (size_t)state_n);
    for (int64_t d = 0; d < m.dirs; d++) {
        state_copy(&m, h, hs, d, 0);
        state_copy(&m, c, cs, d, 0);
        run_direction(&m, a, d, in[0]->data, in[1]->data, in[2]->data,
                      n_in > 3 && in[3] ? in[3]->data : NULL, n_in > 7 && in[7] ? in[7]->data : NULL,
                      lens, h, c, gates, y[0]);
        state_copy(&m, h, hs, d, 1);
        state_copy(&m, c, cs, d, 1);
    }
    if (y[1]) memcpy(y[1], hs, sizeof(float) * (size_t)state_n);
    if (y[2]) memcpy(y[2], cs, sizeof(float) * (size_t)state_n);
out:
    xf_free(h);
    xf_free(c);
    xf_free(gates);
    xf_free(hs);
    xf_free(cs);
    xf_free(lens);
    return st;
}
