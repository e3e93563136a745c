#include <math.h>

/*
 * per-row standardisation: row mean and deviation in local scalars, then the scaled row (double).
 */
void zscore_rows_f64(int n, int m, double X[n][m], double Z[n][m])
{
    for (int i = 0; i < n; i++) {
        double mu = 0.0;
        for (int j = 0; j < m; j++)
            mu += X[i][j];
        mu = mu / m;
        double var = 0.0;
        for (int j = 0; j < m; j++)
            var += (X[i][j] - mu) * (X[i][j] - mu);
        double sd = sqrt(var / m) + 0.001;
        for (int j = 0; j < m; j++)
            Z[i][j] = (X[i][j] - mu) / sd;
    }
}
