#include <math.h>

/*
 * gemm (ikj) followed by a separate ReLU sweep (marked region) (float).
 */
void gemm_then_relu_f32(int ni, int nj, int nk, float C[ni][nj], float A[ni][nk], float B[nk][nj])
{
#pragma scop
    for (int i = 0; i < ni; i++)
        for (int k = 0; k < nk; k++)
            for (int j = 0; j < nj; j++)
                C[i][j] += A[i][k] * B[k][j];
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++)
            C[i][j] = fmaxf(C[i][j], 0.0f);
#pragma endscop
}
