#include <math.h>

/*
 * correlation matrix: means, standard deviations (sqrt, floored by fmax), standardisation in
 * place, then the symmetric product with a unit diagonal (marked region) (double).
 */
void correlation_f64(int n, int m, double X[n][m], double mean[m], double sd[m], double corr[m][m])
{
    int j, i, a, b;

#pragma scop
    for (j = 0; j < m; ++j) {
        mean[j] = 0.0;
        for (i = 0; i < n; ++i)
            mean[j] += X[i][j];
        mean[j] = mean[j] / n;
    }
    for (j = 0; j < m; ++j) {
        sd[j] = 0.0;
        for (i = 0; i < n; ++i)
            sd[j] += (X[i][j] - mean[j]) * (X[i][j] - mean[j]);
        sd[j] = fmax(sqrt(sd[j] / n), 0.1);
    }
    for (i = 0; i < n; ++i)
        for (j = 0; j < m; ++j)
            X[i][j] = (X[i][j] - mean[j]) / (sd[j] * n);
    for (a = 0; a < m; ++a) {
        corr[a][a] = 1.0;
        for (b = a + 1; b < m; ++b) {
            corr[a][b] = 0.0;
            for (i = 0; i < n; ++i)
                corr[a][b] += X[i][a] * X[i][b];
            corr[b][a] = corr[a][b];
        }
    }
#pragma endscop
}
