/*
 * heat2d.h -- explicit heat equation on an N x N plate, fixed boundary,
 * TSTEPS time steps of two Jacobi sweeps (u -> v -> u).
 *
 * Dataset: -DSMALL_DATASET, -DMEDIUM_DATASET (default) or -DLARGE_DATASET.
 */
#ifndef HEAT2D_H
#define HEAT2D_H

#if defined(SMALL_DATASET)
#  define N 40
#  define TSTEPS 10
#elif defined(LARGE_DATASET)
#  define N 2000
#  define TSTEPS 300
#else /* MEDIUM_DATASET */
#  define N 1200
#  define TSTEPS 250
#endif

/* diffusion number  kappa * dt / dx^2  (stable below 0.25) */
#define HEAT_NU 0.2

void kernel_heat2d(int tsteps, int n, double u[N][N], double v[N][N]);

#endif /* HEAT2D_H */
