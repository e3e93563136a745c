#include <math.h>

/*
 * fused multiply-add z = fma(x, y, z) (double).
 */
void fma1d_f64(int n, double x[n], double y[n], double z[n])
{
    int i;

    for (i = 0; i < n; i++)
        z[i] = fma(x[i], y[i], z[i]);
}
