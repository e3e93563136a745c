/*
 * 2-D 5x5 box stencil, 25-point, no time loop (double).
 */
void jacobi2d_25pt_box_f64(int n, int m, double A[n][m], double B[n][m])
{
    for (int i = 2; i < n - 2; i++)
        for (int j = 2; j < m - 2; j++)
            B[i][j] = 0.0609 * A[i][j]
                + 0.0505 * (A[i - 1][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j])
                + 0.0446 * (A[i - 2][j] + A[i - 1][j - 1] + A[i - 1][j + 1]
                + A[i][j - 2] + A[i][j + 2] + A[i + 1][j - 1]
                + A[i + 1][j + 1] + A[i + 2][j])
                + 0.0204 * (A[i - 2][j - 1] + A[i - 2][j + 1] + A[i - 1][j - 2]
                + A[i - 1][j + 2] + A[i + 1][j - 2] + A[i + 1][j + 2]
                + A[i + 2][j - 1] + A[i + 2][j + 1])
                + 0.0518 * (A[i - 2][j - 2] + A[i - 2][j + 2] + A[i + 2][j - 2]
                + A[i + 2][j + 2]);
}
