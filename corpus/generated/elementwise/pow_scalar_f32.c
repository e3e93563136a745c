#include <math.h>

/*
 * power with a runtime exponent y = pow(x, p) (float).
 */
void pow_scalar_f32(int n, float p, float x[n], float y[n])
{
    for (int i = 0; i < n; ++i)
        y[i] = powf(x[i], p);
}
