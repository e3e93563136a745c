#include <math.h>

/*
 * dense layer: bias broadcast, X W accumulated in ikj order, ReLU (marked region) (float).
 */
void dense_bias_relu_f32(int ni, int nj, int nk, float Y[ni][nj], float X[ni][nk], float W[nk][nj],
                         float b[nj])
{
    int i, j, k;

#pragma scop
    for (i = 0; i < ni; i++)
        for (j = 0; j < nj; j++)
            Y[i][j] = b[j];
    for (i = 0; i < ni; i++)
        for (k = 0; k < nk; k++)
            for (j = 0; j < nj; j++)
                Y[i][j] += X[i][k] * W[k][j];
    for (i = 0; i < ni; i++)
        for (j = 0; j < nj; j++)
            Y[i][j] = fmaxf(Y[i][j], 0.0f);
#pragma endscop
}
