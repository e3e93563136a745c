/*
 * chain3 -- driver for kernel_chain3.
 */
#include <stdio.h>

#include <bench/util.h>
#include <chain3.h>

static void init_matrix(int rows, int cols, double M[rows][cols], int seed)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            M[r][c] = (double) ((r * (seed + 2) + c * (2 * seed + 1) + seed) % 64) / 128.0 - 0.25;
}

int main(void)
{
    int ni = NI, nj = NJ, nk = NK, nl = NL, nm = NM;
    double (*A)[NK] = BENCH_ALLOC_2D(double, NI, NK);
    double (*B)[NJ] = BENCH_ALLOC_2D(double, NK, NJ);
    double (*C)[NM] = BENCH_ALLOC_2D(double, NJ, NM);
    double (*D)[NL] = BENCH_ALLOC_2D(double, NM, NL);
    double (*E)[NJ] = BENCH_ALLOC_2D(double, NI, NJ);
    double (*F)[NL] = BENCH_ALLOC_2D(double, NJ, NL);
    double (*G)[NL] = BENCH_ALLOC_2D(double, NI, NL);

    init_matrix(ni, nk, A, 1);
    init_matrix(nk, nj, B, 2);
    init_matrix(nj, nm, C, 3);
    init_matrix(nm, nl, D, 4);

    bench_timer_start();
    kernel_chain3(ni, nj, nk, nl, nm, E, A, B, F, C, D, G);
    bench_timer_stop();
    bench_timer_print("chain3 (" BENCH_DATASET_NAME ")");

    bench_print_checksum(bench_asum_double(&G[0][0], BENCH_COUNT2(NI, NL)));

    bench_free(A);
    bench_free(B);
    bench_free(C);
    bench_free(D);
    bench_free(E);
    bench_free(F);
    bench_free(G);
    return 0;
}
