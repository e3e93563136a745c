/*
 * chain3.h -- three matrix products, two independent and one joining them:
 *     E <- A * B    (NI x NJ, inner NK)
 *     F <- C * D    (NJ x NL, inner NM)
 *     G <- E * F    (NI x NL, inner NJ)
 *
 * Dataset: -DSMALL_DATASET, -DMEDIUM_DATASET (default) or -DLARGE_DATASET.
 * The kernel takes its sizes as arguments and its arrays as VLA parameters.
 */
#ifndef CHAIN3_H
#define CHAIN3_H

#if defined(SMALL_DATASET)
#  define NI 32
#  define NJ 36
#  define NK 40
#  define NL 44
#  define NM 48
#elif defined(LARGE_DATASET)
#  define NI 1000
#  define NJ 1050
#  define NK 1100
#  define NL 1150
#  define NM 1200
#else /* MEDIUM_DATASET */
#  define NI 600
#  define NJ 650
#  define NK 700
#  define NL 750
#  define NM 800
#endif

void kernel_chain3(int ni, int nj, int nk, int nl, int nm,
                   double E[ni][nj], double A[ni][nk], double B[nk][nj],
                   double F[nj][nl], double C[nj][nm], double D[nm][nl],
                   double G[ni][nl]);

#endif /* CHAIN3_H */
