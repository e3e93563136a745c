/*
 * CNN layer in NHWC layout, out[y][x][k] += w[r][s][c][k] in[y + r][x + s][c], loop order yxkrsc
 * (float).
 */
void cnn_nhwc_yxkrsc_f32(int nk, int nc, int ho, int wo, int kr, int ks, float out[ho][wo][nk],
                         float w[kr][ks][nc][nk], float in[ho + kr][wo + ks][nc])
{
    for (int y = 0; y < ho; y++)
        for (int x = 0; x < wo; x++)
            for (int k = 0; k < nk; k++)
                for (int r = 0; r < kr; r++)
                    for (int s = 0; s < ks; s++)
                        for (int c = 0; c < nc; c++)
                            out[y][x][k] += w[r][s][c][k] * in[y + r][x + s][c];
}
