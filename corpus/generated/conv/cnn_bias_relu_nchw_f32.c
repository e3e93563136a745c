#include <math.h>

/*
 * CNN layer with bias and ReLU through a local accumulator (NCHW) (float).
 */
void cnn_bias_relu_nchw_f32(int nk, int nc, int ho, int wo, int kr, int ks, float out[nk][ho][wo],
                            float w[nk][nc][kr][ks], float in[nc][ho + kr][wo + ks], float bias[nk])
{
    for (int k = 0; k < nk; k++)
        for (int y = 0; y < ho; y++)
            for (int x = 0; x < wo; x++) {
                float acc = bias[k];
                for (int c = 0; c < nc; c++)
                    for (int r = 0; r < kr; r++)
                        for (int s = 0; s < ks; s++)
                            acc += w[k][c][r][s] * in[c][y + r][x + s];
                out[k][y][x] = fmaxf(acc, 0.0f);
            }
}
