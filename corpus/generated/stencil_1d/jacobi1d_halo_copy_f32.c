/*
 * 1-D 3-point stencil, 3-point, time loop with copy-back, halo-padded arrays (float).
 */
void jacobi1d_halo_copy_f32(int tsteps, int n, float A[n + 2], float B[n + 2])
{
    for (int t = 0; t < tsteps; t++) {
        for (int i = 1; i < n + 1; i++)
            B[i] = 0.2608f * A[i] + 0.3646f * (A[i - 1] + A[i + 1]);
        for (int i = 1; i < n + 1; i++)
            A[i] = B[i];
    }
}
