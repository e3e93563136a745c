/*
 * 1-D dilated convolution (dilation 2), y[i] += w[k] x[i + 2 k] (float).
 */
void conv1d_dilated_f32(int n, int kw, float x[n + 2 * kw], float w[kw], float y[n])
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < kw; k++)
            y[i] += w[k] * x[i + 2 * k];
}
