/*
 * 3-D 3x3x3 box average, 27-point, no time loop (double).
 */
void blur3d_27pt_f64(int nx, int ny, int nz, double A[nx][ny][nz], double B[nx][ny][nz])
{
    int i, j, k;

    for (i = 1; i < nx - 1; i++)
        for (j = 1; j < ny - 1; j++)
            for (k = 1; k < nz - 1; k++)
                B[i][j][k] = (A[i - 1][j - 1][k - 1] + A[i - 1][j - 1][k]
                    + A[i - 1][j - 1][k + 1] + A[i - 1][j][k - 1] + A[i - 1][j][k]
                    + A[i - 1][j][k + 1] + A[i - 1][j + 1][k - 1]
                    + A[i - 1][j + 1][k] + A[i - 1][j + 1][k + 1]
                    + A[i][j - 1][k - 1] + A[i][j - 1][k] + A[i][j - 1][k + 1]
                    + A[i][j][k - 1] + A[i][j][k] + A[i][j][k + 1]
                    + A[i][j + 1][k - 1] + A[i][j + 1][k] + A[i][j + 1][k + 1]
                    + A[i + 1][j - 1][k - 1] + A[i + 1][j - 1][k]
                    + A[i + 1][j - 1][k + 1] + A[i + 1][j][k - 1] + A[i + 1][j][k]
                    + A[i + 1][j][k + 1] + A[i + 1][j + 1][k - 1]
                    + A[i + 1][j + 1][k] + A[i + 1][j + 1][k + 1]) / 27.0;
}
