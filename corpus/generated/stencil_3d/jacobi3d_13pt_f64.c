/*
 * 3-D stencil, 13-point, no time loop (double).
 */
void jacobi3d_13pt_f64(int nx, int ny, int nz, double A[nx][ny][nz], double B[nx][ny][nz])
{
    int i, j, k;

    for (i = 2; i < nx - 2; ++i)
        for (j = 2; j < ny - 2; ++j)
            for (k = 2; k < nz - 2; ++k)
                B[i][j][k] = 0.0468 * A[i][j][k]
                    + 0.0756 * (A[i - 1][j][k] + A[i + 1][j][k] + A[i][j - 1][k]
                    + A[i][j + 1][k] + A[i][j][k - 1] + A[i][j][k + 1])
                    + 0.0833 * (A[i - 2][j][k] + A[i + 2][j][k] + A[i][j - 2][k]
                    + A[i][j + 2][k] + A[i][j][k - 2] + A[i][j][k + 2]);
}
