#include <math.h>

/*
 * swish y = x / (1 + exp(-x)) (float).
 */
void swish_f32(int n, float x[n], float y[n])
{
    int i;

    for (i = 0; i < n; i++)
        y[i] = x[i] / (1.0f + expf(-x[i]));
}
