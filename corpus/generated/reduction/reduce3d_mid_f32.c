/*
 * reduction of a 3-D array over its middle index, out[i][k] += A[i][j][k] (float).
 */
void reduce3d_mid_f32(int n, int m, int p, float A[n][m][p], float R[n][p])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            for (int k = 0; k < p; k++)
                R[i][k] += A[i][j][k];
}
