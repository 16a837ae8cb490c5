/*
 * sgemm.c — portable single-precision matrix product behind matmul, gemm and
 * conv (see sgemm_internal.h for the contract).
 *
 * Why a blocked routine instead of a triple loop: the reference interpreter
 * runs whole CNNs and transformers, and a naive product is 10-50x slower.
 * The structure follows the classic Goto/BLIS scheme so that plain C at -O2
 * runs close to the machine's SIMD throughput without intrinsics:
 *  - op(B) is copied in KC x NC blocks into column panels NR wide, op(A) in
 *    MC x KC blocks into row panels MR tall (zero-padded at the edges), so
 *    transposition is handled once, by the packing, and the inner kernel
 *    always walks contiguous memory;
 *  - the micro-kernel keeps an MR x NR tile of C in a local array and adds a
 *    rank-1 update per k whose inner loop has a compile-time trip count,
 *    which GCC/Clang vectorise at -O2;
 *  - a B micro-panel (KC x NR) stays in L1 while the loop sweeps the A
 *    panels held in L2.
 * Partial K blocks accumulate into C (beta becomes 1 after the first block).
 */
#include "sgemm_internal.h"

#include <string.h>

enum {
    MR = 16,   /* rows of the register tile */
    NR = 8,    /* columns of the register tile */
    KC = 256,  /* depth of a packed block */
    MC = 128,  /* rows of a packed A block (multiple of MR) */
    NC = 2048  /* columns of a packed B block (multiple of NR) */
};

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int64_t round_up(int64_t v, int64_t m)
{
    return (v + m - 1) / m * m;
}

size_t ir_sgemm_work_floats(int64_t M, int64_t N, int64_t K)
{
    if (M <= 0 || N <= 0 || K <= 0) return 0;
    int64_t kc = min64(K, KC);
    int64_t b = round_up(min64(N, NC), NR) * kc;
    int64_t a = round_up(min64(M, MC), MR) * kc;
    return (size_t)(b + a);
}

/* Rows i0..i0+mc of op(A), depth k0..k0+kc, into MR-row panels laid out
 * [panel][k][MR]; rows past mc are zero. */
static void pack_a(int trans, const float *A, int64_t lda, int64_t i0, int64_t mc, int64_t k0,
                   int64_t kc, float *dst)
{
    for (int64_t ip = 0; ip < mc; ip += MR, dst += MR * kc) {
        int64_t mr = min64(MR, mc - ip);
        if (!trans) {
            for (int64_t i = 0; i < mr; i++) {
                const float *src = A + (i0 + ip + i) * lda + k0;
                for (int64_t k = 0; k < kc; k++) dst[k * MR + i] = src[k];
            }
        } else {
            for (int64_t k = 0; k < kc; k++) {
                const float *src = A + (k0 + k) * lda + i0 + ip;
                for (int64_t i = 0; i < mr; i++) dst[k * MR + i] = src[i];
            }
        }
        for (int64_t i = mr; i < MR; i++)
            for (int64_t k = 0; k < kc; k++) dst[k * MR + i] = 0.0f;
    }
}

/* Columns j0..j0+nc of op(B), depth k0..k0+kc, into NR-column panels laid
 * out [panel][k][NR]; columns past nc are zero. */
static void pack_b(int trans, const float *B, int64_t ldb, int64_t j0, int64_t nc, int64_t k0,
                   int64_t kc, float *dst)
{
    for (int64_t jp = 0; jp < nc; jp += NR, dst += NR * kc) {
        int64_t nr = min64(NR, nc - jp);
        if (!trans && nr == NR) {
            for (int64_t k = 0; k < kc; k++) {
                const float *src = B + (k0 + k) * ldb + j0 + jp;
                for (int j = 0; j < NR; j++) dst[k * NR + j] = src[j];
            }
            continue;
        }
        if (!trans) {
            for (int64_t k = 0; k < kc; k++) {
                const float *src = B + (k0 + k) * ldb + j0 + jp;
                for (int64_t j = 0; j < nr; j++) dst[k * NR + j] = src[j];
            }
        } else {
            for (int64_t j = 0; j < nr; j++) {
                const float *src = B + (j0 + jp + j) * ldb + k0;
                for (int64_t k = 0; k < kc; k++) dst[k * NR + j] = src[k];
            }
        }
        for (int64_t k = 0; k < kc; k++)
            for (int64_t j = nr; j < NR; j++) dst[k * NR + j] = 0.0f;
    }
}

/* C[0..mr, 0..nr] = alpha * (a-panel x b-panel) + beta * C. */
static void micro_kernel(int64_t kc, const float *restrict a, const float *restrict b,
                         float *restrict c, int64_t ldc, int64_t mr, int64_t nr, float alpha,
                         float beta)
{
    float acc[MR][NR];
    memset(acc, 0, sizeof acc);
    for (int64_t k = 0; k < kc; k++, a += MR, b += NR) {
        for (int i = 0; i < MR; i++) {
            const float ai = a[i];
            for (int j = 0; j < NR; j++) acc[i][j] += ai * b[j];
        }
    }
    if (mr == MR && nr == NR) {
        for (int i = 0; i < MR; i++) {
            float *ci = c + i * ldc;
            if (beta == 0.0f)
                for (int j = 0; j < NR; j++) ci[j] = alpha * acc[i][j];
            else
                for (int j = 0; j < NR; j++) ci[j] = alpha * acc[i][j] + beta * ci[j];
        }
        return;
    }
    for (int64_t i = 0; i < mr; i++) {
        float *ci = c + i * ldc;
        for (int64_t j = 0; j < nr; j++)
            ci[j] = beta == 0.0f ? alpha * acc[i][j] : alpha * acc[i][j] + beta * ci[j];
    }
}

/* C = beta * C, for the degenerate K == 0 product. */
static void scale_c(int64_t M, int64_t N, float beta, float *C, int64_t ldc)
{
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) C[i * ldc + j] = beta == 0.0f ? 0.0f : beta * C[i * ldc + j];
}

void ir_sgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
              const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
              int64_t ldc, float *work)
{
    if (M <= 0 || N <= 0) return;
    if (K <= 0) {
        scale_c(M, N, beta, C, ldc);
        return;
    }
    int64_t kc_max = min64(K, KC);
    float *bp = work;
    float *ap = work + round_up(min64(N, NC), NR) * kc_max;
    for (int64_t jc = 0; jc < N; jc += NC) {
        int64_t nc = min64(NC, N - jc);
        for (int64_t pc = 0; pc < K; pc += KC) {
            int64_t kc = min64(KC, K - pc);
            float bet = pc == 0 ? beta : 1.0f;
            pack_b(trans_b, B, ldb, jc, nc, pc, kc, bp);
            for (int64_t ic = 0; ic < M; ic += MC) {
                int64_t mc = min64(MC, M - ic);
                pack_a(trans_a, A, lda, ic, mc, pc, kc, ap);
                for (int64_t jr = 0; jr < nc; jr += NR)
                    for (int64_t ir = 0; ir < mc; ir += MR)
                        micro_kernel(kc, ap + ir * kc, bp + jr * kc, C + (ic + ir) * ldc + jc + jr,
                                     ldc, min64(MR, mc - ir), min64(NR, nc - jr), alpha, bet);
            }
        }
    }
}
