/*
 * 2-D star stencil, 13-point, no time loop (double).
 */
void jacobi2d_13pt_star_f64(int n, double A[n][n], double B[n][n])
{
    for (int i = 3; i < n - 3; i++)
        for (int j = 3; j < n - 3; j++)
            B[i][j] = 0.0799 * A[i][j]
                + 0.1031 * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1])
                + 0.066 * (A[i - 2][j] + A[i + 2][j] + A[i][j - 2] + A[i][j + 2])
                + 0.0609 * (A[i - 3][j] + A[i + 3][j] + A[i][j - 3] + A[i][j + 3]);
}
