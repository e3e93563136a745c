/*
 * 1-D smoother, 3-point, in place (Gauss-Seidel), no time loop (double).
 */
void seidel1d_r1_f64(int n, double A[n])
{
    for (int i = 1; i < n - 1; i++)
        A[i] = 0.3007 * A[i] + 0.3446 * (A[i - 1] + A[i + 1]);
}
