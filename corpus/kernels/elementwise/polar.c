#include <math.h>

/* Polar to Cartesian coordinates in single precision (sinf/cosf/fabsf). */
void polar_to_xy(int n, float r[n], float th[n], float px[n], float py[n])
{
    for (int i = 0; i < n; ++i) {
        px[i] = fabsf(r[i]) * cosf(th[i]);
        py[i] = fabsf(r[i]) * sinf(th[i]);
    }
}
