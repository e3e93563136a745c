/*
 * 1-D symmetric stencil, 3-point, time loop with copy-back (float).
 */
void jacobi1d_r1_copy_f32(int tsteps, int n, float A[n], float B[n])
{
    for (int t = 0; t < tsteps; ++t) {
        for (int i = 1; i < n - 1; ++i)
            B[i] = 0.4965f * A[i] + 0.2467f * (A[i - 1] + A[i + 1]);
        for (int i = 1; i < n - 1; ++i)
            A[i] = B[i];
    }
}
