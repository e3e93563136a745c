/*
 * 1-D valid convolution y[i] += w[k] x[i + k], loop order ki (double).
 */
void conv1d_ki_f64(int n, int kw, double x[n + kw], double w[kw], double y[n])
{
    for (int k = 0; k < kw; k++)
        for (int i = 0; i < n; i++)
            y[i] += w[k] * x[i + k];
}
