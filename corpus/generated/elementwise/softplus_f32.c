#include <math.h>

/*
 * softplus y = log(1 + exp(x)) (float).
 */
void softplus_f32(int n, float x[n], float y[n])
{
    for (int i = 0; i < n; i++)
        y[i] = logf(1.0f + expf(x[i]));
}
