/*
 * 2-D dilated convolution (dilation 2) (float).
 */
void conv2d_dilated_f32(int ho, int wo, int kr, int ks, float in[ho + 2 * kr][wo + 2 * ks],
                        float w[kr][ks], float out[ho][wo])
{
    int y, x, r, s;

    for (y = 0; y < ho; y++)
        for (x = 0; x < wo; x++)
            for (r = 0; r < kr; r++)
                for (s = 0; s < ks; s++)
                    out[y][x] += w[r][s] * in[y + 2 * r][x + 2 * s];
}
