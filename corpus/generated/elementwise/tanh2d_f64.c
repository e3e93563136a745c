#include <math.h>

/*
 * hyperbolic tangent of a matrix (double).
 */
void tanh2d_f64(int n, int m, double X[n][m], double Y[n][m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            Y[i][j] = tanh(X[i][j]);
}
