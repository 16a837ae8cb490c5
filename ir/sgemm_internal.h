/*
 * sgemm_internal.h — private single-precision matrix product used by the matmul,
 * gemm and conv kernels (not part of the public API).
 *
 *   C = alpha * op(A) * op(B) + beta * C
 *
 * op(A) is M x K, op(B) is K x N, C is M x N; all row-major with leading
 * dimensions lda, ldb, ldc (elements between consecutive rows). op(X) is X
 * or its transpose. When beta == 0, C is only written, never read, so it
 * may hold garbage. The caller provides scratch for the packed panels, of
 * ir_sgemm_work_floats(M, N, K) floats; the routine itself never allocates
 * and cannot fail.
 */
#ifndef XF_IR_SGEMM_INTERNAL_H
#define XF_IR_SGEMM_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

size_t ir_sgemm_work_floats(int64_t M, int64_t N, int64_t K);

void ir_sgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
              const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
              int64_t ldc, float *work);

#endif /* XF_IR_SGEMM_INTERNAL_H */
