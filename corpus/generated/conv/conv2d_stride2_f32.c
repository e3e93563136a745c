/*
 * 2-D convolution with stride 2 in both directions (float).
 */
void conv2d_stride2_f32(int ho, int wo, int kr, int ks, float in[2 * ho + kr][2 * wo + ks],
                        float w[kr][ks], float out[ho][wo])
{
    for (int y = 0; y < ho; y++)
        for (int x = 0; x < wo; x++)
            for (int r = 0; r < kr; r++)
                for (int s = 0; s < ks; s++)
                    out[y][x] += w[r][s] * in[2 * y + r][2 * x + s];
}
