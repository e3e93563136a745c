/*
 * trisolve.c -- row-oriented forward substitution: row i of X from the
 * rows above it.  Only the lower triangle of L is read.
 */
#include <trisolve.h>

void kernel_trisolve(int n, int nrhs, double L[N][N], double B[N][NRHS])
{
    int i, j, k;
    double r;

    for (i = 0; i < n; i++)
        for (j = 0; j < nrhs; j++) {
            r = B[i][j];
            for (k = 0; k < i; k++)
                r -= L[i][k] * B[k][j];
            B[i][j] = r / L[i][i];
        }
}
