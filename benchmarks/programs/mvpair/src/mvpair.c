/*
 * mvpair.c -- t = A x; y = A^T t; q = A y and s = A^T t in one sweep over A.
 */
#include <mvpair.h>

void kernel_mvpair(int m, int n, double A[M][N], double x[N], double t[M],
                   double y[N], double q[M], double s[N])
{
    int i, j;

    /* t = A x (row-wise dot products) */
    for (i = 0; i < m; i++) {
        t[i] = 0.0;
        for (j = 0; j < n; j++)
            t[i] += A[i][j] * x[j];
    }

    /* y = A^T t (column-wise dot products) */
    for (j = 0; j < n; j++) {
        y[j] = 0.0;
        for (i = 0; i < m; i++)
            y[j] += A[i][j] * t[i];
    }

    /* q = A y and s = A^T t, sharing the sweep over A */
    for (j = 0; j < n; j++)
        s[j] = 0.0;
    for (i = 0; i < m; i++) {
        q[i] = 0.0;
        for (j = 0; j < n; j++) {
            q[i] += A[i][j] * y[j];
            s[j] += t[i] * A[i][j];
        }
    }
}
