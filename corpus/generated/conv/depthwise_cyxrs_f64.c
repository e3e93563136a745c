/*
 * depthwise convolution (one filter per channel), loop order cyxrs (double).
 */
void depthwise_cyxrs_f64(int nc, int ho, int wo, int kr, int ks, double out[nc][ho][wo],
                         double w[nc][kr][ks], double in[nc][ho + kr][wo + ks])
{
    for (int c = 0; c < nc; c++)
        for (int y = 0; y < ho; y++)
            for (int x = 0; x < wo; x++)
                for (int r = 0; r < kr; r++)
                    for (int s = 0; s < ks; s++)
                        out[c][y][x] += w[c][r][s] * in[c][y + r][x + s];
}
