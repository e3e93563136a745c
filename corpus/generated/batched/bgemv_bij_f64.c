/*
 * batched gemv y[b] += A[b] x[b], loop order bij (double).
 */
void bgemv_bij_f64(int nb, int n, int m, double A[nb][n][m], double x[nb][m], double y[nb][n])
{
    for (int b = 0; b < nb; ++b)
        for (int i = 0; i < n; ++i)
            for (int j = 0; j < m; ++j)
                y[b][i] += A[b][i][j] * x[b][j];
}
