/*
 * chain2.c -- two dependent matrix products in sequence.
 * Loop bounds are the dataset macros themselves (fixed-size kernel).
 */
#include <chain2.h>

void kernel_chain2(double alpha, double beta,
                   double T[NI][NJ], double A[NI][NK], double B[NK][NJ],
                   double C[NJ][NL], double D[NI][NL])
{
    int i, j, k, l;

    /* T = alpha * A * B */
    for (i = 0; i < NI; i++)
        for (j = 0; j < NJ; j++) {
            T[i][j] = 0.0;
            for (k = 0; k < NK; k++)
                T[i][j] += alpha * A[i][k] * B[k][j];
        }

    /* D = beta * D + T * C */
    for (i = 0; i < NI; i++)
        for (l = 0; l < NL; l++) {
            D[i][l] *= beta;
            for (j = 0; j < NJ; j++)
                D[i][l] += T[i][j] * C[j][l];
        }
}
