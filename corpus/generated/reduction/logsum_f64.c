#include <math.h>

/*
 * sum of logarithms (log of a product without overflow) (double).
 */
double logsum_f64(int n, double x[n])
{
    int i;
    double s = 0.0;

    for (i = 0; i < n; i++)
        s += log(x[i]);
    return s;
}
