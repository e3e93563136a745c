/*
 * residual of the 7-point Poisson operator (double).
 */
void residual3d_f64(int nx, double U[nx][nx][nx], double F[nx][nx][nx], double R[nx][nx][nx])
{
    for (int i = 1; i < nx - 1; ++i)
        for (int j = 1; j < nx - 1; ++j)
            for (int k = 1; k < nx - 1; ++k)
                R[i][j][k] = F[i][j][k] - (6.0 * U[i][j][k] - U[i - 1][j][k] - U[i + 1][j][k] - U[i][j - 1][k]
                    - U[i][j + 1][k] - U[i][j][k - 1] - U[i][j][k + 1]);
}
