/*
 * tucker -- driver for tucker_project.
 */
#include <stdio.h>

#include <bench/util.h>
#include <tucker.h>

int main(void)
{
    double (*X)[NB][NC] = BENCH_ALLOC_3D(double, NA, NB, NC);
    double (*U)[NB] = BENCH_ALLOC_2D(double, NP, NB);
    double (*V)[NC] = BENCH_ALLOC_2D(double, NQ, NC);
    double (*T)[NP][NC] = BENCH_ALLOC_3D(double, NA, NP, NC);
    double (*Y)[NP][NQ] = BENCH_ALLOC_3D(double, NA, NP, NQ);

    for (int a = 0; a < NA; a++)
        for (int b = 0; b < NB; b++)
            for (int c = 0; c < NC; c++)
                X[a][b][c] = (double) ((a * 7 + b * 3 + c * 5) % 29) / 29.0 - 0.4;
    for (int p = 0; p < NP; p++)
        for (int b = 0; b < NB; b++)
            U[p][b] = (double) ((p * b + 1) % 23) / 23.0 - 0.5;
    for (int q = 0; q < NQ; q++)
        for (int c = 0; c < NC; c++)
            V[q][c] = (double) ((q + 3 * c) % 17) / 17.0 - 0.5;

    bench_timer_start();
    tucker_project(NA, NB, NC, NP, NQ, X, U, V, T, Y);
    bench_timer_stop();
    bench_timer_print("tucker (" BENCH_DATASET_NAME ")");

    bench_print_checksum(bench_asum_double(&Y[0][0][0], BENCH_COUNT3(NA, NP, NQ)));

    bench_free(X);
    bench_free(U);
    bench_free(V);
    bench_free(T);
    bench_free(Y);
    return 0;
}
