/*
 * 3-D array copy (float).
 */
void copy3d_f32(int n, int m, int p, float A[n][m][p], float B[n][m][p])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            for (int k = 0; k < p; k++)
                B[i][j][k] = A[i][j][k];
}
