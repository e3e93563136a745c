/*
 * 3-D 7-point Gauss-Seidel sweep, 7-point, in place (Gauss-Seidel), no time loop (double).
 */
void seidel3d_7pt_f64(int nx, int ny, int nz, double A[nx][ny][nz])
{
    int i, j, k;

    for (i = 1; i < nx - 1; i++)
        for (j = 1; j < ny - 1; j++)
            for (k = 1; k < nz - 1; k++)
                A[i][j][k] = 0.1072 * A[i][j][k]
                    + 0.1488 * (A[i - 1][j][k] + A[i + 1][j][k] + A[i][j - 1][k]
                    + A[i][j + 1][k] + A[i][j][k - 1] + A[i][j][k + 1]);
}
