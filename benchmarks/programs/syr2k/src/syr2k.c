/*
 * syr2k.c -- lower-triangular rank-2k update, one dot product per entry.
 * The entries above the diagonal are not touched.
 */
#include <syr2k.h>

void kernel_syr2k(int n, int m, double alpha, double beta,
                  double C[N][N], double A[N][M], double B[N][M])
{
    int i, j, k;
    double acc;

    for (i = 0; i < n; i++)
        for (j = 0; j <= i; j++) {
            acc = 0.0;
            for (k = 0; k < m; k++)
                acc += A[i][k] * B[j][k] + B[i][k] * A[j][k];
            C[i][j] = beta * C[i][j] + alpha * acc;
        }
}
