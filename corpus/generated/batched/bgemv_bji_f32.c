/*
 * batched gemv y[b] += A[b] x[b], loop order bji (float).
 */
void bgemv_bji_f32(int nb, int n, int m, float A[nb][n][m], float x[nb][m], float y[nb][n])
{
    for (int b = 0; b < nb; b++)
        for (int j = 0; j < m; j++)
            for (int i = 0; i < n; i++)
                y[b][i] += A[b][i][j] * x[b][j];
}
