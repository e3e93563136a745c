/*
 * triangular solve with many right-hand sides, L X = B in place (row form, diagonal shifted by n)
 * (double).
 */
void trsm_lower_f64(int n, int m, double L[n][n], double X[n][m])
{
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < i; k++)
            for (int j = 0; j < m; j++)
                X[i][j] -= L[i][k] * X[k][j];
        for (int j = 0; j < m; j++)
            X[i][j] /= L[i][i] + n;
    }
}
