/*
 * 3-D stencil, 13-point, time loop with copy-back (float).
 */
void jacobi3d_13pt_copy_f32(int tsteps, int nx, int ny, int nz, float A[nx][ny][nz],
                            float B[nx][ny][nz])
{
    for (int t = 0; t < tsteps; t++) {
        for (int i = 2; i < nx - 2; i++)
            for (int j = 2; j < ny - 2; j++)
                for (int k = 2; k < nz - 2; k++)
                    B[i][j][k] = 0.159f * A[i][j][k]
                        + 0.0749f * (A[i - 1][j][k] + A[i + 1][j][k] + A[i][j - 1][k]
                        + A[i][j + 1][k] + A[i][j][k - 1] + A[i][j][k + 1])
                        + 0.0569f * (A[i - 2][j][k] + A[i + 2][j][k] + A[i][j - 2][k]
                        + A[i][j + 2][k] + A[i][j][k - 2] + A[i][j][k + 2]);
        for (int i = 2; i < nx - 2; i++)
            for (int j = 2; j < ny - 2; j++)
                for (int k = 2; k < nz - 2; k++)
                    A[i][j][k] = B[i][j][k];
    }
}
