/*
 * 3-D stencil, 7-point, time loop, ping-pong between A and B (double).
 */
void jacobi3d_7pt_pp_f64(int tsteps, int nx, int ny, int nz, double A[nx][ny][nz],
                         double B[nx][ny][nz])
{
    int t, i, j, k;

    for (t = 0; t < tsteps; t++) {
        for (i = 1; i < nx - 1; i++)
            for (j = 1; j < ny - 1; j++)
                for (k = 1; k < nz - 1; k++)
                    B[i][j][k] = 0.2617 * A[i][j][k]
                        + 0.123 * (A[i - 1][j][k] + A[i + 1][j][k] + A[i][j - 1][k]
                        + A[i][j + 1][k] + A[i][j][k - 1] + A[i][j][k + 1]);
        for (i = 1; i < nx - 1; i++)
            for (j = 1; j < ny - 1; j++)
                for (k = 1; k < nz - 1; k++)
                    A[i][j][k] = 0.2617 * B[i][j][k]
                        + 0.123 * (B[i - 1][j][k] + B[i + 1][j][k] + B[i][j - 1][k]
                        + B[i][j + 1][k] + B[i][j][k - 1] + B[i][j][k + 1]);
    }
}
