/*
 * 7-point 3-D stencil with a time loop, ping-pong between A and B (both
 * directions are stencils). Marked region.
 */
void heat3d_steps(int tsteps, int n, double A[n][n][n], double B[n][n][n])
{
    int t, i, j, k;

#pragma scop
    for (t = 0; t < tsteps; t++) {
        for (i = 1; i < n - 1; i++)
            for (j = 1; j < n - 1; j++)
                for (k = 1; k < n - 1; k++)
                    B[i][j][k] = 0.4 * A[i][j][k]
                                 + 0.1 * (A[i - 1][j][k] + A[i + 1][j][k]
                                          + A[i][j - 1][k] + A[i][j + 1][k]
                                          + A[i][j][k - 1] + A[i][j][k + 1]);
        for (i = 1; i < n - 1; i++)
            for (j = 1; j < n - 1; j++)
                for (k = 1; k < n - 1; k++)
                    A[i][j][k] = 0.4 * B[i][j][k]
                                 + 0.1 * (B[i - 1][j][k] + B[i + 1][j][k]
                                          + B[i][j - 1][k] + B[i][j + 1][k]
                                          + B[i][j][k - 1] + B[i][j][k + 1]);
    }
#pragma endscop
}
