#include <math.h>

/*
 * nrm2: Euclidean norm of x and the normalised copy y = x / ||x||.
 * Both loops form one marked region (one SCoP with two top-level loops).
 */
double normalize(int n, double x[n], double y[n])
{
    int i;
    double ss = 0.0;

#pragma scop
    for (i = 0; i < n; i++)
        ss += x[i] * x[i];
    for (i = 0; i < n; i++)
        y[i] = x[i] / sqrt(ss);
#pragma endscop
    return sqrt(ss);
}
