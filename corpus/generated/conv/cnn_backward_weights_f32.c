/*
 * CNN backward pass for the weight gradient: dw[k][c][r][s] += dout[k][y][x] in[c][y + r][x + s]
 * (float).
 */
void cnn_backward_weights_f32(int nk, int nc, int ho, int wo, int kr, int ks,
                              float dw[nk][nc][kr][ks], float dout[nk][ho][wo],
                              float in[nc][ho + kr][wo + ks])
{
    for (int k = 0; k < nk; k++)
        for (int c = 0; c < nc; c++)
            for (int r = 0; r < kr; r++)
                for (int s = 0; s < ks; s++)
                    for (int y = 0; y < ho; y++)
                        for (int x = 0; x < wo; x++)
                            dw[k][c][r][s] += dout[k][y][x] * in[c][y + r][x + s];
}
