/*
 * flatmm.h -- BLAS-like products over flat row-major arrays:
 *     C <- alpha * A * B + beta * C     (A is m x k, B is k x n, C is m x n)
 *     y <- C * x                        (x has n entries, y has m)
 *
 * Sizes are run-time arguments; matrices are plain pointers indexed as
 * A[i*k + p].  Dataset: -DSMALL_DATASET, -DMEDIUM_DATASET (default) or
 * -DLARGE_DATASET choose the sizes main() passes.
 */
#ifndef FLATMM_H
#define FLATMM_H

#if defined(SMALL_DATASET)
#  define FLATMM_M 44
#  define FLATMM_N 52
#  define FLATMM_K 36
#elif defined(LARGE_DATASET)
#  define FLATMM_M 1400
#  define FLATMM_N 1500
#  define FLATMM_K 1600
#else /* MEDIUM_DATASET */
#  define FLATMM_M 900
#  define FLATMM_N 1000
#  define FLATMM_K 1100
#endif

void flat_dgemm_gemv(int m, int n, int k, double alpha, double beta,
                     const double *restrict A, const double *restrict B,
                     double *restrict C, const double *restrict x,
                     double *restrict y);

#endif /* FLATMM_H */
