/*
 * mvpair -- driver for kernel_mvpair.
 */
#include <stdio.h>

#include <bench/util.h>
#include <mvpair.h>

int main(void)
{
    int m = M, n = N;
    double (*A)[N] = BENCH_ALLOC_2D(double, M, N);
    double *x = BENCH_ALLOC_1D(double, N);
    double *t = BENCH_ALLOC_1D(double, M);
    double *y = BENCH_ALLOC_1D(double, N);
    double *q = BENCH_ALLOC_1D(double, M);
    double *s = BENCH_ALLOC_1D(double, N);

    for (int j = 0; j < n; j++)
        x[j] = 1.0 + (double) (j % 23) / 23.0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            A[i][j] = (double) ((i * 19 + j * 5) % 127) / 127.0 - 0.5;

    bench_timer_start();
    kernel_mvpair(m, n, A, x, t, y, q, s);
    bench_timer_stop();
    bench_timer_print("mvpair (" BENCH_DATASET_NAME ")");

    bench_print_checksum(bench_asum_double(y, N) + bench_asum_double(q, M)
                         + bench_asum_double(s, N));

    bench_free(A);
    bench_free(x);
    bench_free(t);
    bench_free(y);
    bench_free(q);
    bench_free(s);
    return 0;
}
