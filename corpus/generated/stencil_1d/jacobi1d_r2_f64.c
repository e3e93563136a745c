/*
 * 1-D symmetric stencil, 5-point, no time loop (double).
 */
void jacobi1d_r2_f64(int n, double A[n], double B[n])
{
    int i;

    for (i = 2; i < n - 2; i++)
        B[i] = 0.1913 * A[i] + 0.0906 * (A[i - 1] + A[i + 1])
            + 0.2888 * (A[i - 2] + A[i + 2]);
}
