/*
 * 2-D 5-point Gauss-Seidel sweep, 5-point, in place (Gauss-Seidel), no time loop (double).
 */
void seidel2d_5pt_f64(int n, int m, double A[n][m])
{
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < m - 1; j++)
            A[i][j] = 0.357 * A[i][j]
                + 0.1607 * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);
}
