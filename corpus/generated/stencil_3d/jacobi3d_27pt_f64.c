/*
 * 3-D stencil, 27-point, no time loop (double).
 */
void jacobi3d_27pt_f64(int nx, double A[nx][nx][nx], double B[nx][nx][nx])
{
    int i, j, k;

    for (i = 1; i < nx - 1; i++)
        for (j = 1; j < nx - 1; j++)
            for (k = 1; k < nx - 1; k++)
                B[i][j][k] = 0.0269 * A[i][j][k]
                    + 0.0378 * (A[i - 1][j][k] + A[i][j - 1][k] + A[i][j][k - 1]
                    + A[i][j][k + 1] + A[i][j + 1][k] + A[i + 1][j][k])
                    + 0.0372 * (A[i - 1][j - 1][k] + A[i - 1][j][k - 1]
                    + A[i - 1][j][k + 1] + A[i - 1][j + 1][k]
                    + A[i][j - 1][k - 1] + A[i][j - 1][k + 1]
                    + A[i][j + 1][k - 1] + A[i][j + 1][k + 1]
                    + A[i + 1][j - 1][k] + A[i + 1][j][k - 1]
                    + A[i + 1][j][k + 1] + A[i + 1][j + 1][k])
                    + 0.0312 * (A[i - 1][j - 1][k - 1] + A[i - 1][j - 1][k + 1]
                    + A[i - 1][j + 1][k - 1] + A[i - 1][j + 1][k + 1]
                    + A[i + 1][j - 1][k - 1] + A[i + 1][j - 1][k + 1]
                    + A[i + 1][j + 1][k - 1] + A[i + 1][j + 1][k + 1]);
}
