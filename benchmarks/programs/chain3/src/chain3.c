/*
 * chain3.c -- G = (A * B) * (C * D), three nests in sequence.
 */
#include <chain3.h>

void kernel_chain3(int ni, int nj, int nk, int nl, int nm,
                   double E[ni][nj], double A[ni][nk], double B[nk][nj],
                   double F[nj][nl], double C[nj][nm], double D[nm][nl],
                   double G[ni][nl])
{
    /* E = A * B */
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++) {
            E[i][j] = 0.0;
            for (int k = 0; k < nk; k++)
                E[i][j] += A[i][k] * B[k][j];
        }

    /* F = C * D */
    for (int j = 0; j < nj; j++)
        for (int l = 0; l < nl; l++) {
            F[j][l] = 0.0;
            for (int m = 0; m < nm; m++)
                F[j][l] += C[j][m] * D[m][l];
        }

    /* G = E * F */
    for (int i = 0; i < ni; i++)
        for (int l = 0; l < nl; l++) {
            G[i][l] = 0.0;
            for (int j = 0; j < nj; j++)
                G[i][l] += E[i][j] * F[j][l];
        }
}
