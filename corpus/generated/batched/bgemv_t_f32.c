/*
 * batched transposed gemv y[b] += A[b]^T x[b] (float).
 */
void bgemv_t_f32(int nb, int n, int m, float A[nb][n][m], float x[nb][n], float y[nb][m])
{
    for (int b = 0; b < nb; b++)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < m; j++)
                y[b][j] += A[b][i][j] * x[b][i];
}
