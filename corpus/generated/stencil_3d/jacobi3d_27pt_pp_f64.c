/*
 * 3-D stencil, 27-point, time loop, ping-pong between A and B (double).
 */
void jacobi3d_27pt_pp_f64(int tsteps, int nx, double A[nx][nx][nx], double B[nx][nx][nx])
{
    int t, i, j, k;

    for (t = 0; t < tsteps; t++) {
        for (i = 1; i < nx - 1; i++)
            for (j = 1; j < nx - 1; j++)
                for (k = 1; k < nx - 1; k++)
                    B[i][j][k] = 0.0315 * A[i][j][k]
                        + 0.039 * (A[i - 1][j][k] + A[i][j - 1][k] + A[i][j][k - 1]
                        + A[i][j][k + 1] + A[i][j + 1][k] + A[i + 1][j][k])
                        + 0.0466 * (A[i - 1][j - 1][k] + A[i - 1][j][k - 1]
                        + A[i - 1][j][k + 1] + A[i - 1][j + 1][k]
                        + A[i][j - 1][k - 1] + A[i][j - 1][k + 1]
                        + A[i][j + 1][k - 1] + A[i][j + 1][k + 1]
                        + A[i + 1][j - 1][k] + A[i + 1][j][k - 1]
                        + A[i + 1][j][k + 1] + A[i + 1][j + 1][k])
                        + 0.0219 * (A[i - 1][j - 1][k - 1] + A[i - 1][j - 1][k + 1]
                        + A[i - 1][j + 1][k - 1] + A[i - 1][j + 1][k + 1]
                        + A[i + 1][j - 1][k - 1] + A[i + 1][j - 1][k + 1]
                        + A[i + 1][j + 1][k - 1] + A[i + 1][j + 1][k + 1]);
        for (i = 1; i < nx - 1; i++)
            for (j = 1; j < nx - 1; j++)
                for (k = 1; k < nx - 1; k++)
                    A[i][j][k] = 0.0315 * B[i][j][k]
                        + 0.039 * (B[i - 1][j][k] + B[i][j - 1][k] + B[i][j][k - 1]
                        + B[i][j][k + 1] + B[i][j + 1][k] + B[i + 1][j][k])
                        + 0.0466 * (B[i - 1][j - 1][k] + B[i - 1][j][k - 1]
                        + B[i - 1][j][k + 1] + B[i - 1][j + 1][k]
                        + B[i][j - 1][k - 1] + B[i][j - 1][k + 1]
                        + B[i][j + 1][k - 1] + B[i][j + 1][k + 1]
                        + B[i + 1][j - 1][k] + B[i + 1][j][k - 1]
                        + B[i + 1][j][k + 1] + B[i + 1][j + 1][k])
                        + 0.0219 * (B[i - 1][j - 1][k - 1] + B[i - 1][j - 1][k + 1]
                        + B[i - 1][j + 1][k - 1] + B[i - 1][j + 1][k + 1]
                        + B[i + 1][j - 1][k - 1] + B[i + 1][j - 1][k + 1]
                        + B[i + 1][j + 1][k - 1] + B[i + 1][j + 1][k + 1]);
    }
}
