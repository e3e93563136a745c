#include <math.h>

/*
 * row maxima via fmax (float).
 */
void row_max_f32(int n, int m, float A[n][m], float hi[n])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            hi[i] = fmaxf(hi[i], A[i][j]);
}
