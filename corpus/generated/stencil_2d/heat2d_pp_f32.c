/*
 * 2-D explicit heat equation, 5-point, time loop, ping-pong between A and B (float).
 */
void heat2d_pp_f32(int tsteps, int n, int m, float A[n][m], float B[n][m])
{
    int t, i, j;

    for (t = 0; t < tsteps; t++) {
        for (i = 1; i < n - 1; i++)
            for (j = 1; j < m - 1; j++)
                B[i][j] = A[i][j] + 0.125f * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1]
                    + A[i][j + 1] - 4.0f * A[i][j]);
        for (i = 1; i < n - 1; i++)
            for (j = 1; j < m - 1; j++)
                A[i][j] = B[i][j] + 0.125f * (B[i - 1][j] + B[i + 1][j] + B[i][j - 1]
                    + B[i][j + 1] - 4.0f * B[i][j]);
    }
}
