/*
 * gemv y += A x, row-major traversal (i outer) (double).
 */
void gemv_ij_f64(int n, int m, double A[n][m], double x[m], double y[n])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            y[i] += A[i][j] * x[j];
}
