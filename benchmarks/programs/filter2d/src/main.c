/*
 * filter2d -- an unsharp mask: blur the image with a K x K filter, then
 * push every pixel away from its blurred value.  The kernel lives in this
 * file, next to main.
 */
#include <stdio.h>

#include <bench/util.h>
#include <filter2d.h>

void filter2d_kernel(pixel_t amount, pixel_t img[H][W], pixel_t wgt[K][K],
                     pixel_t blur[OH][OW], pixel_t out[OH][OW])
{
    int y, x, r, c;

    /* blur = img (*) wgt over the valid region */
    for (y = 0; y < OH; y++)
        for (x = 0; x < OW; x++) {
            blur[y][x] = 0.0f;
            for (r = 0; r < K; r++)
                for (c = 0; c < K; c++)
                    blur[y][x] += wgt[r][c] * img[y + r][x + c];
        }

    /* out = centre + amount * (centre - blur) */
    for (y = 0; y < OH; y++)
        for (x = 0; x < OW; x++)
            out[y][x] = img[y + RAD][x + RAD]
                        + amount * (img[y + RAD][x + RAD] - blur[y][x]);
}

static void init_image(pixel_t img[H][W], pixel_t wgt[K][K])
{
    float total = 0.0f;

    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++)
            img[y][x] = (pixel_t) (((x / 8 + y / 8) % 2) * 128 + (x * 5 + y * 3) % 64);
    /* a tent filter, normalised to sum 1 */
    for (int r = 0; r < K; r++)
        for (int c = 0; c < K; c++) {
            int dr = r < RAD ? RAD - r : r - RAD;
            int dc = c < RAD ? RAD - c : c - RAD;
            wgt[r][c] = (pixel_t) ((RAD + 1 - dr) * (RAD + 1 - dc));
            total += wgt[r][c];
        }
    for (int r = 0; r < K; r++)
        for (int c = 0; c < K; c++)
            wgt[r][c] /= total;
}

int main(void)
{
    pixel_t (*img)[W] = BENCH_ALLOC_2D(pixel_t, H, W);
    pixel_t (*wgt)[K] = BENCH_ALLOC_2D(pixel_t, K, K);
    pixel_t (*blur)[OW] = BENCH_ALLOC_2D(pixel_t, OH, OW);
    pixel_t (*out)[OW] = BENCH_ALLOC_2D(pixel_t, OH, OW);

    init_image(img, wgt);

    bench_timer_start();
    filter2d_kernel(0.6f, img, wgt, blur, out);
    bench_timer_stop();
    bench_timer_print("filter2d (" BENCH_DATASET_NAME ")");

    bench_print_checksum(bench_sum_float(&out[0][0], BENCH_COUNT2(OH, OW)));

    bench_free(img);
    bench_free(wgt);
    bench_free(blur);
    bench_free(out);
    return 0;
}
