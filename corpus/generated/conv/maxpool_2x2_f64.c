#include <math.h>

/*
 * 2x2 max pooling with stride 2 via fmax, per channel (double).
 */
void maxpool_2x2_f64(int nc, int ho, int wo, double in[nc][2 * ho][2 * wo], double out[nc][ho][wo])
{
    for (int c = 0; c < nc; c++)
        for (int y = 0; y < ho; y++)
            for (int x = 0; x < wo; x++)
                out[c][y][x] = fmax(fmax(in[c][2 * y][2 * x], in[c][2 * y][2 * x + 1]),
                    fmax(in[c][2 * y + 1][2 * x], in[c][2 * y + 1][2 * x + 1]));
}
