/*
 * 1-D symmetric stencil, 3-point, time loop, ping-pong between A and B (float).
 */
void jacobi1d_r1_pp_f32(int tsteps, int n, float A[n], float B[n])
{
    for (int t = 0; t < tsteps; t++) {
        for (int i = 1; i < n - 1; i++)
            B[i] = 0.4587f * A[i] + 0.2657f * (A[i - 1] + A[i + 1]);
        for (int i = 1; i < n - 1; i++)
            A[i] = 0.4587f * B[i] + 0.2657f * (B[i - 1] + B[i + 1]);
    }
}
