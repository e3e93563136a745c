/*
 * lower-triangular times general, C += L B with k <= i, ikj order (double).
 */
void trmm_lower_ikj_f64(int n, int m, double A[n][n], double B[n][m], double C[n][m])
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k <= i; k++)
            for (int j = 0; j < m; j++)
                C[i][j] += A[i][k] * B[k][j];
}
