/*
 * gemv y = beta y + alpha A x through a local accumulator (double).
 */
void gemv_acc_ab_f64(int n, int m, double alpha, double beta, double A[n][m], double x[m],
                     double y[n])
{
    for (int i = 0; i < n; i++) {
        double acc = 0.0;
        for (int j = 0; j < m; j++)
            acc += A[i][j] * x[j];
        y[i] = beta * y[i] + alpha * acc;
    }
}
