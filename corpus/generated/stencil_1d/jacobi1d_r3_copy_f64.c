/*
 * 1-D symmetric stencil, 7-point, time loop with copy-back (double).
 */
void jacobi1d_r3_copy_f64(int tsteps, int n, double A[n], double B[n])
{
    int t, i;

    for (t = 0; t < tsteps; ++t) {
        for (i = 3; i < n - 3; ++i)
            B[i] = 0.0743 * A[i] + 0.0724 * (A[i - 1] + A[i + 1])
                + 0.2125 * (A[i - 2] + A[i + 2])
                + 0.1779 * (A[i - 3] + A[i + 3]);
        for (i = 3; i < n - 3; ++i)
            A[i] = B[i];
    }
}
