/*
 * heat3d -- driver for heat3d_run: a smooth hot blob plus a ripple.
 */
#include <stdio.h>

#include <bench/util.h>
#include <heat3d.h>

int main(void)
{
    real_t (*a)[NY][NZ] = BENCH_ALLOC_3D(real_t, NX, NY, NZ);
    real_t (*b)[NY][NZ] = BENCH_ALLOC_3D(real_t, NX, NY, NZ);

    for (int x = 0; x < NX; x++)
        for (int y = 0; y < NY; y++)
            for (int z = 0; z < NZ; z++) {
                real_t v = (real_t) ((x * y + z) % 13) * 0.05f;
                if (x > NX / 3 && x < 2 * NX / 3 && y > NY / 3 && y < 2 * NY / 3)
                    v += 10.0f;
                a[x][y][z] = v;
                b[x][y][z] = v;
            }

    bench_timer_start();
    heat3d_run(a, b);
    bench_timer_stop();
    bench_timer_print("heat3d (" BENCH_DATASET_NAME ")");

    bench_print_checksum(bench_sum_float(&a[0][0][0], BENCH_COUNT3(NX, NY, NZ)));

    bench_free(a);
    bench_free(b);
    return 0;
}
