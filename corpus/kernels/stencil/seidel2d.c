/* One in-place Gauss-Seidel sweep (5-point): new values are used as soon as written. */
void seidel2d(int n, double A[n][n])
{
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            A[i][j] = 0.2 * (A[i - 1][j] + A[i][j - 1] + A[i][j]
                             + A[i][j + 1] + A[i + 1][j]);
}
