/*
 * upper-triangular matrix-vector product y += T x, ij order (double).
 */
void trmv_upper_ij_f64(int n, double T[n][n], double x[n], double y[n])
{
    int i, j;

    for (i = 0; i < n; ++i)
        for (j = i; j < n; ++j)
            y[i] += T[i][j] * x[j];
}
