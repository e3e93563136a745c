#include <math.h>

/*
 * row sums of exponentials (softmax denominators) (float).
 */
void softmax_denominators_f32(int n, int m, float A[n][m], float z[n])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            z[i] += expf(A[i][j]);
}
