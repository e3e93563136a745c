/*
 * layout change of an activation tensor, NHWC to NCHW, loops in write order (float).
 */
void nhwc_to_nchw_f32(int nb, int nc, int h, int w, float X[nb][h][w][nc], float Y[nb][nc][h][w])
{
    int b, c, y, x;

    for (b = 0; b < nb; b++)
        for (c = 0; c < nc; c++)
            for (y = 0; y < h; y++)
                for (x = 0; x < w; x++)
                    Y[b][c][y][x] = X[b][y][x][c];
}
