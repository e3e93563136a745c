/*
 * 3-D 7-point stencil, 7-point, time loop with copy-back, halo-padded arrays (float).
 */
void jacobi3d_7pt_halo_copy_f32(int tsteps, int nx, int ny, int nz,
                                float A[nx + 2][ny + 2][nz + 2], float B[nx + 2][ny + 2][nz + 2])
{
    for (int t = 0; t < tsteps; ++t) {
        for (int i = 1; i < nx + 1; ++i)
            for (int j = 1; j < ny + 1; ++j)
                for (int k = 1; k < nz + 1; ++k)
                    B[i][j][k] = 0.2332f * A[i][j][k]
                        + 0.1195f * (A[i - 1][j][k] + A[i + 1][j][k] + A[i][j - 1][k]
                        + A[i][j + 1][k] + A[i][j][k - 1] + A[i][j][k + 1]);
        for (int i = 1; i < nx + 1; ++i)
            for (int j = 1; j < ny + 1; ++j)
                for (int k = 1; k < nz + 1; ++k)
                    A[i][j][k] = B[i][j][k];
    }
}
