/*
 * nn_linear.c — the dense layer of agent/nn, out = in·W + b over batch-major
 * buffers, with its backward. The three matrix products go through oneDNN's
 * row-major dnnl_sgemm (beta = 1 where the backward accumulates). Debian's
 * oneDNN threads its sgemm with OpenMP at the caller's thread count; for the
 * agent's small products (one LSTM step, a 64-row batch) starting and
 * spinning threads costs more than it saves — tens of times more on a busy
 * machine — so products below XF_NN_GEMM_THREADED_MACS run on one thread,
 * which also keeps their results independent of the thread setting.
 */
#include <stdlib.h>
#include <string.h>

#include <dnnl.h>
#include <omp.h>

#include "agent/nn/nn.h"

/* C[M,N] = alpha·op(A)·op(B) + beta·C, row-major. The arguments are sized by
 * the callers, so a oneDNN failure is a broken invariant. */
static void sgemm(char ta, char tb, int M, int N, int K, const float *A, int lda, const float *Bm,
                  int ldb, float beta, float *C, int ldc)
{
    double macs = (double)M * (double)N * (double)K;
    int threads = omp_get_max_threads();
    int single = macs < XF_NN_GEMM_THREADED_MACS && threads > 1;
    if (single) omp_set_num_threads(1);
    dnnl_status_t s = dnnl_sgemm(ta, tb, M, N, K, 1.0f, A, lda, Bm, ldb, beta, C, ldc);
    if (single) omp_set_num_threads(threads);
    if (s != dnnl_success) abort();
}

void xf_nn_linear_forward(float *out, const float *in, const float *w, const float *b, int B,
                          int I, int O)
{
    if (B <= 0 || O <= 0) return;
    if (b) {
        for (int r = 0; r < B; r++) memcpy(out + (size_t)r * (size_t)O, b, (size_t)O * sizeof(float));
    }
    if (I <= 0) {
        if (!b) memset(out, 0, (size_t)B * (size_t)O * sizeof(float));
        return;
    }
    sgemm('N', 'N', B, O, I, in, I, w, O, b ? 1.0f : 0.0f, out, O);
}

void xf_nn_linear_backward(float *din, float *dw, float *db, const float *dout, const float *in,
                           const float *w, int B, int I, int O)
{
    if (B <= 0 || O <= 0) return;
    if (din && I > 0) sgemm('N', 'T', B, I, O, dout, O, w, O, 1.0f, din, I);
    if (dw && I > 0) sgemm('T', 'N', I, O, B, in, I, dout, O, 1.0f, dw, O);
    if (db) {
        for (int r = 0; r < B; r++) {
            const float *row = dout + (size_t)r * (size_t)O;
            for (int o = 0; o < O; o++) db[o] += row[o];
        }
    }
}

xf_status xf_nn_linear_add(xf_nn_linear *l, xf_nn_params *p, const char *name, int in, int out,
                           int bias, xf_rng *rng, xf_error *err)
{
    char nm[XF_NN_MAX_NAME + 8];
    l->w = l->b = -1;
    l->in = in;
    l->out = out;
    int dims[2] = {in, out};
    snprintf(nm, sizeof nm, "%s.w", name);
    xf_status st = xf_nn_params_add(p, nm, 2, dims, &l->w, err);
    if (st != XF_OK) return st;
    xf_nn_init_xavier(xf_nn_params_value(p, l->w), in, out, rng);
    if (!bias) return XF_OK;
    snprintf(nm, sizeof nm, "%s.b", name);
    return xf_nn_params_add(p, nm, 1, &out, &l->b, err);
}

void xf_nn_linear_apply(const xf_nn_linear *l, const xf_nn_params *p, float *out, const float *in,
                        int B)
{
    xf_nn_linear_forward(out, in, xf_nn_params_value(p, l->w),
                         l->b >= 0 ? xf_nn_params_value(p, l->b) : NULL, B, l->in, l->out);
}

void xf_nn_linear_apply_backward(const xf_nn_linear *l, const xf_nn_params *p, float *din,
                                 const float *dout, const float *in, int B)
{
    xf_nn_linear_backward(din, xf_nn_params_grad(p, l->w),
                          l->b >= 0 ? xf_nn_params_grad(p, l->b) : NULL, dout, in,
                          xf_nn_params_value(p, l->w), B, l->in, l->out);
}
