/*
 * 2-D box stencil, 9-point, time loop, ping-pong between A and B (double).
 */
void jacobi2d_9pt_box_pp_f64(int tsteps, int n, int m, double A[n][m], double B[n][m])
{
    for (int t = 0; t < tsteps; t++) {
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < m - 1; j++)
                B[i][j] = 0.1395 * A[i][j]
                    + 0.1374 * (A[i - 1][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j])
                    + 0.0653 * (A[i - 1][j - 1] + A[i - 1][j + 1] + A[i + 1][j - 1]
                    + A[i + 1][j + 1]);
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < m - 1; j++)
                A[i][j] = 0.1395 * B[i][j]
                    + 0.1374 * (B[i - 1][j] + B[i][j - 1] + B[i][j + 1] + B[i + 1][j])
                    + 0.0653 * (B[i - 1][j - 1] + B[i - 1][j + 1] + B[i + 1][j - 1]
                    + B[i + 1][j + 1]);
    }
}
