/*
 * 2-D star stencil, 9-point, time loop, ping-pong between A and B (float).
 */
void jacobi2d_9pt_star_pp_f32(int tsteps, int n, float A[n][n], float B[n][n])
{
    int t, i, j;

    for (t = 0; t < tsteps; t++) {
        for (i = 2; i < n - 2; i++)
            for (j = 2; j < n - 2; j++)
                B[i][j] = 0.0961f * A[i][j]
                    + 0.1235f * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1])
                    + 0.1025f * (A[i - 2][j] + A[i + 2][j] + A[i][j - 2] + A[i][j + 2]);
        for (i = 2; i < n - 2; i++)
            for (j = 2; j < n - 2; j++)
                A[i][j] = 0.0961f * B[i][j]
                    + 0.1235f * (B[i - 1][j] + B[i + 1][j] + B[i][j - 1] + B[i][j + 1])
                    + 0.1025f * (B[i - 2][j] + B[i + 2][j] + B[i][j - 2] + B[i][j + 2]);
    }
}
