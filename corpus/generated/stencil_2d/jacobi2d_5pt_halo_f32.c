/*
 * 2-D 5-point stencil, 5-point, no time loop, halo-padded arrays (float).
 */
void jacobi2d_5pt_halo_f32(int n, int m, float A[n + 2][m + 2], float B[n + 2][m + 2])
{
    int i, j;

    for (i = 1; i < n + 1; i++)
        for (j = 1; j < m + 1; j++)
            B[i][j] = 0.42f * A[i][j]
                + 0.145f * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);
}
