#include <math.h>

/*
 * min-max scaling of columns: column minima and maxima (fmin/fmax), then rescaling (marked region)
 * (double).
 */
void minmax_scale_f64(int n, int m, double X[n][m], double lo[m], double hi[m])
{
    int i, j;

#pragma scop
    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++) {
            lo[j] = fmin(lo[j], X[i][j]);
            hi[j] = fmax(hi[j], X[i][j]);
        }
    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++)
            X[i][j] = (X[i][j] - lo[j]) / (hi[j] - lo[j] + 0.001);
#pragma endscop
}
