/*
 * 1-D 3-point stencil with variable coefficients a, b, c, time loop with copy-back (float).
 */
void varcoef1d_t_f32(int tsteps, int n, float A[n], float B[n], float a[n], float b[n], float c[n])
{
    for (int t = 0; t < tsteps; ++t) {
        for (int i = 1; i < n - 1; ++i)
            B[i] = 0.3f * (a[i] * A[i - 1] + b[i] * A[i] + c[i] * A[i + 1]);
        for (int i = 1; i < n - 1; ++i)
            A[i] = B[i];
    }
}
