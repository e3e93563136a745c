/*
 * gemv_t: y <- A^T x for an m x n matrix. The row loop is outermost, so the
 * updates of y[j] accumulate across rows.
 */
void gemv_t(int m, int n, double A[m][n], double x[m], double y[n])
{
    int i, j;

#pragma scop
    for (j = 0; j < n; j++)
        y[j] = 0.0;
    for (i = 0; i < m; i++)
        for (j = 0; j < n; j++)
            y[j] = y[j] + A[i][j] * x[i];
#pragma endscop
}
