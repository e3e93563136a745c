/*
 * depthwise convolution (one filter per channel), loop order crsyx (float).
 */
void depthwise_crsyx_f32(int nc, int ho, int wo, int kr, int ks, float out[nc][ho][wo],
                         float w[nc][kr][ks], float in[nc][ho + kr][wo + ks])
{
    int c, r, s, y, x;

    for (c = 0; c < nc; ++c)
        for (r = 0; r < kr; ++r)
            for (s = 0; s < ks; ++s)
                for (y = 0; y < ho; ++y)
                    for (x = 0; x < wo; ++x)
                        out[c][y][x] += w[c][r][s] * in[c][y + r][x + s];
}
