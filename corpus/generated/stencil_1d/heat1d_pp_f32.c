/*
 * 1-D explicit heat equation, 3-point, time loop, ping-pong between A and B (float).
 */
void heat1d_pp_f32(int tsteps, int n, float A[n], float B[n])
{
    int t, i;

    for (t = 0; t < tsteps; t++) {
        for (i = 1; i < n - 1; i++)
            B[i] = A[i] + 0.15f * (A[i - 1] + A[i + 1] - 2.0f * A[i]);
        for (i = 1; i < n - 1; i++)
            A[i] = B[i] + 0.15f * (B[i - 1] + B[i + 1] - 2.0f * B[i]);
    }
}
