#include <math.h>

/*
 * infinity norm: largest absolute row sum (row accumulator, then fmax) (float).
 */
float inf_norm_f32(int n, int m, float A[n][m])
{
    float best = 0.0f;

    for (int i = 0; i < n; i++) {
        float r = 0.0f;
        for (int j = 0; j < m; j++)
            r += fabsf(A[i][j]);
        best = fmaxf(best, r);
    }
    return best;
}
