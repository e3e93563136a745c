/*
 * gemv y += A x with the column loop outside (j outer) (double).
 */
void gemv_ji_f64(int n, int m, double A[n][m], double x[m], double y[n])
{
    for (int j = 0; j < m; j++)
        for (int i = 0; i < n; i++)
            y[i] += A[i][j] * x[j];
}
