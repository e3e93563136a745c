/*
 * filter2d.h -- single-precision unsharp mask of an H x W image with a
 * K x K smoothing filter (valid region only, OH x OW outputs).
 *
 * Dataset: -DSMALL_DATASET, -DMEDIUM_DATASET (default) or -DLARGE_DATASET.
 */
#ifndef FILTER2D_H
#define FILTER2D_H

#if defined(SMALL_DATASET)
#  define H 48
#  define W 64
#  define K 5
#elif defined(LARGE_DATASET)
#  define H 4000
#  define W 4000
#  define K 11
#else /* MEDIUM_DATASET */
#  define H 2400
#  define W 2600
#  define K 11
#endif

#define OH (H - K + 1)
#define OW (W - K + 1)
#define RAD (K / 2)

typedef float pixel_t;

void filter2d_kernel(pixel_t amount, pixel_t img[H][W], pixel_t wgt[K][K],
                     pixel_t blur[OH][OW], pixel_t out[OH][OW]);

#endif /* FILTER2D_H */
