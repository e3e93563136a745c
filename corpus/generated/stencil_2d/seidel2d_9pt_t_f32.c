/*
 * 2-D 9-point Gauss-Seidel averaging, 9-point, in place (Gauss-Seidel), time loop (float).
 */
void seidel2d_9pt_t_f32(int tsteps, int n, float A[n][n])
{
    for (int t = 0; t < tsteps; t++)
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                A[i][j] = (A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1] + A[i][j - 1]
                    + A[i][j] + A[i][j + 1] + A[i + 1][j - 1] + A[i + 1][j]
                    + A[i + 1][j + 1]) / 9.0f;
}
