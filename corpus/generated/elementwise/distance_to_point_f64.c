#include <math.h>

/*
 * distance of 2-D points to a fixed point (sqrt) (double).
 */
void distance_to_point_f64(int n, double cx, double cy, double x[n], double y[n], double d[n])
{
    int i;

    for (i = 0; i < n; i++)
        d[i] = sqrt((x[i] - cx) * (x[i] - cx) + (y[i] - cy) * (y[i] - cy));
}
