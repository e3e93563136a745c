/*
 * covariance as a sum of rank-1 updates: means, a centred copy D, then cov += D[i]^T D[i] row by
 * row and a final scaling (marked region) (double).
 */
void covariance_rank1_f64(int n, int m, double X[n][m], double D[n][m], double mean[m],
                          double cov[m][m])
{
    int j, i, a, b;

#pragma scop
    for (j = 0; j < m; j++) {
        mean[j] = 0.0;
        for (i = 0; i < n; i++)
            mean[j] += X[i][j];
        mean[j] = mean[j] / n;
    }
    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++)
            D[i][j] = X[i][j] - mean[j];
    for (i = 0; i < n; i++)
        for (a = 0; a < m; a++)
            for (b = 0; b < m; b++)
                cov[a][b] += D[i][a] * D[i][b];
    for (a = 0; a < m; a++)
        for (b = 0; b < m; b++)
            cov[a][b] = cov[a][b] / (n - 1);
#pragma endscop
}
