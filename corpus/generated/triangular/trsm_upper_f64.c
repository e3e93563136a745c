/*
 * triangular solve U X = B in place from the last row up (diagonal shifted by n) (double).
 */
void trsm_upper_f64(int n, int m, double U[n][n], double X[n][m])
{
    for (int i = n - 1; i >= 0; --i) {
        for (int k = i + 1; k < n; ++k)
            for (int j = 0; j < m; ++j)
                X[i][j] -= U[i][k] * X[k][j];
        for (int j = 0; j < m; ++j)
            X[i][j] /= U[i][i] + n;
    }
}
