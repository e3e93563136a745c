#include <math.h>

/*
 * polar to Cartesian coordinates (sin, cos) (float).
 */
void polar_to_xy_f32(int n, float rad[n], float th[n], float px[n], float py[n])
{
    for (int i = 0; i < n; ++i) {
        px[i] = rad[i] * cosf(th[i]);
        py[i] = rad[i] * sinf(th[i]);
    }
}
