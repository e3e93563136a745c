/*
 * 2-D 5pt stencil, 5-point, no time loop (float).
 */
void jacobi2d_5pt_f32(int n, int m, float A[n][m], float B[n][m])
{
    for (int i = 1; i < n - 1; ++i)
        for (int j = 1; j < m - 1; ++j)
            B[i][j] = 0.1066f * A[i][j]
                + 0.2209f * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);
}
