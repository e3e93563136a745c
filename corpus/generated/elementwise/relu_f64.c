#include <math.h>

/*
 * ReLU y = fmax(x, 0), in place on a matrix (double).
 */
void relu_f64(int n, int m, double X[n][m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            X[i][j] = fmax(X[i][j], 0.0);
}
