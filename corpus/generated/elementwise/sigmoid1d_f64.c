#include <math.h>

/*
 * logistic sigmoid y = 1 / (1 + exp(-x)) (double).
 */
void sigmoid1d_f64(int n, double x[n], double y[n])
{
    for (int i = 0; i < n; ++i)
        y[i] = 1.0 / (1.0 + exp(-x[i]));
}
