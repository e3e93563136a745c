/* 2-D valid convolution with a fixed 3x3 kernel on a fixed-size image. */
#define H 130
#define W 130
#define K 3

void conv2d_3x3(double img[H][W], double ker[K][K], double res[H - K + 1][W - K + 1])
{
    int y, x, r, s;

    for (y = 0; y <= H - K; y++)
        for (x = 0; x <= W - K; x++) {
            double acc = 0.0;
            for (r = 0; r < K; r++)
                for (s = 0; s < K; s++)
                    acc += ker[r][s] * img[y + r][x + s];
            res[y][x] = acc;
        }
}
