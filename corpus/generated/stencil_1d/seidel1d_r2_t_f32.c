/*
 * 1-D smoother, 5-point, in place (Gauss-Seidel), time loop (float).
 */
void seidel1d_r2_t_f32(int tsteps, int n, float A[n])
{
    for (int t = 0; t < tsteps; t++)
        for (int i = 2; i < n - 2; i++)
            A[i] = 0.2983f * A[i] + 0.234f * (A[i - 1] + A[i + 1])
                + 0.1168f * (A[i - 2] + A[i + 2]);
}
