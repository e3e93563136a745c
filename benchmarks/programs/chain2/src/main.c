/*
 * chain2 -- driver for kernel_chain2.
 */
#include <stdio.h>

#include <bench/util.h>
#include <chain2.h>

static void fill(int rows, int cols, double *a, int p, int q, int m, double shift)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            a[(size_t) r * cols + c] = (double) ((r * p + c * q + 1) % m) / (double) m - shift;
}

int main(void)
{
    double alpha = 1.25, beta = 0.5;
    double (*T)[NJ] = BENCH_ALLOC_2D(double, NI, NJ);
    double (*A)[NK] = BENCH_ALLOC_2D(double, NI, NK);
    double (*B)[NJ] = BENCH_ALLOC_2D(double, NK, NJ);
    double (*C)[NL] = BENCH_ALLOC_2D(double, NJ, NL);
    double (*D)[NL] = BENCH_ALLOC_2D(double, NI, NL);

    fill(NI, NK, &A[0][0], 7, 3, 103, 0.5);
    fill(NK, NJ, &B[0][0], 2, 9, 61, 0.5);
    fill(NJ, NL, &C[0][0], 5, 1, 83, 0.25);
    fill(NI, NL, &D[0][0], 3, 4, 47, 0.0);

    bench_timer_start();
    kernel_chain2(alpha, beta, T, A, B, C, D);
    bench_timer_stop();
    bench_timer_print("chain2 (" BENCH_DATASET_NAME ")");

    bench_print_checksum(bench_sum_double(&D[0][0], BENCH_COUNT2(NI, NL)));

    bench_free(T);
    bench_free(A);
    bench_free(B);
    bench_free(C);
    bench_free(D);
    return 0;
}
