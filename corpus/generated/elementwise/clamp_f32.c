#include <math.h>

/*
 * clamp to [lo, hi] with fmin and fmax (float).
 */
void clamp_f32(int n, int m, float lo, float hi, float X[n][m], float Y[n][m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            Y[i][j] = fminf(fmaxf(X[i][j], lo), hi);
}
