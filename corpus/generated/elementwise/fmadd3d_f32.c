/*
 * 3-D multiply-add D = A .* B + C (float).
 */
void fmadd3d_f32(int n, int m, int p, float A[n][m][p], float B[n][m][p], float C[n][m][p],
                 float D[n][m][p])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            for (int k = 0; k < p; k++)
                D[i][j][k] = A[i][j][k] * B[i][j][k] + C[i][j][k];
}
