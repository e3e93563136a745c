#include <math.h>

/*
 * L1 distance between two vectors (float).
 */
float l1_distance_f32(int n, float x[n], float y[n])
{
    float s = 0.0f;

    for (int i = 0; i < n; i++)
        s += fabsf(x[i] - y[i]);
    return s;
}
