#include <math.h>

/*
 * C = A^T B (k outermost), then an elementwise square root (marked region) (double).
 */
void atb_sqrt_f64(int ni, int nj, int nk, double C[ni][nj], double A[nk][ni], double B[nk][nj])
{
#pragma scop
    for (int k = 0; k < nk; k++)
        for (int i = 0; i < ni; i++)
            for (int j = 0; j < nj; j++)
                C[i][j] += A[k][i] * B[k][j];
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++)
            C[i][j] = sqrt(C[i][j]);
#pragma endscop
}
