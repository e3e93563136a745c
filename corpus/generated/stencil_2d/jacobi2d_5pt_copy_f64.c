/*
 * 2-D 5pt stencil, 5-point, time loop with copy-back (double).
 */
void jacobi2d_5pt_copy_f64(int tsteps, int n, double A[n][n], double B[n][n])
{
    for (int t = 0; t < tsteps; t++) {
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                B[i][j] = 0.1491 * A[i][j]
                    + 0.2102 * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                A[i][j] = B[i][j];
    }
}
