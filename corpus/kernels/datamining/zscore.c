#include <math.h>

/*
 * Column-wise z-score normalisation of an n x m matrix: means and standard
 * deviations are accumulated row by row, then every entry is standardised.
 */
void zscore_columns(int n, int m, double X[n][m], double mu[m], double sd[m])
{
    int i, j;

#pragma scop
    for (j = 0; j < m; j++) {
        mu[j] = 0.0;
        sd[j] = 0.0;
    }
    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++)
            mu[j] += X[i][j];
    for (j = 0; j < m; j++)
        mu[j] /= n;
    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++)
            sd[j] += (X[i][j] - mu[j]) * (X[i][j] - mu[j]);
    for (j = 0; j < m; j++)
        sd[j] = sqrt(sd[j] / n) + 1e-9;
    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++)
            X[i][j] = (X[i][j] - mu[j]) / sd[j];
#pragma endscop
}
