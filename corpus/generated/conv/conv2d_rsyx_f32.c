/*
 * 2-D valid convolution (single channel), loop order rsyx (float).
 */
void conv2d_rsyx_f32(int ho, int wo, int kr, int ks, float in[ho + kr][wo + ks], float w[kr][ks],
                     float out[ho][wo])
{
    for (int r = 0; r < kr; r++)
        for (int s = 0; s < ks; s++)
            for (int y = 0; y < ho; y++)
                for (int x = 0; x < wo; x++)
                    out[y][x] += w[r][s] * in[y + r][x + s];
}
