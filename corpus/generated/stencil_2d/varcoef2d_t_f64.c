/*
 * 2-D 5-point stencil with per-point coefficient arrays, time loop with copy-back (double).
 */
void varcoef2d_t_f64(int tsteps, int n, int m, double A[n][m], double B[n][m], double c0[n][m],
                     double c1[n][m], double c2[n][m])
{
    int t, i, j;

    for (t = 0; t < tsteps; t++) {
        for (i = 1; i < n - 1; i++)
            for (j = 1; j < m - 1; j++)
                B[i][j] = 0.19 * (c0[i][j] * A[i][j] + c1[i][j] * (A[i - 1][j] + A[i + 1][j])
                    + c2[i][j] * (A[i][j - 1] + A[i][j + 1]));
        for (i = 1; i < n - 1; i++)
            for (j = 1; j < m - 1; j++)
                A[i][j] = B[i][j];
    }
}
