/*
 * CNN convolution layer (single precision, stride 1, no padding):
 * out[k][y][x] += wt[k][c][r][s] * in[c][y + r][x + s].
 * Loop order k, c, y, x, r, s; out is initialised by the caller.
 */
void conv_layer(int nout, int nin, int ho, int wo, int kr, int ks,
                float out[nout][ho][wo], float wt[nout][nin][kr][ks],
                float in[nin][ho + kr - 1][wo + ks - 1])
{
    int k, c, y, x, r, s;

    for (k = 0; k < nout; k++)
        for (c = 0; c < nin; c++)
            for (y = 0; y < ho; y++)
                for (x = 0; x < wo; x++)
                    for (r = 0; r < kr; r++)
                        for (s = 0; s < ks; s++)
                            out[k][y][x] += wt[k][c][r][s] * in[c][y + r][x + s];
}
