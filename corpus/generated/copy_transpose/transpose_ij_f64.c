/*
 * out-of-place transpose B[j][i] = A[i][j], loop order ij (double).
 */
void transpose_ij_f64(int n, int m, double A[n][m], double B[m][n])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            B[j][i] = A[i][j];
}
