/*
 * C = A^T + B on rectangular matrices (double).
 */
void transpose_plus_f64(int n, int m, double A[m][n], double B[n][m], double C[n][m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            C[i][j] = A[j][i] + B[i][j];
}
