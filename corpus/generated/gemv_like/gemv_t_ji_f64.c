/*
 * transposed gemv y += A^T x, j outer (strided column walk) (double).
 */
void gemv_t_ji_f64(int n, int m, double A[n][m], double x[n], double y[m])
{
    for (int j = 0; j < m; j++)
        for (int i = 0; i < n; i++)
            y[j] += A[i][j] * x[i];
}
