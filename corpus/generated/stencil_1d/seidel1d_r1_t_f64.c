/*
 * 1-D smoother, 3-point, in place (Gauss-Seidel), time loop (double).
 */
void seidel1d_r1_t_f64(int tsteps, int n, double A[n])
{
    int t, i;

    for (t = 0; t < tsteps; t++)
        for (i = 1; i < n - 1; i++)
            A[i] = 0.3193 * A[i] + 0.3154 * (A[i - 1] + A[i + 1]);
}
