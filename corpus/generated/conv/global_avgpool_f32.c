/*
 * global average pooling: mean over the image of each channel (float).
 */
void global_avgpool_f32(int nc, int h, int w, float in[nc][h][w], float out[nc])
{
    int c, y, x;

    for (c = 0; c < nc; c++) {
        out[c] = 0.0f;
        for (y = 0; y < h; y++)
            for (x = 0; x < w; x++)
                out[c] += in[c][y][x];
        out[c] = out[c] / (h * w);
    }
}
