/*
 * 1-D symmetric stencil, 5-point, time loop, ping-pong between A and B (float).
 */
void jacobi1d_r2_pp_f32(int tsteps, int n, float A[n], float B[n])
{
    for (int t = 0; t < tsteps; t++) {
        for (int i = 2; i < n - 2; i++)
            B[i] = 0.215f * A[i] + 0.2717f * (A[i - 1] + A[i + 1])
                + 0.1158f * (A[i - 2] + A[i + 2]);
        for (int i = 2; i < n - 2; i++)
            A[i] = 0.215f * B[i] + 0.2717f * (B[i - 1] + B[i + 1])
                + 0.1158f * (B[i - 2] + B[i + 2]);
    }
}
