/*
 * gemm.c -- C <- alpha * A * B + beta * C, row by row.
 *
 * The sizes are run-time arguments; the arrays carry the dataset extents.
 */
#include <gemm.h>

void kernel_gemm(int ni, int nj, int nk, DATA_TYPE alpha, DATA_TYPE beta,
                 DATA_TYPE C[NI][NJ], DATA_TYPE A[NI][NK], DATA_TYPE B[NK][NJ])
{
    for (int i = 0; i < ni; i++) {
        for (int j = 0; j < nj; j++) {
            C[i][j] *= beta;
            for (int k = 0; k < nk; k++)
                C[i][j] += alpha * A[i][k] * B[k][j];
        }
    }
}
