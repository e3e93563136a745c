/*
 * standardise columns with precomputed means and inverse deviations (column broadcast) (double).
 */
void normalize_cols_f64(int n, int m, double X[n][m], double mu[m], double rs[m], double Y[n][m])
{
    int i, j;

    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++)
            Y[i][j] = (X[i][j] - mu[j]) * rs[j];
}
