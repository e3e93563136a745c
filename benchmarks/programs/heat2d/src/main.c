/*
 * heat2d -- driver for kernel_heat2d: a warm disc in a cool plate with a
 * hot left edge.
 */
#include <stdio.h>

#include <bench/util.h>
#include <heat2d.h>

static void init_plate(int n, double u[N][N], double v[N][N])
{
    int c = n / 2, r2 = (n / 5) * (n / 5);

    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int di = i - c, dj = j - c;
            double temp = (di * di + dj * dj <= r2) ? 80.0 : 20.0;
            if (j == 0)
                temp = 100.0;
            temp += (double) ((i * 7 + j * 3) % 10) * 0.1;
            u[i][j] = temp;
            v[i][j] = temp;
        }
}

int main(void)
{
    int n = N, tsteps = TSTEPS;
    double (*u)[N] = BENCH_ALLOC_2D(double, N, N);
    double (*v)[N] = BENCH_ALLOC_2D(double, N, N);

    init_plate(n, u, v);

    bench_timer_start();
    kernel_heat2d(tsteps, n, u, v);
    bench_timer_stop();
    bench_timer_print("heat2d (" BENCH_DATASET_NAME ")");

    bench_print_checksum(bench_sum_double(&u[0][0], BENCH_COUNT2(N, N)));

    bench_free(u);
    bench_free(v);
    return 0;
}
