/*
 * Weighted 9-point filter applied tsteps times (single precision): filter
 * into tmp, then copy back. Marked region.
 */
void box9_steps(int tsteps, int h, int w, float img[h][w], float tmp[h][w])
{
    int t, y, x;

#pragma scop
    for (t = 0; t < tsteps; t++) {
        for (y = 1; y < h - 1; y++)
            for (x = 1; x < w - 1; x++)
                tmp[y][x] = 0.25f * img[y][x]
                            + 0.125f * (img[y - 1][x] + img[y + 1][x] + img[y][x - 1] + img[y][x + 1])
                            + 0.0625f * (img[y - 1][x - 1] + img[y - 1][x + 1]
                                         + img[y + 1][x - 1] + img[y + 1][x + 1]);
        for (y = 1; y < h - 1; y++)
            for (x = 1; x < w - 1; x++)
                img[y][x] = tmp[y][x];
    }
#pragma endscop
}
