#include <math.h>

/*
 * entries below a threshold set to zero, in place (double).
 */
void threshold_2d_f64(int n, int m, double eps, double A[n][m])
{
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j)
            if (fabs(A[i][j]) < eps)
                A[i][j] = 0.0;
}
