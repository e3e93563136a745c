/*
 * 2-D star stencil, 13-point, time loop, ping-pong between A and B (float).
 */
void jacobi2d_13pt_star_pp_f32(int tsteps, int n, int m, float A[n][m], float B[n][m])
{
    for (int t = 0; t < tsteps; t++) {
        for (int i = 3; i < n - 3; i++)
            for (int j = 3; j < m - 3; j++)
                B[i][j] = 0.0619f * A[i][j]
                    + 0.0463f * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1])
                    + 0.0914f * (A[i - 2][j] + A[i + 2][j] + A[i][j - 2] + A[i][j + 2])
                    + 0.0943f * (A[i - 3][j] + A[i + 3][j] + A[i][j - 3] + A[i][j + 3]);
        for (int i = 3; i < n - 3; i++)
            for (int j = 3; j < m - 3; j++)
                A[i][j] = 0.0619f * B[i][j]
                    + 0.0463f * (B[i - 1][j] + B[i + 1][j] + B[i][j - 1] + B[i][j + 1])
                    + 0.0914f * (B[i - 2][j] + B[i + 2][j] + B[i][j - 2] + B[i][j + 2])
                    + 0.0943f * (B[i - 3][j] + B[i + 3][j] + B[i][j - 3] + B[i][j + 3]);
    }
}
