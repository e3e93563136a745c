/*
 * rbfkernel.h -- Gaussian (RBF) kernel matrix between two point sets and
 * the kernel-regression prediction it gives:
 *     Kmat[i][j] = exp(-gamma * |X_i - Y_j|^2)   (NX x NY, points in DIM dims)
 *     pred[i]    = sum_j Kmat[i][j] * w[j]
 *
 * Dataset: -DSMALL_DATASET, -DMEDIUM_DATASET (default) or -DLARGE_DATASET.
 */
#ifndef RBFKERNEL_H
#define RBFKERNEL_H

#if defined(SMALL_DATASET)
#  define NX 40
#  define NY 50
#  define DIM 8
#elif defined(LARGE_DATASET)
#  define NX 3000
#  define NY 3200
#  define DIM 128
#else /* MEDIUM_DATASET */
#  define NX 2000
#  define NY 2200
#  define DIM 96
#endif

void rbf_predict(int nx, int ny, int dim, double gamma,
                 double X[NX][DIM], double Y[NY][DIM], double w[NY],
                 double Kmat[NX][NY], double pred[NX]);

#endif /* RBFKERNEL_H */
