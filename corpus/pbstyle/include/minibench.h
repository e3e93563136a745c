/*
 * minibench.h: a small benchmark-harness header in the style of research
 * kernel suites. Kernels size their arrays with dataset macros, take the
 * element type from DATA_TYPE, declare array parameters through MB_nD macros
 * and write loop bounds with _MB_* macros that name the lowercase runtime
 * parameters.
 *
 * Select a dataset with -DMB_MINI, -DMB_SMALL (default) or -DMB_LARGE; any
 * single size can be overridden with -DNAME=value.
 */
#ifndef MINIBENCH_H
#define MINIBENCH_H

#include <stdlib.h>

#if !defined(MB_MINI) && !defined(MB_SMALL) && !defined(MB_LARGE)
#define MB_SMALL
#endif

#if defined(MB_MINI)
#  ifndef NI
#    define NI 20
#  endif
#  ifndef NJ
#    define NJ 24
#  endif
#  ifndef NK
#    define NK 28
#  endif
#  ifndef N
#    define N 30
#  endif
#  ifndef TSTEPS
#    define TSTEPS 4
#  endif
#elif defined(MB_SMALL)
#  ifndef NI
#    define NI 64
#  endif
#  ifndef NJ
#    define NJ 72
#  endif
#  ifndef NK
#    define NK 80
#  endif
#  ifndef N
#    define N 96
#  endif
#  ifndef TSTEPS
#    define TSTEPS 20
#  endif
#else /* MB_LARGE */
#  ifndef NI
#    define NI 1000
#  endif
#  ifndef NJ
#    define NJ 1100
#  endif
#  ifndef NK
#    define NK 1200
#  endif
#  ifndef N
#    define N 1300
#  endif
#  ifndef TSTEPS
#    define TSTEPS 100
#  endif
#endif

/* Element type and the matching literal suffix / printf format. */
#ifndef DATA_TYPE
#  define DATA_TYPE double
#  define MB_SCALAR(x) x
#  define DATA_PRINTF_MODIFIER "%0.4f "
#endif
#ifndef MB_SCALAR
#  define MB_SCALAR(x) x##f
#endif
#ifndef DATA_PRINTF_MODIFIER
#  define DATA_PRINTF_MODIFIER "%0.4f "
#endif

/*
 * Loop bounds: by default the lowercase runtime parameter, so the analyser
 * sees symbolic bounds; -DMB_CONSTANT_BOUNDS substitutes the dataset size.
 */
#ifdef MB_CONSTANT_BOUNDS
#  define _MB_NI NI
#  define _MB_NJ NJ
#  define _MB_NK NK
#  define _MB_N N
#  define _MB_TSTEPS TSTEPS
#else
#  define _MB_NI ni
#  define _MB_NJ nj
#  define _MB_NK nk
#  define _MB_N n
#  define _MB_TSTEPS tsteps
#endif

/*
 * Array parameter declarations: (name, dataset sizes, runtime sizes).
 * By default the fixed dataset sizes are used; -DMB_C99_VLA_PROTO switches
 * to variable-length array parameters.
 */
#ifdef MB_C99_VLA_PROTO
#  define MB_1D(var, d1, dd1) var[dd1]
#  define MB_2D(var, d1, d2, dd1, dd2) var[dd1][dd2]
#else
#  define MB_1D(var, d1, dd1) var[d1]
#  define MB_2D(var, d1, d2, dd1, dd2) var[d1][d2]
#endif

/* Heap allocation of a d1 x d2 array, typed as a pointer to rows. */
#define MB_ALLOC_2D(type, d1, d2) ((type (*)[d2]) malloc(sizeof(type) * (size_t)(d1) * (size_t)(d2)))

#endif /* MINIBENCH_H */
