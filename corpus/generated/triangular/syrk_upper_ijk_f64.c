/*
 * syrk on the upper triangle (j >= i), beta scaling then dot products over k (double).
 */
void syrk_upper_ijk_f64(int n, int m, double alpha, double beta, double C[n][n], double A[n][m])
{
    for (int i = 0; i < n; ++i)
        for (int j = i; j < n; ++j) {
            C[i][j] *= beta;
            for (int k = 0; k < m; ++k)
                C[i][j] += alpha * A[i][k] * A[j][k];
        }
}
