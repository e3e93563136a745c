#include <math.h>

/*
 * tanh-approximated GELU on a matrix, followed by clipping to [lo, hi];
 * exercises tanh, pow, fmin and fmax.
 */
void gelu_clip(int m, int n, double lo, double hi, double X[m][n], double Y[m][n])
{
    int i, j;

    for (i = 0; i < m; i++)
        for (j = 0; j < n; j++) {
            Y[i][j] = 0.5 * X[i][j]
                      * (1.0 + tanh(0.7978845608 * (X[i][j] + 0.044715 * pow(X[i][j], 3.0))));
            Y[i][j] = fmin(fmax(Y[i][j], lo), hi);
        }
}
