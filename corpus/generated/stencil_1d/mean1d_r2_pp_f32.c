/*
 * 1-D moving average, 5-point, time loop, ping-pong between A and B (float).
 */
void mean1d_r2_pp_f32(int tsteps, int n, float A[n], float B[n])
{
    int t, i;

    for (t = 0; t < tsteps; t++) {
        for (i = 2; i < n - 2; i++)
            B[i] = (A[i] + A[i - 1] + A[i + 1] + A[i - 2] + A[i + 2]) / 5.0f;
        for (i = 2; i < n - 2; i++)
            A[i] = (B[i] + B[i - 1] + B[i + 1] + B[i - 2] + B[i + 2]) / 5.0f;
    }
}
