/*
 * flatmm -- driver for flat_dgemm_gemv: sizes are variables, matrices are
 * flat row-major blocks from bench_alloc.
 */
#include <stdio.h>

#include <bench/util.h>
#include <flatmm.h>

int main(void)
{
    int m = FLATMM_M, n = FLATMM_N, k = FLATMM_K;
    double *A = bench_alloc(BENCH_COUNT2(m, k), sizeof(double));
    double *B = bench_alloc(BENCH_COUNT2(k, n), sizeof(double));
    double *C = bench_alloc(BENCH_COUNT2(m, n), sizeof(double));
    double *x = bench_alloc((size_t) n, sizeof(double));
    double *y = bench_alloc((size_t) m, sizeof(double));

    for (int i = 0; i < m; i++)
        for (int p = 0; p < k; p++)
            A[(size_t) i * k + p] = (double) ((i * 29 + p * 3) % 67) / 67.0 - 0.5;
    for (int p = 0; p < k; p++)
        for (int j = 0; j < n; j++)
            B[(size_t) p * n + j] = (double) ((p * 7 + j * 11 + 5) % 59) / 59.0 - 0.25;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++)
            C[(size_t) i * n + j] = (double) ((i + j) % 9) / 9.0;
    for (int j = 0; j < n; j++)
        x[j] = (double) (j % 10) / 10.0 - 0.45;

    bench_timer_start();
    flat_dgemm_gemv(m, n, k, 1.2, 0.9, A, B, C, x, y);
    bench_timer_stop();
    bench_timer_print("flatmm (" BENCH_DATASET_NAME ")");

    bench_print_checksum(bench_asum_double(C, BENCH_COUNT2(m, n))
                         + bench_asum_double(y, (size_t) m));

    bench_free(A);
    bench_free(B);
    bench_free(C);
    bench_free(x);
    bench_free(y);
    return 0;
}
