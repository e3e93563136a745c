#include <math.h>

/*
 * In-place Cholesky factorisation A = L L^T (row-oriented). The partial dot
 * product goes through a local scalar; affine ifs separate the diagonal case.
 */
void cholesky_inplace(int n, double A[n][n])
{
    int i, j, k;

    for (i = 0; i < n; i++)
        for (j = 0; j <= i; j++) {
            double s = A[i][j];
            for (k = 0; k < j; k++)
                s -= A[i][k] * A[j][k];
            if (j < i)
                A[i][j] = s / A[j][j];
            if (i == j)
                A[i][i] = sqrt(s);
        }
}
