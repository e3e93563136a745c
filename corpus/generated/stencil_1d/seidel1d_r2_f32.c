/*
 * 1-D smoother, 5-point, in place (Gauss-Seidel), no time loop (float).
 */
void seidel1d_r2_f32(int n, float A[n])
{
    for (int i = 2; i < n - 2; i++)
        A[i] = 0.1294f * A[i] + 0.1842f * (A[i - 1] + A[i + 1])
            + 0.2511f * (A[i - 2] + A[i + 2]);
}
