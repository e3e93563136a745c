/*
 * CNN layer over a mini-batch, out[b][k][y][x], loop order bkyxcrs (double).
 */
void cnn_batch_bkyxcrs_f64(int nb, int nk, int nc, int ho, int wo, int kr, int ks,
                           double out[nb][nk][ho][wo], double w[nk][nc][kr][ks],
                           double in[nb][nc][ho + kr][wo + ks])
{
    for (int b = 0; b < nb; ++b)
        for (int k = 0; k < nk; ++k)
            for (int y = 0; y < ho; ++y)
                for (int x = 0; x < wo; ++x)
                    for (int c = 0; c < nc; ++c)
                        for (int r = 0; r < kr; ++r)
                            for (int s = 0; s < ks; ++s)
                                out[b][k][y][x] += w[k][c][r][s] * in[b][c][y + r][x + s];
}
