/*
 * mb_gemm: C <- beta * C + alpha * A B, written against minibench.h.
 * Column-oriented: for each column j of C, scale it, then add the
 * contributions of the columns of A. Only the marked region is analysed;
 * main's loops (allocation, initialisation, printing) are not.
 */
#include <stdio.h>
#include <math.h>
#include "minibench.h"

static void init_arrays(int ni, int nj, int nk, DATA_TYPE *alpha, DATA_TYPE *beta,
                        DATA_TYPE MB_2D(C, NI, NJ, ni, nj),
                        DATA_TYPE MB_2D(A, NI, NK, ni, nk),
                        DATA_TYPE MB_2D(B, NK, NJ, nk, nj))
{
    int i, j;

    *alpha = MB_SCALAR(1.25);
    *beta = MB_SCALAR(0.75);
    for (i = 0; i < ni; i++)
        for (j = 0; j < nj; j++)
            C[i][j] = (DATA_TYPE) ((i * 3 + j) % 11) / 11;
    for (i = 0; i < ni; i++)
        for (j = 0; j < nk; j++)
            A[i][j] = (DATA_TYPE) ((i + j * 5) % 13) / 13;
    for (i = 0; i < nk; i++)
        for (j = 0; j < nj; j++)
            B[i][j] = (DATA_TYPE) ((i * 7 + j * 2) % 17) / 17;
}

static void kernel_gemm(int ni, int nj, int nk, DATA_TYPE alpha, DATA_TYPE beta,
                        DATA_TYPE MB_2D(C, NI, NJ, ni, nj),
                        DATA_TYPE MB_2D(A, NI, NK, ni, nk),
                        DATA_TYPE MB_2D(B, NK, NJ, nk, nj))
{
    int i, j, k;

#pragma scop
    for (j = 0; j < _MB_NJ; j++) {
        for (i = 0; i < _MB_NI; i++)
            C[i][j] *= beta;
        for (k = 0; k < _MB_NK; k++)
            for (i = 0; i < _MB_NI; i++)
                C[i][j] += alpha * B[k][j] * A[i][k];
    }
#pragma endscop
}

int main(void)
{
    int ni = NI, nj = NJ, nk = NK;
    int i, j;
    DATA_TYPE alpha, beta, checksum = 0;
    DATA_TYPE (*C)[NJ] = MB_ALLOC_2D(DATA_TYPE, NI, NJ);
    DATA_TYPE (*A)[NK] = MB_ALLOC_2D(DATA_TYPE, NI, NK);
    DATA_TYPE (*B)[NJ] = MB_ALLOC_2D(DATA_TYPE, NK, NJ);

    if (C == NULL || A == NULL || B == NULL) {
        fprintf(stderr, "mb_gemm: out of memory\n");
        return 1;
    }
    init_arrays(ni, nj, nk, &alpha, &beta, C, A, B);
    kernel_gemm(ni, nj, nk, alpha, beta, C, A, B);
    for (i = 0; i < ni; i++)
        for (j = 0; j < nj; j++)
            checksum += fabs(C[i][j]);
    printf(DATA_PRINTF_MODIFIER "\n", checksum);
    free(C);
    free(A);
    free(B);
    return 0;
}
