/*
 * 2-D 5pt stencil, 5-point, time loop, ping-pong between A and B (float).
 */
void jacobi2d_5pt_pp_f32(int tsteps, int n, int m, float A[n][m], float B[n][m])
{
    int t, i, j;

    for (t = 0; t < tsteps; ++t) {
        for (i = 1; i < n - 1; ++i)
            for (j = 1; j < m - 1; ++j)
                B[i][j] = 0.3248f * A[i][j]
                    + 0.1663f * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);
        for (i = 1; i < n - 1; ++i)
            for (j = 1; j < m - 1; ++j)
                A[i][j] = 0.3248f * B[i][j]
                    + 0.1663f * (B[i - 1][j] + B[i + 1][j] + B[i][j - 1] + B[i][j + 1]);
    }
}
