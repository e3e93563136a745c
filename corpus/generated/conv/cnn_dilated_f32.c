/*
 * CNN layer with dilation 2 (NCHW) (float).
 */
void cnn_dilated_f32(int nk, int nc, int ho, int wo, int kr, int ks, float out[nk][ho][wo],
                     float w[nk][nc][kr][ks], float in[nc][ho + 2 * kr][wo + 2 * ks])
{
    for (int k = 0; k < nk; k++)
        for (int c = 0; c < nc; c++)
            for (int y = 0; y < ho; y++)
                for (int x = 0; x < wo; x++)
                    for (int r = 0; r < kr; r++)
                        for (int s = 0; s < ks; s++)
                            out[k][y][x] += w[k][c][r][s] * in[c][y + 2 * r][x + 2 * s];
}
