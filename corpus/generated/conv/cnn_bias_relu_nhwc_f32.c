#include <math.h>

/*
 * CNN layer with bias and ReLU (NHWC), accumulator per output element (float).
 */
void cnn_bias_relu_nhwc_f32(int nk, int nc, int ho, int wo, int kr, int ks, float out[ho][wo][nk],
                            float w[kr][ks][nc][nk], float in[ho + kr][wo + ks][nc], float bias[nk])
{
    for (int y = 0; y < ho; y++)
        for (int x = 0; x < wo; x++)
            for (int k = 0; k < nk; k++) {
                float acc = bias[k];
                for (int r = 0; r < kr; r++)
                    for (int s = 0; s < ks; s++)
                        for (int c = 0; c < nc; c++)
                            acc += w[r][s][c][k] * in[y + r][x + s][c];
                out[y][x][k] = fmaxf(acc, 0.0f);
            }
}
