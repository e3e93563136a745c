#include <math.h>

/*
 * column minima via fmin, rows outside (float).
 */
void col_min_f32(int n, int m, float A[n][m], float lo[m])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            lo[j] = fminf(lo[j], A[i][j]);
}
