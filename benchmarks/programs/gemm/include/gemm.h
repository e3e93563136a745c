/*
 * gemm.h -- general matrix product C <- alpha * A * B + beta * C.
 *
 * Dataset: -DSMALL_DATASET, -DMEDIUM_DATASET (default) or -DLARGE_DATASET;
 * any size can also be set alone, e.g. -DNI=500.
 */
#ifndef GEMM_H
#define GEMM_H

#if defined(SMALL_DATASET)
#  ifndef NI
#    define NI 60
#  endif
#  ifndef NJ
#    define NJ 70
#  endif
#  ifndef NK
#    define NK 80
#  endif
#elif defined(LARGE_DATASET)
#  ifndef NI
#    define NI 1300
#  endif
#  ifndef NJ
#    define NJ 1400
#  endif
#  ifndef NK
#    define NK 1500
#  endif
#else /* MEDIUM_DATASET */
#  ifndef NI
#    define NI 900
#  endif
#  ifndef NJ
#    define NJ 1000
#  endif
#  ifndef NK
#    define NK 1100
#  endif
#endif

typedef double DATA_TYPE;

void kernel_gemm(int ni, int nj, int nk, DATA_TYPE alpha, DATA_TYPE beta,
                 DATA_TYPE C[NI][NJ], DATA_TYPE A[NI][NK], DATA_TYPE B[NK][NJ]);

#endif /* GEMM_H */
