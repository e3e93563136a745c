/*
 * out-of-place transpose B[j][i] = A[i][j], loop order ji (double).
 */
void transpose_ji_f64(int n, int m, double A[n][m], double B[m][n])
{
    for (int j = 0; j < m; ++j)
        for (int i = 0; i < n; ++i)
            B[j][i] = A[i][j];
}
