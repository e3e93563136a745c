/*
 * 2-D 5-point stencil with per-point coefficient arrays (float).
 */
void varcoef2d_f32(int n, int m, float A[n][m], float B[n][m], float c0[n][m], float c1[n][m],
                   float c2[n][m])
{
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < m - 1; j++)
            B[i][j] = 0.19f * (c0[i][j] * A[i][j] + c1[i][j] * (A[i - 1][j] + A[i + 1][j])
                + c2[i][j] * (A[i][j - 1] + A[i][j + 1]));
}
