/*
 * 2-D star stencil, 9-point, time loop with copy-back (double).
 */
void jacobi2d_9pt_star_copy_f64(int tsteps, int n, double A[n][n], double B[n][n])
{
    int t, i, j;

    for (t = 0; t < tsteps; t++) {
        for (i = 2; i < n - 2; i++)
            for (j = 2; j < n - 2; j++)
                B[i][j] = 0.0517 * A[i][j]
                    + 0.0854 * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1])
                    + 0.1517 * (A[i - 2][j] + A[i + 2][j] + A[i][j - 2] + A[i][j + 2]);
        for (i = 2; i < n - 2; i++)
            for (j = 2; j < n - 2; j++)
                A[i][j] = B[i][j];
    }
}
