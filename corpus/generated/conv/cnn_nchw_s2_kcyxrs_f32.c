/*
 * CNN layer with stride 2 (NCHW), loop order kcyxrs (float).
 */
void cnn_nchw_s2_kcyxrs_f32(int nk, int nc, int ho, int wo, int kr, int ks, float out[nk][ho][wo],
                            float w[nk][nc][kr][ks], float in[nc][2 * ho + kr][2 * wo + ks])
{
    for (int k = 0; k < nk; k++)
        for (int c = 0; c < nc; c++)
            for (int y = 0; y < ho; y++)
                for (int x = 0; x < wo; x++)
                    for (int r = 0; r < kr; r++)
                        for (int s = 0; s < ks; s++)
                            out[k][y][x] += w[k][c][r][s] * in[c][2 * y + r][2 * x + s];
}
