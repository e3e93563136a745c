/*
 * syr2k.h -- symmetric rank-2k update of the lower triangle of C:
 *     C <- alpha * (A * B^T + B * A^T) + beta * C,   C is N x N, A and B are N x M.
 *
 * Dataset: -DSMALL_DATASET, -DMEDIUM_DATASET (default) or -DLARGE_DATASET.
 */
#ifndef SYR2K_H
#define SYR2K_H

#if defined(SMALL_DATASET)
#  define N 48
#  define M 40
#elif defined(LARGE_DATASET)
#  define N 1800
#  define M 1500
#else /* MEDIUM_DATASET */
#  define N 1100
#  define M 1000
#endif

void kernel_syr2k(int n, int m, double alpha, double beta,
                  double C[N][N], double A[N][M], double B[N][M]);

#endif /* SYR2K_H */
