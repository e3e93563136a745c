/*
 * in-place trmm B = alpha A^T B with A unit lower triangular (k > i accumulate into B[i][j], then
 * scale) (float).
 */
void trmm_inplace_f32(int n, int m, float alpha, float A[n][n], float B[n][m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
            for (int k = i + 1; k < n; k++)
                B[i][j] += A[k][i] * B[k][j];
            B[i][j] = alpha * B[i][j];
        }
}
