/*
 * 2-D 5-point stencil traversed column by column, 5-point, no time loop, loop order ji (float).
 */
void jacobi2d_5pt_ji_f32(int n, int m, float A[n][m], float B[n][m])
{
    for (int j = 1; j < m - 1; j++)
        for (int i = 1; i < n - 1; i++)
            B[i][j] = 0.1406f * A[i][j]
                + 0.2023f * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);
}
