/*
 * trisolve.h -- forward substitution with many right-hand sides:
 * solve L X = B for X, L lower triangular N x N, B N x NRHS, X overwrites B.
 *
 * Dataset: -DSMALL_DATASET, -DMEDIUM_DATASET (default) or -DLARGE_DATASET.
 */
#ifndef TRISOLVE_H
#define TRISOLVE_H

#if defined(SMALL_DATASET)
#  define N 64
#  define NRHS 40
#elif defined(LARGE_DATASET)
#  define N 2000
#  define NRHS 1800
#else /* MEDIUM_DATASET */
#  define N 1400
#  define NRHS 1100
#endif

void kernel_trisolve(int n, int nrhs, double L[N][N], double B[N][NRHS]);

#endif /* TRISOLVE_H */
