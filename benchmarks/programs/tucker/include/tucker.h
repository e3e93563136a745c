/*
 * tucker.h -- two tensor-times-matrix contractions of a 3-way tensor,
 * the core step of a Tucker (HOSVD-style) projection:
 *     T[a][p][c] = sum_b X[a][b][c] * U[p][b]      (mode 2)
 *     Y[a][p][q] = sum_c T[a][p][c] * V[q][c]      (mode 3)
 *
 * Dataset: -DSMALL_DATASET, -DMEDIUM_DATASET (default) or -DLARGE_DATASET.
 */
#ifndef TUCKER_H
#define TUCKER_H

#if defined(SMALL_DATASET)
#  define NA 12
#  define NB 16
#  define NC 20
#  define NP 8
#  define NQ 10
#elif defined(LARGE_DATASET)
#  define NA 200
#  define NB 200
#  define NC 220
#  define NP 150
#  define NQ 140
#else /* MEDIUM_DATASET */
#  define NA 180
#  define NB 160
#  define NC 170
#  define NP 100
#  define NQ 90
#endif

void tucker_project(int na, int nb, int nc, int np, int nq,
                    double X[NA][NB][NC], double U[NP][NB], double V[NQ][NC],
                    double T[NA][NP][NC], double Y[NA][NP][NQ]);

#endif /* TUCKER_H */
