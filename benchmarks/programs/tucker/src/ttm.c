/*
 * ttm.c -- mode-2 then mode-3 tensor-times-matrix products, each written
 * as one dot product per output element.
 */
#include <tucker.h>

void tucker_project(int na, int nb, int nc, int np, int nq,
                    double X[NA][NB][NC], double U[NP][NB], double V[NQ][NC],
                    double T[NA][NP][NC], double Y[NA][NP][NQ])
{
    double s;

    for (int a = 0; a < na; a++)
        for (int p = 0; p < np; p++)
            for (int c = 0; c < nc; c++) {
                s = 0.0;
                for (int b = 0; b < nb; b++)
                    s += X[a][b][c] * U[p][b];
                T[a][p][c] = s;
            }

    for (int a = 0; a < na; a++)
        for (int p = 0; p < np; p++)
            for (int q = 0; q < nq; q++) {
                s = 0.0;
                for (int c = 0; c < nc; c++)
                    s += T[a][p][c] * V[q][c];
                Y[a][p][q] = s;
            }
}
