/*
 * 1-D convolution layer with input and output channels, order ocik (double).
 */
void conv1d_channels_ocik_f64(int no, int nc, int n, int kw, double x[nc][n + kw],
                              double w[no][nc][kw], double y[no][n])
{
    int o, c, i, k;

    for (o = 0; o < no; o++)
        for (c = 0; c < nc; c++)
            for (i = 0; i < n; i++)
                for (k = 0; k < kw; k++)
                    y[o][i] += w[o][c][k] * x[c][i + k];
}
