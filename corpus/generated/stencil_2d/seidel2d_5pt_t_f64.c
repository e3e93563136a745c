/*
 * 2-D 5-point Gauss-Seidel, 5-point, in place (Gauss-Seidel), time loop (double).
 */
void seidel2d_5pt_t_f64(int tsteps, int n, double A[n][n])
{
    for (int t = 0; t < tsteps; t++)
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                A[i][j] = 0.3586 * A[i][j]
                    + 0.1579 * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);
}
