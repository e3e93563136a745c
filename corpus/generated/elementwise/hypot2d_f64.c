#include <math.h>

/*
 * elementwise magnitude R = sqrt(X^2 + Y^2) (double).
 */
void hypot2d_f64(int n, int m, double X[n][m], double Y[n][m], double R[n][m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            R[i][j] = sqrt(X[i][j] * X[i][j] + Y[i][j] * Y[i][j]);
}
