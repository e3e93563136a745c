/*
 * CNN layer over a mini-batch, out[b][k][y][x], loop order bkcyxrs (float).
 */
void cnn_batch_bkcyxrs_f32(int nb, int nk, int nc, int ho, int wo, int kr, int ks,
                           float out[nb][nk][ho][wo], float w[nk][nc][kr][ks],
                           float in[nb][nc][ho + kr][wo + ks])
{
    int b, k, c, y, x, r, s;

    for (b = 0; b < nb; b++)
        for (k = 0; k < nk; k++)
            for (c = 0; c < nc; c++)
                for (y = 0; y < ho; y++)
                    for (x = 0; x < wo; x++)
                        for (r = 0; r < kr; r++)
                            for (s = 0; s < ks; s++)
                                out[b][k][y][x] += w[k][c][r][s] * in[b][c][y + r][x + s];
}
