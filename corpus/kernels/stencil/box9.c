/* 9-point box filter (2-D, single precision), out-of-place. */
void box9(int h, int w, float in[h][w], float out[h][w])
{
    int y, x;

    for (y = 1; y < h - 1; y++)
        for (x = 1; x < w - 1; x++)
            out[y][x] = (in[y - 1][x - 1] + in[y - 1][x] + in[y - 1][x + 1]
                         + in[y][x - 1] + in[y][x] + in[y][x + 1]
                         + in[y + 1][x - 1] + in[y + 1][x] + in[y + 1][x + 1]) / 9.0f;
}
