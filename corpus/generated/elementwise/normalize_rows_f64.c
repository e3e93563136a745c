/*
 * standardise rows with precomputed means and inverse deviations (row broadcast) (double).
 */
void normalize_rows_f64(int n, int m, double X[n][m], double mu[n], double rs[n], double Y[n][m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            Y[i][j] = (X[i][j] - mu[i]) * rs[i];
}
