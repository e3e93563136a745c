/*
 * pointwise (1x1) convolution out[k][y][x] += w[k][c] in[c][y][x] (float).
 */
void pointwise_f32(int nk, int nc, int ho, int wo, float out[nk][ho][wo], float w[nk][nc],
                   float in[nc][ho][wo])
{
    int k, c, y, x;

    for (k = 0; k < nk; k++)
        for (c = 0; c < nc; c++)
            for (y = 0; y < ho; y++)
                for (x = 0; x < wo; x++)
                    out[k][y][x] += w[k][c] * in[c][y][x];
}
