/*
 * onednn_erf.c — erf for the oneDNN backend, which has no erf primitive.
 *
 * Timing erf on the reference interpreter (one libm erff call per element,
 * ~7 ns) made it look like a quarter of a BERT's cost, while real CPU
 * runtimes evaluate it with vectorised polynomials (oneDNN itself does so
 * inside gelu_erf). So the backend runs its own float32 loop: a rational
 * approximation in x² that the compiler vectorises (this file is built
 * with -O3 -fno-trapping-math, see CMakeLists.txt, and cloned for AVX-512,
 * AVX2 and baseline x86-64),
 *     erf(x) ≈ c·P(c²)/Q(c²),  c = clamp(x, -4, 4),
 * P and Q of degree 5, fitted here by iterated weighted least squares
 * against double-precision erf on (0, 4]; evaluated in float32 its largest
 * error over [-5, 5] is 3.8e-7 absolute (|erf(±4)| rounds to 1 in float32,
 * hence the clamp, and |x| >= 4 gives exactly ±1). NaN passes through.
 * The kernel is a reference-style step (plain float32 buffers) whose call
 * is this loop instead of xf_op_run.
 */
#include <stddef.h>

#include "onednn_internal.h"

/* One clone per vector width; the loader picks the widest the CPU has. */
__attribute__((target_clones("avx512f", "avx2", "default"))) static void
erf_loop(const float *restrict x, float *restrict y, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        float c = x[i];
        c = c > 4.0f ? 4.0f : c;
        c = c < -4.0f ? -4.0f : c;
        float t = c * c;
        float p = 2.027286573e-06f;
        p = p * t + 2.861879974e-04f;
        p = p * t + 3.844706280e-03f;
        p = p * t + 5.298176302e-02f;
        p = p * t + 1.923081935e-01f;
        p = p * t + 1.128379046e+00f;
        float q = 3.792855607e-05f;
        q = q * t + 1.181057415e-03f;
        q = q * t + 1.512442889e-02f;
        q = q * t + 1.148795358e-01f;
        q = q * t + 5.037605984e-01f;
        q = q * t + 1.0f;
        float r = c * p / q;
        r = c >= 4.0f ? 1.0f : r;
        y[i] = c <= -4.0f ? -1.0f : r;
    }
}

/* What the kernel stores: GCC (12) takes the address of a target_clones
 * function for a local's and warns (-Wdangling-pointer). */
static void erf_run(const float *x, float *y, size_t n)
{
    erf_loop(x, y, n);
}

xf_status cm_onednn_build_erf(ox_kernel *k, xf_error *err)
{
    xf_status s = cm_onednn_kernel_build_reference(k, err);
    if (s == XF_OK) k->loop = erf_run;
    return s;
}
