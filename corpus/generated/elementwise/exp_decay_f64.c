#include <math.h>

/*
 * exponential decay with a per-column time, Y = X exp(-lambda t[j]) (double).
 */
void exp_decay_f64(int n, int m, double lam, double X[n][m], double tt[m], double Y[n][m])
{
    int i, j;

    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++)
            Y[i][j] = X[i][j] * exp(-lam * tt[j]);
}
