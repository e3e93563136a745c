/*
 * transposed gemv y += A^T x, i outer (float).
 */
void gemv_t_ij_f32(int n, int m, float A[n][m], float x[n], float y[m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            y[j] += A[i][j] * x[i];
}
