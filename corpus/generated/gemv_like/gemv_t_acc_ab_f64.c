/*
 * transposed gemv y = beta y + alpha A^T x with an accumulator per column (double).
 */
void gemv_t_acc_ab_f64(int n, int m, double alpha, double beta, double A[n][m], double x[n],
                       double y[m])
{
    for (int j = 0; j < m; j++) {
        double acc = 0.0;
        for (int i = 0; i < n; i++)
            acc += A[i][j] * x[i];
        y[j] = beta * y[j] + alpha * acc;
    }
}
