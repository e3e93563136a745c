/*
 * 1-D wide (9-point) symmetric stencil, 9-point, no time loop (double).
 */
void jacobi1d_r4_f64(int n, double A[n], double B[n])
{
    for (int i = 4; i < n - 4; i++)
        B[i] = 0.1026 * A[i] + 0.0625 * (A[i - 1] + A[i + 1])
            + 0.1501 * (A[i - 2] + A[i + 2])
            + 0.0877 * (A[i - 3] + A[i + 3])
            + 0.1435 * (A[i - 4] + A[i + 4]);
}
