#include <math.h>

/*
 * residual block Y = X + relu(X W) with a square weight matrix (double).
 */
void residual_block_f64(int n, int m, double X[n][m], double W[m][m], double Y[n][m])
{
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j) {
            double acc = 0.0;
            for (int k = 0; k < m; ++k)
                acc += X[i][k] * W[k][j];
            Y[i][j] = X[i][j] + fmax(acc, 0.0);
        }
}
