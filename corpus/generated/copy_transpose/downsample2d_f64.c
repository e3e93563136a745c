/*
 * 2x downsampling by decimation, B[i][j] = A[2 i][2 j] (double).
 */
void downsample2d_f64(int n, int m, double A[2 * n][2 * m], double B[n][m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            B[i][j] = A[2 * i][2 * j];
}
