#include <math.h>

/*
 * entrywise 1-norm (sum of absolute values) (float).
 */
float l1norm2d_f32(int n, int m, float A[n][m])
{
    float s = 0.0f;

    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            s += fabsf(A[i][j]);
    return s;
}
