#include <math.h>

/*
 * tanh-approximated GELU (double).
 */
void gelu_f64(int n, int m, double X[n][m], double Y[n][m])
{
    int i, j;

    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++)
            Y[i][j] = 0.5 * X[i][j] * (1.0 + tanh(0.7978845608 * (X[i][j] + 0.044715 * X[i][j] * X[i][j] * X[i][j])));
}
