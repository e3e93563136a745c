/*
 * out-of-place transpose B[j][i] = A[i][j], loop order ij (float).
 */
void transpose_ij_f32(int n, int m, float A[n][m], float B[m][n])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            B[j][i] = A[i][j];
}
