/*
 * column means and variances, two passes (marked region) (double).
 */
void mean_variance_f64(int n, int m, double X[n][m], double mean[m], double var[m])
{
#pragma scop
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            mean[j] += X[i][j];
    for (int j = 0; j < m; j++)
        mean[j] = mean[j] / n;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            var[j] += (X[i][j] - mean[j]) * (X[i][j] - mean[j]);
    for (int j = 0; j < m; j++)
        var[j] = var[j] / (n - 1);
#pragma endscop
}
