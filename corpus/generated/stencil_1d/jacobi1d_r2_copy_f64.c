/*
 * 1-D symmetric stencil, 5-point, time loop with copy-back (double).
 */
void jacobi1d_r2_copy_f64(int tsteps, int n, double A[n], double B[n])
{
    int t, i;

    for (t = 0; t < tsteps; t++) {
        for (i = 2; i < n - 2; i++)
            B[i] = 0.1274 * A[i] + 0.2695 * (A[i - 1] + A[i + 1])
                + 0.1418 * (A[i - 2] + A[i + 2]);
        for (i = 2; i < n - 2; i++)
            A[i] = B[i];
    }
}
