/*
 * 2-D valid convolution (single channel), loop order yxrs (float).
 */
void conv2d_yxrs_f32(int ho, int wo, int kr, int ks, float in[ho + kr][wo + ks], float w[kr][ks],
                     float out[ho][wo])
{
    int y, x, r, s;

    for (y = 0; y < ho; ++y)
        for (x = 0; x < wo; ++x)
            for (r = 0; r < kr; ++r)
                for (s = 0; s < ks; ++s)
                    out[y][x] += w[r][s] * in[y + r][x + s];
}
