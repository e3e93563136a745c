/*
 * gemmtt.c -- both operands read through their transposes, then the
 * symmetric part, which reads C by rows and by columns.
 */
#include <gemmtt.h>

void kernel_gemmtt(int n, int k, double A[K][N], double B[N][K],
                   double C[N][N], double S[N][N])
{
    int i, j, p;

    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++) {
            C[i][j] = 0.0;
            for (p = 0; p < k; p++)
                C[i][j] += A[p][i] * B[j][p];
        }

    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++)
            S[i][j] = 0.5 * (C[i][j] + C[j][i]);
}
