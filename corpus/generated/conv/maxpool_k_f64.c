#include <math.h>

/*
 * max pooling over a kr x ks window, stride 1, accumulated with fmax (double).
 */
void maxpool_k_f64(int nc, int ho, int wo, int kr, int ks, double in[nc][ho + kr][wo + ks],
                   double out[nc][ho][wo])
{
    for (int c = 0; c < nc; c++)
        for (int y = 0; y < ho; y++)
            for (int x = 0; x < wo; x++)
                for (int r = 0; r < kr; r++)
                    for (int s = 0; s < ks; s++)
                        out[c][y][x] = fmax(out[c][y][x], in[c][y + r][x + s]);
}
