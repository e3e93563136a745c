/*
 * covariance with the centring folded into the product, through a local accumulator (means
 * precomputed in the same region) (float).
 */
void covariance_acc_f32(int n, int m, float X[n][m], float mean[m], float cov[m][m])
{
#pragma scop
    for (int j = 0; j < m; j++) {
        mean[j] = 0.0f;
        for (int i = 0; i < n; i++)
            mean[j] += X[i][j];
        mean[j] = mean[j] / n;
    }
    for (int a = 0; a < m; a++)
        for (int b = 0; b < m; b++) {
            float acc = 0.0f;
            for (int i = 0; i < n; i++)
                acc += (X[i][a] - mean[a]) * (X[i][b] - mean[b]);
            cov[a][b] = acc / (n - 1);
        }
#pragma endscop
}
