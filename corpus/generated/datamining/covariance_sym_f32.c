/*
 * covariance: column means, centring in place, then the upper triangle of X^T X / (n - 1) mirrored
 * into the lower one (marked region, three nests) (float).
 */
void covariance_sym_f32(int n, int m, float X[n][m], float mean[m], float cov[m][m])
{
#pragma scop
    for (int j = 0; j < m; j++) {
        mean[j] = 0.0f;
        for (int i = 0; i < n; i++)
            mean[j] += X[i][j];
        mean[j] = mean[j] / n;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            X[i][j] -= mean[j];
    for (int a = 0; a < m; a++)
        for (int b = a; b < m; b++) {
            cov[a][b] = 0.0f;
            for (int i = 0; i < n; i++)
                cov[a][b] += X[i][a] * X[i][b];
            cov[a][b] = cov[a][b] / (n - 1);
            cov[b][a] = cov[a][b];
        }
#pragma endscop
}
