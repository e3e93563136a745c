/*
 * CNN layer with 'same' zero padding: taps outside the image are skipped by an affine guard (3x3
 * filter) (float).
 */
void cnn_same_padding_f32(int nk, int nc, int h, int w, float out[nk][h][w],
                          float wt[nk][nc][3][3], float in[nc][h][w])
{
    int k, c, y, x, r, s;

    for (k = 0; k < nk; ++k)
        for (c = 0; c < nc; ++c)
            for (y = 0; y < h; ++y)
                for (x = 0; x < w; ++x)
                    for (r = 0; r < 3; ++r)
                        for (s = 0; s < 3; ++s)
                            if (y + r >= 1 && y + r <= h && x + s >= 1 && x + s <= w)
                                out[k][y][x] += wt[k][c][r][s] * in[c][y + r - 1][x + s - 1];
}
