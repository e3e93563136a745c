/*
 * lower-triangular times general, C += L B with k <= i, ijk order (double).
 */
void trmm_lower_ijk_f64(int n, int m, double A[n][n], double B[n][m], double C[n][m])
{
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j)
            for (int k = 0; k <= i; ++k)
                C[i][j] += A[i][k] * B[k][j];
}
