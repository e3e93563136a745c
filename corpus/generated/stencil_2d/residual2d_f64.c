/*
 * residual of the 5-point Poisson operator, R = F - (4U - neighbours) (double).
 */
void residual2d_f64(int n, double U[n][n], double F[n][n], double R[n][n])
{
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++)
            R[i][j] = F[i][j] - (4.0 * U[i][j] - U[i - 1][j] - U[i + 1][j] - U[i][j - 1] - U[i][j + 1]);
}
