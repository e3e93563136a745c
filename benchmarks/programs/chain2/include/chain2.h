/*
 * chain2.h -- a chain of two matrix products:
 *     T <- alpha * A * B            (NI x NJ)
 *     D <- beta * D + T * C         (NI x NL)
 *
 * Dataset: -DSMALL_DATASET, -DMEDIUM_DATASET (default) or -DLARGE_DATASET.
 */
#ifndef CHAIN2_H
#define CHAIN2_H

#if defined(SMALL_DATASET)
#  define NI 40
#  define NJ 50
#  define NK 60
#  define NL 70
#elif defined(LARGE_DATASET)
#  define NI 1100
#  define NJ 1200
#  define NK 1300
#  define NL 1400
#else /* MEDIUM_DATASET */
#  define NI 700
#  define NJ 800
#  define NK 900
#  define NL 1000
#endif

void kernel_chain2(double alpha, double beta,
                   double T[NI][NJ], double A[NI][NK], double B[NK][NJ],
                   double C[NJ][NL], double D[NI][NL]);

#endif /* CHAIN2_H */
