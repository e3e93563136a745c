/*
 * CNN layer out[k][y][x] += w[k][c][r][s] in[c][y + r][x + s] (NCHW, stride 1), loop order yxkcrs
 * (double).
 */
void cnn_nchw_yxkcrs_f64(int nk, int nc, int ho, int wo, int kr, int ks, double out[nk][ho][wo],
                         double w[nk][nc][kr][ks], double in[nc][ho + kr][wo + ks])
{
    for (int y = 0; y < ho; ++y)
        for (int x = 0; x < wo; ++x)
            for (int k = 0; k < nk; ++k)
                for (int c = 0; c < nc; ++c)
                    for (int r = 0; r < kr; ++r)
                        for (int s = 0; s < ks; ++s)
                            out[k][y][x] += w[k][c][r][s] * in[c][y + r][x + s];
}
