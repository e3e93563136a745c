#include <math.h>

/*
 * pairwise Manhattan distances on the upper triangle (j > i) (float).
 */
void manhattan_upper_f32(int n, int m, float X[n][m], float D[n][n])
{
    for (int i = 0; i < n; ++i)
        for (int j = i + 1; j < n; ++j)
            for (int k = 0; k < m; ++k)
                D[i][j] += fabsf(X[i][k] - X[j][k]);
}
