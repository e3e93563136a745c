#include <math.h>

/*
 * logistic sigmoid y = 1 / (1 + exp(-x)) (double).
 */
void sigmoid2d_f64(int n, int m, double x[n][m], double y[n][m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            y[i][j] = 1.0 / (1.0 + exp(-x[i][j]));
}
