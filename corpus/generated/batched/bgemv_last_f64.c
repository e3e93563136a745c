/*
 * batch-last batched gemv y[i][b] += A[i][j][b] x[j][b], batch innermost (double).
 */
void bgemv_last_f64(int nb, int n, int m, double A[n][m][nb], double x[m][nb], double y[n][nb])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            for (int b = 0; b < nb; b++)
                y[i][b] += A[i][j][b] * x[j][b];
}
