/*
 * batched rank-1 updates A[b] += x[b] y[b]^T (double).
 */
void bger_f64(int nb, int n, int m, double A[nb][n][m], double x[nb][n], double y[nb][m])
{
    for (int b = 0; b < nb; b++)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < m; j++)
                A[b][i][j] += x[b][i] * y[b][j];
}
