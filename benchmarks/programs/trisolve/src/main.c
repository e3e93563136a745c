/*
 * trisolve -- driver for kernel_trisolve.  L has a dominant diagonal and
 * small off-diagonal entries, so the solution stays bounded.
 */
#include <stdio.h>

#include <bench/util.h>
#include <trisolve.h>

int main(void)
{
    int n = N, nrhs = NRHS;
    double (*L)[N] = BENCH_ALLOC_2D(double, N, N);
    double (*B)[NRHS] = BENCH_ALLOC_2D(double, N, NRHS);

    for (int i = 0; i < n; i++) {
        for (int k = 0; k < i; k++)
            L[i][k] = (double) ((i * 3 + k * 11) % 19 - 9) / (9.0 * n);
        L[i][i] = 2.0 + (double) (i % 5) * 0.25;
        for (int j = 0; j < nrhs; j++)
            B[i][j] = (double) ((i + 2 * j) % 37) / 37.0 + 0.5;
    }

    bench_timer_start();
    kernel_trisolve(n, nrhs, L, B);
    bench_timer_stop();
    bench_timer_print("trisolve (" BENCH_DATASET_NAME ")");

    bench_print_checksum(bench_sum_double(&B[0][0], BENCH_COUNT2(N, NRHS)));

    bench_free(L);
    bench_free(B);
    return 0;
}
