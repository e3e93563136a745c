/* 1-D valid convolution (correlation form) with a kernel of k taps. */
void conv1d(int n, int k, double in[n + k], double w[k], double out[n])
{
    int i, r;

    for (i = 0; i < n; i++) {
        out[i] = 0.0;
        for (r = 0; r < k; r++)
            out[i] += w[r] * in[i + r];
    }
}
