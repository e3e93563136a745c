/*
 * covariance -- driver for kernel_covariance.
 */
#include <stdio.h>

#include <bench/util.h>
#include <covariance.h>

int main(void)
{
    int nobs = NOBS, nvar = NVAR;
    DATA_TYPE (*data)[NVAR] = BENCH_ALLOC_2D(DATA_TYPE, NOBS, NVAR);
    DATA_TYPE *mean = BENCH_ALLOC_1D(DATA_TYPE, NVAR);
    DATA_TYPE (*cov)[NVAR] = BENCH_ALLOC_2D(DATA_TYPE, NVAR, NVAR);

    /* each variable: a per-column offset plus a bounded periodic signal */
    for (int i = 0; i < nobs; i++)
        for (int j = 0; j < nvar; j++)
            data[i][j] = (DATA_TYPE) (j % 17) * 0.1
                         + (DATA_TYPE) ((i * (j % 7 + 1) + 3 * j) % 41) / 41.0;

    bench_timer_start();
    kernel_covariance(nobs, nvar, data, mean, cov);
    bench_timer_stop();
    bench_timer_print("covariance (" BENCH_DATASET_NAME ")");

    bench_print_checksum(bench_asum_double(&cov[0][0], BENCH_COUNT2(NVAR, NVAR)));

    bench_free(data);
    bench_free(mean);
    bench_free(cov);
    return 0;
}
