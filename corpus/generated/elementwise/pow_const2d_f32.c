#include <math.h>

/*
 * power with a constant exponent Y = pow(X, 1.5) (float).
 */
void pow_const2d_f32(int n, int m, float X[n][m], float Y[n][m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            Y[i][j] = powf(X[i][j], 1.5f);
}
