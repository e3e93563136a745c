#include <math.h>

/*
 * Convolution layer with bias and ReLU: the bias initialises each output
 * (imperfect nest), the channel/filter loops accumulate, a second top-level
 * nest applies the activation. Marked region.
 */
void conv_bias_relu(int nout, int nin, int ho, int wo, int kr, int ks,
                    double out[nout][ho][wo], double bias[nout],
                    double wt[nout][nin][kr][ks],
                    double in[nin][ho + kr - 1][wo + ks - 1])
{
    int k, c, y, x, r, s;

#pragma scop
    for (k = 0; k < nout; k++)
        for (y = 0; y < ho; y++)
            for (x = 0; x < wo; x++) {
                out[k][y][x] = bias[k];
                for (c = 0; c < nin; c++)
                    for (r = 0; r < kr; r++)
                        for (s = 0; s < ks; s++)
                            out[k][y][x] += wt[k][c][r][s] * in[c][y + r][x + s];
            }
    for (k = 0; k < nout; k++)
        for (y = 0; y < ho; y++)
            for (x = 0; x < wo; x++)
                out[k][y][x] = fmax(out[k][y][x], 0.0);
#pragma endscop
}
