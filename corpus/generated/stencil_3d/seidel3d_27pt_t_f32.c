/*
 * 3-D 27-point Gauss-Seidel averaging, 27-point, in place (Gauss-Seidel), time loop (float).
 */
void seidel3d_27pt_t_f32(int tsteps, int nx, float A[nx][nx][nx])
{
    for (int t = 0; t < tsteps; ++t)
        for (int i = 1; i < nx - 1; ++i)
            for (int j = 1; j < nx - 1; ++j)
                for (int k = 1; k < nx - 1; ++k)
                    A[i][j][k] = (A[i - 1][j - 1][k - 1] + A[i - 1][j - 1][k]
                        + A[i - 1][j - 1][k + 1] + A[i - 1][j][k - 1] + A[i - 1][j][k]
                        + A[i - 1][j][k + 1] + A[i - 1][j + 1][k - 1]
                        + A[i - 1][j + 1][k] + A[i - 1][j + 1][k + 1]
                        + A[i][j - 1][k - 1] + A[i][j - 1][k] + A[i][j - 1][k + 1]
                        + A[i][j][k - 1] + A[i][j][k] + A[i][j][k + 1]
                        + A[i][j + 1][k - 1] + A[i][j + 1][k] + A[i][j + 1][k + 1]
                        + A[i + 1][j - 1][k - 1] + A[i + 1][j - 1][k]
                        + A[i + 1][j - 1][k + 1] + A[i + 1][j][k - 1] + A[i + 1][j][k]
                        + A[i + 1][j][k + 1] + A[i + 1][j + 1][k - 1]
                        + A[i + 1][j + 1][k] + A[i + 1][j + 1][k + 1]) / 27.0f;
}
