/*
 * symmetric rank-2 update on the full matrix: A += alpha (x y^T + y x^T) (double).
 */
void syr2_full_f64(int n, double alpha, double A[n][n], double x[n], double y[n])
{
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            A[i][j] += alpha * (x[i] * y[j] + y[i] * x[j]);
}
