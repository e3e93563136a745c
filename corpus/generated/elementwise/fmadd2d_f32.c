/*
 * matrix multiply-add D = A .* B + C (float).
 */
void fmadd2d_f32(int n, int m, float A[n][m], float B[n][m], float C[n][m], float D[n][m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            D[i][j] = A[i][j] * B[i][j] + C[i][j];
}
