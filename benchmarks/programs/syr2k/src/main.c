/*
 * syr2k -- driver for kernel_syr2k.
 */
#include <stdio.h>

#include <bench/util.h>
#include <syr2k.h>

int main(void)
{
    int n = N, m = M;
    double alpha = 0.75, beta = 1.1;
    double (*C)[N] = BENCH_ALLOC_2D(double, N, N);
    double (*A)[M] = BENCH_ALLOC_2D(double, N, M);
    double (*B)[M] = BENCH_ALLOC_2D(double, N, M);

    for (int i = 0; i < n; i++) {
        for (int k = 0; k < m; k++) {
            A[i][k] = (double) ((3 * i + 2 * k + 5) % 71) / 71.0 - 0.5;
            B[i][k] = (double) ((i + 7 * k + 1) % 53) / 106.0;
        }
        for (int j = 0; j < n; j++)
            C[i][j] = (double) ((i * j + 3) % 29) / 29.0;
    }

    bench_timer_start();
    kernel_syr2k(n, m, alpha, beta, C, A, B);
    bench_timer_stop();
    bench_timer_print("syr2k (" BENCH_DATASET_NAME ")");

    bench_print_checksum(bench_sum_double(&C[0][0], BENCH_COUNT2(N, N)));

    bench_free(C);
    bench_free(A);
    bench_free(B);
    return 0;
}
