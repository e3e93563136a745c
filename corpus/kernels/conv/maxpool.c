#include <math.h>

/* 2x2 max pooling with stride 2; bounds use floor division by a constant. */
void maxpool2x2(int h, int w, double in[h][w], double out[h / 2][w / 2])
{
    for (int y = 0; y < h / 2; y++)
        for (int x = 0; x < w / 2; x++)
            out[y][x] = fmax(fmax(in[2 * y][2 * x], in[2 * y][2 * x + 1]),
                             fmax(in[2 * y + 1][2 * x], in[2 * y + 1][2 * x + 1]));
}
