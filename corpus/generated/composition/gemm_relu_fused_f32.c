#include <math.h>

/*
 * gemm with ReLU applied to each finished dot product (float).
 */
void gemm_relu_fused_f32(int ni, int nj, int nk, float C[ni][nj], float A[ni][nk], float B[nk][nj])
{
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++) {
            float acc = 0.0f;
            for (int k = 0; k < nk; k++)
                acc += A[i][k] * B[k][j];
            C[i][j] = fmaxf(acc, 0.0f);
        }
}
