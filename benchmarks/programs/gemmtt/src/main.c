/*
 * gemmtt -- driver for kernel_gemmtt.
 */
#include <stdio.h>

#include <bench/util.h>
#include <gemmtt.h>

int main(void)
{
    int n = N, k = K;
    double (*A)[N] = BENCH_ALLOC_2D(double, K, N);
    double (*B)[K] = BENCH_ALLOC_2D(double, N, K);
    double (*C)[N] = BENCH_ALLOC_2D(double, N, N);
    double (*S)[N] = BENCH_ALLOC_2D(double, N, N);

    for (int p = 0; p < k; p++)
        for (int i = 0; i < n; i++)
            A[p][i] = (double) ((p * 13 + i * 17 + 2) % 43) / 43.0 - 0.5;
    for (int j = 0; j < n; j++)
        for (int p = 0; p < k; p++)
            B[j][p] = (double) ((j * 2 + p * 9 + 4) % 37) / 37.0;

    bench_timer_start();
    kernel_gemmtt(n, k, A, B, C, S);
    bench_timer_stop();
    bench_timer_print("gemmtt (" BENCH_DATASET_NAME ")");

    bench_print_checksum(bench_asum_double(&S[0][0], BENCH_COUNT2(N, N)));

    bench_free(A);
    bench_free(B);
    bench_free(C);
    bench_free(S);
    return 0;
}
