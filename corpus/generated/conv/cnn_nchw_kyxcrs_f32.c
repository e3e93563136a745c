/*
 * CNN layer out[k][y][x] += w[k][c][r][s] in[c][y + r][x + s] (NCHW, stride 1), loop order kyxcrs
 * (float).
 */
void cnn_nchw_kyxcrs_f32(int nk, int nc, int ho, int wo, int kr, int ks, float out[nk][ho][wo],
                         float w[nk][nc][kr][ks], float in[nc][ho + kr][wo + ks])
{
    int k, y, x, c, r, s;

    for (k = 0; k < nk; k++)
        for (y = 0; y < ho; y++)
            for (x = 0; x < wo; x++)
                for (c = 0; c < nc; c++)
                    for (r = 0; r < kr; r++)
                        for (s = 0; s < ks; s++)
                            out[k][y][x] += w[k][c][r][s] * in[c][y + r][x + s];
}
