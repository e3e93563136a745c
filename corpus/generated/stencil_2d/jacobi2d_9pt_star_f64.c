/*
 * 2-D star stencil, 9-point, no time loop (double).
 */
void jacobi2d_9pt_star_f64(int n, double A[n][n], double B[n][n])
{
    for (int i = 2; i < n - 2; i++)
        for (int j = 2; j < n - 2; j++)
            B[i][j] = 0.2068 * A[i][j]
                + 0.0635 * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1])
                + 0.1223 * (A[i - 2][j] + A[i + 2][j] + A[i][j - 2] + A[i][j + 2]);
}
