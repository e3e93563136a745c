/*
 * reduction of a 3-D array over its last index, out[i][j] += A[i][j][k] (float).
 */
void reduce3d_last_f32(int n, int m, int p, float A[n][m][p], float R[n][m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            for (int k = 0; k < p; k++)
                R[i][j] += A[i][j][k];
}
