/*
 * 1-D symmetric stencil, 3-point, no time loop (double).
 */
void jacobi1d_r1_f64(int n, double A[n], double B[n])
{
    for (int i = 1; i < n - 1; i++)
        B[i] = 0.3106 * A[i] + 0.3197 * (A[i - 1] + A[i + 1]);
}
