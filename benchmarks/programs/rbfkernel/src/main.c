/*
 * rbfkernel -- driver for rbf_predict: points on a scrambled lattice in
 * the unit cube.
 */
#include <stdio.h>

#include <bench/util.h>
#include <rbfkernel.h>

int main(void)
{
    int nx = NX, ny = NY, dim = DIM;
    double (*X)[DIM] = BENCH_ALLOC_2D(double, NX, DIM);
    double (*Y)[DIM] = BENCH_ALLOC_2D(double, NY, DIM);
    double *w = BENCH_ALLOC_1D(double, NY);
    double (*Kmat)[NY] = BENCH_ALLOC_2D(double, NX, NY);
    double *pred = BENCH_ALLOC_1D(double, NX);
    /* keep exp(-gamma * dist) away from underflow: dist ~ dim / 6 */
    double gamma = 3.0 / (double) dim;

    for (int i = 0; i < nx; i++)
        for (int d = 0; d < dim; d++)
            X[i][d] = (double) ((i * 37 + d * 11) % 101) / 101.0;
    for (int j = 0; j < ny; j++) {
        for (int d = 0; d < dim; d++)
            Y[j][d] = (double) ((j * 53 + d * 7 + 13) % 97) / 97.0;
        w[j] = (double) (j % 21) / 21.0 - 0.3;
    }

    bench_timer_start();
    rbf_predict(nx, ny, dim, gamma, X, Y, w, Kmat, pred);
    bench_timer_stop();
    bench_timer_print("rbfkernel (" BENCH_DATASET_NAME ")");

    bench_print_checksum(bench_sum_double(&Kmat[0][0], BENCH_COUNT2(NX, NY))
                         + bench_asum_double(pred, NX));

    bench_free(X);
    bench_free(Y);
    bench_free(w);
    bench_free(Kmat);
    bench_free(pred);
    return 0;
}
