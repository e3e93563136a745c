/*
 * 1-D convolution layer with input and output channels, order oick (float).
 */
void conv1d_channels_oick_f32(int no, int nc, int n, int kw, float x[nc][n + kw],
                              float w[no][nc][kw], float y[no][n])
{
    for (int o = 0; o < no; o++)
        for (int i = 0; i < n; i++)
            for (int c = 0; c < nc; c++)
                for (int k = 0; k < kw; k++)
                    y[o][i] += w[o][c][k] * x[c][i + k];
}
