/*
 * util.c -- implementations of <bench/util.h>.
 */
#define _POSIX_C_SOURCE 200112L

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bench/util.h>

void *bench_alloc(size_t count, size_t size)
{
    void *p = NULL;
    size_t bytes;

    if (count != 0 && size > ((size_t) -1) / count) {
        fprintf(stderr, "bench_alloc: %zu x %zu bytes overflows size_t\n", count, size);
        exit(1);
    }
    bytes = count * size;
    if (bytes == 0)
        bytes = BENCH_ALIGNMENT;
    if (posix_memalign(&p, BENCH_ALIGNMENT, bytes) != 0 || p == NULL) {
        fprintf(stderr, "bench_alloc: cannot allocate %zu bytes\n", bytes);
        exit(1);
    }
    memset(p, 0, bytes);
    return p;
}

void bench_free(void *p)
{
    free(p);
}

double bench_wtime(void)
{
    struct timespec ts;

    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0.0;
    return (double) ts.tv_sec + 1.0e-9 * (double) ts.tv_nsec;
}

static double timer_begin;
static double timer_end;

void bench_timer_start(void)
{
    timer_begin = bench_wtime();
    timer_end = timer_begin;
}

void bench_timer_stop(void)
{
    timer_end = bench_wtime();
}

double bench_timer_elapsed(void)
{
    return timer_end - timer_begin;
}

void bench_timer_print(const char *label)
{
    fprintf(stderr, "%s: %.6f s\n", label ? label : "time", bench_timer_elapsed());
}

double bench_sum_double(const double *a, size_t count)
{
    double s = 0.0;
    size_t i;

    for (i = 0; i < count; i++)
        s += a[i];
    return s;
}

double bench_sum_float(const float *a, size_t count)
{
    double s = 0.0;
    size_t i;

    for (i = 0; i < count; i++)
        s += (double) a[i];
    return s;
}

double bench_asum_double(const double *a, size_t count)
{
    double s = 0.0;
    size_t i;

    for (i = 0; i < count; i++)
        s += fabs(a[i]);
    return s;
}

double bench_asum_float(const float *a, size_t count)
{
    double s = 0.0;
    size_t i;

    for (i = 0; i < count; i++)
        s += fabs((double) a[i]);
    return s;
}

void bench_print_checksum(double checksum)
{
    printf("%.6e\n", checksum);
    fflush(stdout);
}
