/*
 * batchmm -- batched small matrix products (the kernel sits in this file,
 * next to main) over VLA parameters.
 */
#include <stdio.h>

#include <bench/util.h>
#include <batchmm.h>

void batchmm(int nbatch, int m, int n, int k, float bias,
             float C[nbatch][m][n], float A[nbatch][m][k], float B[nbatch][k][n])
{
    for (int b = 0; b < nbatch; b++)
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++) {
                C[b][i][j] = bias;
                for (int p = 0; p < k; p++)
                    C[b][i][j] += A[b][i][p] * B[b][p][j];
            }
}

int main(void)
{
    float (*A)[M][K] = BENCH_ALLOC_3D(float, NBATCH, M, K);
    float (*B)[K][N] = BENCH_ALLOC_3D(float, NBATCH, K, N);
    float (*C)[M][N] = BENCH_ALLOC_3D(float, NBATCH, M, N);

    for (int b = 0; b < NBATCH; b++) {
        for (int i = 0; i < M; i++)
            for (int p = 0; p < K; p++)
                A[b][i][p] = (float) ((b + i * 3 + p * 7) % 16) * 0.0625f - 0.5f;
        for (int p = 0; p < K; p++)
            for (int j = 0; j < N; j++)
                B[b][p][j] = (float) ((b * 5 + p + j * 9) % 12) * 0.125f - 0.5f;
    }

    bench_timer_start();
    batchmm(NBATCH, M, N, K, 0.25f, C, A, B);
    bench_timer_stop();
    bench_timer_print("batchmm (" BENCH_DATASET_NAME ")");

    bench_print_checksum(bench_asum_float(&C[0][0][0], BENCH_COUNT3(NBATCH, M, N)));

    bench_free(A);
    bench_free(B);
    bench_free(C);
    return 0;
}
