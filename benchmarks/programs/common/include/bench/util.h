/*
 * bench/util.h -- shared helpers of the perfembed program suite.
 *
 * Every program of the suite includes this header as <bench/util.h>
 * (found through -I ../common/include) and links ../common/util.c.
 * It provides aligned allocation with a failure check, a wall-clock
 * timer that reports on stderr, and the checksum printer that writes
 * the program's single line of stdout.
 */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stddef.h>

/* ---- dataset selection ------------------------------------------------
 * A program header tests SMALL_DATASET and LARGE_DATASET; anything else
 * is the medium dataset.  The macros below let main() say which one was
 * built without repeating the test.                                      */
#if defined(SMALL_DATASET)
#  define BENCH_DATASET_NAME "small"
#elif defined(LARGE_DATASET)
#  define BENCH_DATASET_NAME "large"
#else
#  ifndef MEDIUM_DATASET
#    define MEDIUM_DATASET
#  endif
#  define BENCH_DATASET_NAME "medium"
#endif

/* Element counts of 2-D and 3-D arrays, as size_t, for bench_alloc. */
#define BENCH_COUNT2(n1, n2)      ((size_t)(n1) * (size_t)(n2))
#define BENCH_COUNT3(n1, n2, n3)  ((size_t)(n1) * (size_t)(n2) * (size_t)(n3))

/* Allocate arrays of fixed row length: the result converts to a pointer
 * to rows, e.g.  double (*A)[NJ] = BENCH_ALLOC_2D(double, NI, NJ);      */
#define BENCH_ALLOC_1D(T, n1) \
    ((T *) bench_alloc(BENCH_COUNT2(n1, 1), sizeof(T)))
#define BENCH_ALLOC_2D(T, n1, n2) \
    ((T (*)[n2]) bench_alloc(BENCH_COUNT2(n1, n2), sizeof(T)))
#define BENCH_ALLOC_3D(T, n1, n2, n3) \
    ((T (*)[n2][n3]) bench_alloc(BENCH_COUNT3(n1, n2, n3), sizeof(T)))

/* Alignment of every block returned by bench_alloc, in bytes. */
#define BENCH_ALIGNMENT 64

/* Zeroed, BENCH_ALIGNMENT-aligned block of count * size bytes.
 * Prints a message and exits with status 1 when memory runs out. */
void *bench_alloc(size_t count, size_t size);
void bench_free(void *p);

/* Wall-clock time in seconds (CLOCK_MONOTONIC). */
double bench_wtime(void);

/* One global timer: start, stop, then print "<label>: <seconds> s" to stderr. */
void bench_timer_start(void);
void bench_timer_stop(void);
double bench_timer_elapsed(void);
void bench_timer_print(const char *label);

/* Sums of arrays of count elements, accumulated in double. */
double bench_sum_double(const double *a, size_t count);
double bench_sum_float(const float *a, size_t count);
/* Sums of absolute values, for outputs whose plain sum cancels. */
double bench_asum_double(const double *a, size_t count);
double bench_asum_float(const float *a, size_t count);

/* The program's one line of stdout: the checksum as "%.6e\n". */
void bench_print_checksum(double checksum);

#endif /* BENCH_UTIL_H */
