#include <math.h>

/*
 * leaky ReLU y = fmax(x, 0.01 x) (float).
 */
void leaky_relu_f32(int n, float x[n], float y[n])
{
    int i;

    for (i = 0; i < n; i++)
        y[i] = fmaxf(x[i], 0.01f * x[i]);
}
