/*
 * flatmm.c -- gemm then gemv over restrict-qualified flat arrays with
 * linearized subscripts, the way most C code writes matrices.
 */
#include <flatmm.h>

void flat_dgemm_gemv(int m, int n, int k, double alpha, double beta,
                     const double *restrict A, const double *restrict B,
                     double *restrict C, const double *restrict x,
                     double *restrict y)
{
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double acc = 0.0;
            for (int p = 0; p < k; p++)
                acc += A[i * k + p] * B[p * n + j];
            C[i * n + j] = alpha * acc + beta * C[i * n + j];
        }

    for (int i = 0; i < m; i++) {
        y[i] = 0.0;
        for (int j = 0; j < n; j++)
            y[i] += C[i * n + j] * x[j];
    }
}
