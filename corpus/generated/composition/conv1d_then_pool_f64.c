#include <math.h>

/*
 * 1-D multi-channel convolution followed by max pooling by 2 (fmax) (marked region) (double).
 */
void conv1d_then_pool_f64(int no, int nc, int n, int kw, double x[nc][2 * n + kw],
                          double w[no][nc][kw], double y[no][2 * n], double p[no][n])
{
#pragma scop
    for (int o = 0; o < no; o++)
        for (int c = 0; c < nc; c++)
            for (int i = 0; i < 2 * n; i++)
                for (int k = 0; k < kw; k++)
                    y[o][i] += w[o][c][k] * x[c][i + k];
    for (int o = 0; o < no; o++)
        for (int i = 0; i < n; i++)
            p[o][i] = fmax(y[o][2 * i], y[o][2 * i + 1]);
#pragma endscop
}
