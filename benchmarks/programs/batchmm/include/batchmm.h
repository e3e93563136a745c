/*
 * batchmm.h -- a batch of independent single-precision matrix products
 *     C[b] = A[b] * B[b] + bias,   b < NBATCH;  A[b] is M x K, B[b] is K x N.
 *
 * Dataset: -DSMALL_DATASET, -DMEDIUM_DATASET (default) or -DLARGE_DATASET.
 */
#ifndef BATCHMM_H
#define BATCHMM_H

#if defined(SMALL_DATASET)
#  define NBATCH 4
#  define M 24
#  define N 20
#  define K 28
#elif defined(LARGE_DATASET)
#  define NBATCH 512
#  define M 160
#  define N 144
#  define K 176
#else /* MEDIUM_DATASET */
#  define NBATCH 256
#  define M 128
#  define N 112
#  define K 144
#endif

void batchmm(int nbatch, int m, int n, int k, float bias,
             float C[nbatch][m][n], float A[nbatch][m][k], float B[nbatch][k][n]);

#endif /* BATCHMM_H */
