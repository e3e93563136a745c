/*
 * mb_jacobi2d: 5-point Jacobi relaxation with a time loop, alternating
 * between the two grids (each half-step is a stencil). Written against
 * minibench.h; only the marked region is analysed.
 */
#include <stdio.h>
#include <math.h>
#include "minibench.h"

static void kernel_jacobi2d(int tsteps, int n,
                            DATA_TYPE MB_2D(A, N, N, n, n),
                            DATA_TYPE MB_2D(B, N, N, n, n))
{
    int t, i, j;

#pragma scop
    for (t = 0; t < _MB_TSTEPS; t++) {
        for (i = 1; i < _MB_N - 1; i++)
            for (j = 1; j < _MB_N - 1; j++)
                B[i][j] = MB_SCALAR(0.2) * (A[i][j] + A[i][j - 1] + A[i][j + 1]
                                            + A[i - 1][j] + A[i + 1][j]);
        for (i = 1; i < _MB_N - 1; i++)
            for (j = 1; j < _MB_N - 1; j++)
                A[i][j] = MB_SCALAR(0.2) * (B[i][j] + B[i][j - 1] + B[i][j + 1]
                                            + B[i - 1][j] + B[i + 1][j]);
    }
#pragma endscop
}

int main(int argc, char **argv)
{
    int n = N, tsteps = TSTEPS;
    int i, j;
    DATA_TYPE sum = 0;
    DATA_TYPE (*A)[N] = MB_ALLOC_2D(DATA_TYPE, N, N);
    DATA_TYPE (*B)[N] = MB_ALLOC_2D(DATA_TYPE, N, N);

    if (argc > 1)
        tsteps = atoi(argv[1]);
    if (A == NULL || B == NULL) {
        fprintf(stderr, "mb_jacobi2d: out of memory\n");
        return 1;
    }
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++) {
            A[i][j] = ((DATA_TYPE) i * (j + 2) + 2) / n;
            B[i][j] = ((DATA_TYPE) i * (j + 3) + 3) / n;
        }
    kernel_jacobi2d(tsteps, n, A, B);
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++)
            sum += sqrt(fabs(A[i][j]));
    printf(DATA_PRINTF_MODIFIER "\n", sum);
    free(A);
    free(B);
    return 0;
}
