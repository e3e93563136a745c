/*
 * CNN layer with stride 2 (NCHW), loop order kyxcrs (float).
 */
void cnn_nchw_s2_kyxcrs_f32(int nk, int nc, int ho, int wo, int kr, int ks, float out[nk][ho][wo],
                            float w[nk][nc][kr][ks], float in[nc][2 * ho + kr][2 * wo + ks])
{
    int k, y, x, c, r, s;

    for (k = 0; k < nk; k++)
        for (y = 0; y < ho; y++)
            for (x = 0; x < wo; x++)
                for (c = 0; c < nc; c++)
                    for (r = 0; r < kr; r++)
                        for (s = 0; s < ks; s++)
                            out[k][y][x] += w[k][c][r][s] * in[c][2 * y + r][2 * x + s];
}
