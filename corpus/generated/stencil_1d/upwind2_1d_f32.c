/*
 * second-order one-sided difference d[i] = 1.5 u[i] - 2 u[i-1] + 0.5 u[i-2] (float).
 */
void upwind2_1d_f32(int n, float u[n], float d[n])
{
    for (int i = 2; i < n; i++)
        d[i] = 1.5f * u[i] - 2.0f * u[i - 1] + 0.5f * u[i - 2];
}
