/*
 * A STREAM-style bandwidth measurement (copy, scale, add, triad) for benchmarks/peak.py.
 * Written for perfembed after McCalpin's STREAM rules: arrays of at least 4x the last-level cache,
 * first-touch initialization by the same OpenMP threads, bytes counted without write-allocate.
 *
 *   peak_stream N NTIMES   prints "KERNEL BYTES_PER_ELEMENT SECONDS..." per kernel, then "check ok|failed"
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: peak_stream N NTIMES\n");
        return 64;
    }
    long n = atol(argv[1]);
    int ntimes = atoi(argv[2]);
    if (n < 1 || ntimes < 2 || ntimes > 200) {
        /* a grows 15-fold per iteration: past 200 the expected values overflow */
        fprintf(stderr, "peak_stream: N must be >= 1 and NTIMES in 2..200\n");
        return 64;
    }
    double *a = aligned_alloc(64, (size_t)n * sizeof(double) + 64);
    double *b = aligned_alloc(64, (size_t)n * sizeof(double) + 64);
    double *c = aligned_alloc(64, (size_t)n * sizeof(double) + 64);
    double *times = malloc(sizeof(double) * 4 * (size_t)ntimes);
    if (!a || !b || !c || !times) {
        fprintf(stderr, "peak_stream: out of memory\n");
        return 65;
    }
    const double scalar = 3.0;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        a[i] = 1.0;
        b[i] = 2.0;
        c[i] = 0.0;
    }
    for (int k = 0; k < ntimes; k++) {
        double t = now();
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++)
            c[i] = a[i];
        times[4 * k + 0] = now() - t;
        t = now();
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++)
            b[i] = scalar * c[i];
        times[4 * k + 1] = now() - t;
        t = now();
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++)
            c[i] = a[i] + b[i];
        times[4 * k + 2] = now() - t;
        t = now();
#pragma omp parallel for schedule(static)
        for (long i = 0; i < n; i++)
            a[i] = b[i] + scalar * c[i];
        times[4 * k + 3] = now() - t;
    }
    static const char *names[4] = {"copy", "scale", "add", "triad"};
    static const int bytes[4] = {16, 16, 24, 24};
    for (int j = 0; j < 4; j++) {
        printf("%s %d", names[j], bytes[j]);
        for (int k = 0; k < ntimes; k++)
            printf(" %.9f", times[4 * k + j]);
        printf("\n");
    }
    /* The values every element must hold, by the same operations on scalars. */
    double aj = 1.0, bj = 2.0, cj = 0.0;
    for (int k = 0; k < ntimes; k++) {
        cj = aj;
        bj = scalar * cj;
        cj = aj + bj;
        aj = bj + scalar * cj;
    }
    long bad = 0;
    for (long i = 0; i < n; i++)
        if (fabs(a[i] - aj) > 1e-13 * fabs(aj) || fabs(b[i] - bj) > 1e-13 * fabs(bj)
            || fabs(c[i] - cj) > 1e-13 * fabs(cj))
            bad++;
    printf("check %s\n", bad ? "failed" : "ok");
    free(a);
    free(b);
    free(c);
    free(times);
    return bad ? 1 : 0;
}
