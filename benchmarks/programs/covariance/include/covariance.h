/*
 * covariance.h -- sample covariance of NVAR variables observed NOBS times.
 *     data is NOBS x NVAR (one observation per row), cov is NVAR x NVAR.
 *
 * Dataset: -DSMALL_DATASET, -DMEDIUM_DATASET (default) or -DLARGE_DATASET.
 */
#ifndef COVARIANCE_H
#define COVARIANCE_H

#if defined(SMALL_DATASET)
#  define NOBS 64
#  define NVAR 48
#elif defined(LARGE_DATASET)
#  define NOBS 1800
#  define NVAR 1500
#else /* MEDIUM_DATASET */
#  define NOBS 1100
#  define NVAR 1000
#endif

typedef double DATA_TYPE;

void kernel_covariance(int nobs, int nvar,
                       DATA_TYPE data[NOBS][NVAR], DATA_TYPE mean[NVAR],
                       DATA_TYPE cov[NVAR][NVAR]);

#endif /* COVARIANCE_H */
