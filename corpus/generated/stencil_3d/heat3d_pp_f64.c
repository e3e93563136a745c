/*
 * 3-D explicit heat equation, 7-point, time loop, ping-pong between A and B (double).
 */
void heat3d_pp_f64(int tsteps, int nx, int ny, int nz, double A[nx][ny][nz], double B[nx][ny][nz])
{
    for (int t = 0; t < tsteps; t++) {
        for (int i = 1; i < nx - 1; i++)
            for (int j = 1; j < ny - 1; j++)
                for (int k = 1; k < nz - 1; k++)
                    B[i][j][k] = A[i][j][k] + 0.125 * (A[i - 1][j][k] + A[i + 1][j][k] + A[i][j - 1][k]
                        + A[i][j + 1][k] + A[i][j][k - 1]
                        + A[i][j][k + 1] - 6.0 * A[i][j][k]);
        for (int i = 1; i < nx - 1; i++)
            for (int j = 1; j < ny - 1; j++)
                for (int k = 1; k < nz - 1; k++)
                    A[i][j][k] = B[i][j][k] + 0.125 * (B[i - 1][j][k] + B[i + 1][j][k] + B[i][j - 1][k]
                        + B[i][j + 1][k] + B[i][j][k - 1]
                        + B[i][j][k + 1] - 6.0 * B[i][j][k]);
    }
}
