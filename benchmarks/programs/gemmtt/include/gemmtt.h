/*
 * gemmtt.h -- transpose-heavy products:
 *     C = A^T * B^T        (A is K x N, B is N x K, C is N x N)
 *     S = (C + C^T) / 2    (symmetric part of C)
 *
 * Dataset: -DSMALL_DATASET, -DMEDIUM_DATASET (default) or -DLARGE_DATASET.
 */
#ifndef GEMMTT_H
#define GEMMTT_H

#if defined(SMALL_DATASET)
#  define N 50
#  define K 60
#elif defined(LARGE_DATASET)
#  define N 1500
#  define K 1600
#else /* MEDIUM_DATASET */
#  define N 950
#  define K 1000
#endif

void kernel_gemmtt(int n, int k, double A[K][N], double B[N][K],
                   double C[N][N], double S[N][N]);

#endif /* GEMMTT_H */
