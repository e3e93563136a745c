/*
 * average pooling over a kr x ks window through an accumulator (float).
 */
void avgpool_f32(int nc, int ho, int wo, int kr, int ks, float in[nc][ho + kr][wo + ks],
                 float out[nc][ho][wo])
{
    int c, y, x, r, s;

    for (c = 0; c < nc; c++)
        for (y = 0; y < ho; y++)
            for (x = 0; x < wo; x++) {
                float acc = 0.0f;
                for (r = 0; r < kr; r++)
                    for (s = 0; s < ks; s++)
                        acc += in[c][y + r][x + s];
                out[c][y][x] = acc / (kr * ks);
            }
}
