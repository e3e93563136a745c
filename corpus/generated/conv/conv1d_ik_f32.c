/*
 * 1-D valid convolution y[i] += w[k] x[i + k], loop order ik (float).
 */
void conv1d_ik_f32(int n, int kw, float x[n + kw], float w[kw], float y[n])
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < kw; k++)
            y[i] += w[k] * x[i + k];
}
