/*
 * mvpair.h -- matrix-vector products with A and its transpose, as in
 * normal-equation and bi-conjugate-gradient steps:
 *     t = A x,   y = A^T t,   then in one sweep   q = A y,   s = A^T t.
 *     A is M x N.
 *
 * Dataset: -DSMALL_DATASET, -DMEDIUM_DATASET (default) or -DLARGE_DATASET.
 */
#ifndef MVPAIR_H
#define MVPAIR_H

#if defined(SMALL_DATASET)
#  define M 90
#  define N 110
#elif defined(LARGE_DATASET)
#  define M 8000
#  define N 9000
#else /* MEDIUM_DATASET */
#  define M 4000
#  define N 4500
#endif

void kernel_mvpair(int m, int n, double A[M][N], double x[N], double t[M],
                   double y[N], double q[M], double s[N]);

#endif /* MVPAIR_H */
