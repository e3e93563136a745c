/*
 * gemm -- driver: initialise A, B, C, time kernel_gemm, print a checksum.
 */
#include <stdio.h>

#include <bench/util.h>
#include <gemm.h>

static void init_arrays(int ni, int nj, int nk, DATA_TYPE *alpha, DATA_TYPE *beta,
                        DATA_TYPE C[NI][NJ], DATA_TYPE A[NI][NK], DATA_TYPE B[NK][NJ])
{
    *alpha = 1.5;
    *beta = 0.8;
    for (int i = 0; i < ni; i++)
        for (int k = 0; k < nk; k++)
            A[i][k] = (DATA_TYPE) ((i * 11 + k * 3 + 1) % 97) / 97.0 - 0.5;
    for (int k = 0; k < nk; k++)
        for (int j = 0; j < nj; j++)
            B[k][j] = (DATA_TYPE) ((k * 5 + j * 13 + 7) % 89) / 89.0 - 0.25;
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++)
            C[i][j] = (DATA_TYPE) ((i + j * 2) % 31) / 31.0;
}

int main(void)
{
    int ni = NI, nj = NJ, nk = NK;
    DATA_TYPE alpha, beta;
    DATA_TYPE (*C)[NJ] = BENCH_ALLOC_2D(DATA_TYPE, NI, NJ);
    DATA_TYPE (*A)[NK] = BENCH_ALLOC_2D(DATA_TYPE, NI, NK);
    DATA_TYPE (*B)[NJ] = BENCH_ALLOC_2D(DATA_TYPE, NK, NJ);

    init_arrays(ni, nj, nk, &alpha, &beta, C, A, B);

    bench_timer_start();
    kernel_gemm(ni, nj, nk, alpha, beta, C, A, B);
    bench_timer_stop();
    bench_timer_print("gemm (" BENCH_DATASET_NAME ")");

    bench_print_checksum(bench_sum_double(&C[0][0], BENCH_COUNT2(NI, NJ)));

    bench_free(C);
    bench_free(A);
    bench_free(B);
    return 0;
}
