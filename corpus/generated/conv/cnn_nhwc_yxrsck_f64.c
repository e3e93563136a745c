/*
 * CNN layer in NHWC layout, out[y][x][k] += w[r][s][c][k] in[y + r][x + s][c], loop order yxrsck
 * (double).
 */
void cnn_nhwc_yxrsck_f64(int nk, int nc, int ho, int wo, int kr, int ks, double out[ho][wo][nk],
                         double w[kr][ks][nc][nk], double in[ho + kr][wo + ks][nc])
{
    for (int y = 0; y < ho; y++)
        for (int x = 0; x < wo; x++)
            for (int r = 0; r < kr; r++)
                for (int s = 0; s < ks; s++)
                    for (int c = 0; c < nc; c++)
                        for (int k = 0; k < nk; k++)
                            out[y][x][k] += w[r][s][c][k] * in[y + r][x + s][c];
}
