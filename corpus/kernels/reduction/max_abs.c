#include <math.h>

/* Largest absolute value of a vector, a max-reduction through fmax. */
double max_abs(int n, double x[n])
{
    double best = 0.0;
    int i;

    for (i = 0; i < n; i++)
        best = fmax(best, fabs(x[i]));
    return best;
}
