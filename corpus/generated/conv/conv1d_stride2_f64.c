/*
 * 1-D convolution with stride 2, y[i] += w[k] x[2 i + k] (double).
 */
void conv1d_stride2_f64(int n, int kw, double x[2 * n + kw], double w[kw], double y[n])
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < kw; k++)
            y[i] += w[k] * x[2 * i + k];
}
