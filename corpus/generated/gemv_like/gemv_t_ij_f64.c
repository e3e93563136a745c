/*
 * transposed gemv y += A^T x, i outer (double).
 */
void gemv_t_ij_f64(int n, int m, double A[n][m], double x[n], double y[m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            y[j] += A[i][j] * x[i];
}
