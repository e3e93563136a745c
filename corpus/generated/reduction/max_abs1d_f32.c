#include <math.h>

/*
 * largest absolute value of a vector via fmax (float).
 */
float max_abs1d_f32(int n, float x[n])
{
    int i;
    float best = 0.0f;

    for (i = 0; i < n; i++)
        best = fmaxf(best, fabsf(x[i]));
    return best;
}
