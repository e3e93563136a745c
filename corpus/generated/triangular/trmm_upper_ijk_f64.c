/*
 * upper-triangular times general, C += U B with k >= i, ijk order (double).
 */
void trmm_upper_ijk_f64(int n, int m, double A[n][n], double B[n][m], double C[n][m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            for (int k = i; k < n; k++)
                C[i][j] += A[i][k] * B[k][j];
}
