/*
 * 3-D anisotropic 7-point stencil, 7-point, no time loop (double).
 */
void aniso3d_7pt_f64(int nx, int ny, int nz, double A[nx][ny][nz], double B[nx][ny][nz])
{
    for (int i = 1; i < nx - 1; ++i)
        for (int j = 1; j < ny - 1; ++j)
            for (int k = 1; k < nz - 1; ++k)
                B[i][j][k] = 0.1147 * A[i][j][k] + 0.26 * (A[i - 1][j][k] + A[i + 1][j][k])
                    + 0.0927 * (A[i][j - 1][k] + A[i][j + 1][k])
                    + 0.0899 * (A[i][j][k - 1] + A[i][j][k + 1]);
}
