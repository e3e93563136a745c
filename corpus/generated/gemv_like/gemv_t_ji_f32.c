/*
 * transposed gemv y += A^T x, j outer (strided column walk) (float).
 */
void gemv_t_ji_f32(int n, int m, float A[n][m], float x[n], float y[m])
{
    for (int j = 0; j < m; j++)
        for (int i = 0; i < n; i++)
            y[j] += A[i][j] * x[i];
}
