/*
 * CNN backward pass for the input gradient (scatter form): din[c][y + r][x + s] += w[k][c][r][s]
 * dout[k][y][x] (double).
 */
void cnn_backward_data_f64(int nk, int nc, int ho, int wo, int kr, int ks,
                           double din[nc][ho + kr][wo + ks], double w[nk][nc][kr][ks],
                           double dout[nk][ho][wo])
{
    for (int k = 0; k < nk; k++)
        for (int c = 0; c < nc; c++)
            for (int y = 0; y < ho; y++)
                for (int x = 0; x < wo; x++)
                    for (int r = 0; r < kr; r++)
                        for (int s = 0; s < ks; s++)
                            din[c][y + r][x + s] += w[k][c][r][s] * dout[k][y][x];
}
