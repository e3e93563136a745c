/*
 * layout change of an activation tensor, NCHW to NHWC (double).
 */
void nchw_to_nhwc_f64(int nb, int nc, int h, int w, double X[nb][nc][h][w], double Y[nb][h][w][nc])
{
    int b, c, y, x;

    for (b = 0; b < nb; b++)
        for (c = 0; c < nc; c++)
            for (y = 0; y < h; y++)
                for (x = 0; x < w; x++)
                    Y[b][y][x][c] = X[b][c][y][x];
}
