/* gemv: y <- beta * y + alpha * A x, A is m x n, row-major traversal. */
void gemv(int m, int n, double alpha, double beta, double A[m][n], double x[n], double y[m])
{
    for (int i = 0; i < m; i++) {
        y[i] *= beta;
        for (int j = 0; j < n; j++)
            y[i] += alpha * A[i][j] * x[j];
    }
}
