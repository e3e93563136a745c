/*
 * 1-D moving average, 3-point, no time loop (float).
 */
void mean1d_r1_f32(int n, float A[n], float B[n])
{
    int i;

    for (i = 1; i < n - 1; i++)
        B[i] = (A[i] + A[i - 1] + A[i + 1]) / 3.0f;
}
