/*
 * upper-triangular times general, C += U B, kij order (k outer, i <= k) (float).
 */
void trmm_upper_kij_f32(int n, int m, float A[n][n], float B[n][m], float C[n][m])
{
    for (int k = 0; k < n; ++k)
        for (int i = 0; i <= k; ++i)
            for (int j = 0; j < m; ++j)
                C[i][j] += A[i][k] * B[k][j];
}
