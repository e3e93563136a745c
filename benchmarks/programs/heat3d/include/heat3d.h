/*
 * heat3d.h -- single-precision 3-D seven-point diffusion on an
 * NX x NY x NZ grid with a fixed boundary, STEPS time steps (a -> b -> a).
 *
 * Dataset: -DSMALL_DATASET, -DMEDIUM_DATASET (default) or -DLARGE_DATASET.
 */
#ifndef HEAT3D_H
#define HEAT3D_H

#if defined(SMALL_DATASET)
#  define NX 20
#  define NY 22
#  define NZ 24
#  define STEPS 4
#elif defined(LARGE_DATASET)
#  define NX 200
#  define NY 220
#  define NZ 240
#  define STEPS 120
#else /* MEDIUM_DATASET */
#  define NX 140
#  define NY 150
#  define NZ 160
#  define STEPS 150
#endif

typedef float real_t;

void heat3d_run(real_t a[NX][NY][NZ], real_t b[NX][NY][NZ]);

#endif /* HEAT3D_H */
