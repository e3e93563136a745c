#include <math.h>

/*
 * RBF kernel matrix: squared distances, then K = exp(-g D) (marked region) (double).
 */
void rbf_kernel_f64(int n, int m, double g, double X[n][m], double K[n][n])
{
#pragma scop
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double acc = 0.0;
            for (int k = 0; k < m; k++)
                acc += (X[i][k] - X[j][k]) * (X[i][k] - X[j][k]);
            K[i][j] = acc;
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            K[i][j] = exp(-g * K[i][j]);
#pragma endscop
}
