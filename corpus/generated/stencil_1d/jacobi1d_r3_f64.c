/*
 * 1-D symmetric stencil, 7-point, no time loop (double).
 */
void jacobi1d_r3_f64(int n, double A[n], double B[n])
{
    int i;

    for (i = 3; i < n - 3; ++i)
        B[i] = 0.1797 * A[i] + 0.0946 * (A[i - 1] + A[i + 1])
            + 0.1818 * (A[i - 2] + A[i + 2])
            + 0.1088 * (A[i - 3] + A[i + 3]);
}
