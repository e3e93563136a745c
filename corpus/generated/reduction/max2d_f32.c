#include <math.h>

/*
 * largest entry of a matrix via fmax (float).
 */
float max2d_f32(int n, int m, float A[n][m])
{
    float best = 0.0f;

    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            best = fmaxf(best, A[i][j]);
    return best;
}
