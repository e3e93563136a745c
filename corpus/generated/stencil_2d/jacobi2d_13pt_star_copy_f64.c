/*
 * 2-D star stencil, 13-point, time loop with copy-back (double).
 */
void jacobi2d_13pt_star_copy_f64(int tsteps, int n, double A[n][n], double B[n][n])
{
    for (int t = 0; t < tsteps; t++) {
        for (int i = 3; i < n - 3; i++)
            for (int j = 3; j < n - 3; j++)
                B[i][j] = 0.0362 * A[i][j]
                    + 0.0866 * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1])
                    + 0.0564 * (A[i - 2][j] + A[i + 2][j] + A[i][j - 2] + A[i][j + 2])
                    + 0.098 * (A[i - 3][j] + A[i + 3][j] + A[i][j - 3] + A[i][j + 3]);
        for (int i = 3; i < n - 3; i++)
            for (int j = 3; j < n - 3; j++)
                A[i][j] = B[i][j];
    }
}
