/*
 * 2-D 3x3 convolution with the filter taps written out (double).
 */
void conv2d_3x3_unrolled_f64(int ho, int wo, double in[ho + 2][wo + 2], double w[3][3],
                             double out[ho][wo])
{
    for (int y = 0; y < ho; y++)
        for (int x = 0; x < wo; x++)
            out[y][x] = w[0][0] * in[y][x] + w[0][1] * in[y][x + 1] + w[0][2] * in[y][x + 2]
                + w[1][0] * in[y + 1][x] + w[1][1] * in[y + 1][x + 1] + w[1][2] * in[y + 1][x + 2]
                + w[2][0] * in[y + 2][x] + w[2][1] * in[y + 2][x + 1] + w[2][2] * in[y + 2][x + 2];
}
