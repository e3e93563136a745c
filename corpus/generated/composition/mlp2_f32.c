#include <math.h>

/*
 * two-layer perceptron: H = relu(X W1 + b1), Y = H W2 + b2 (marked region) (float).
 */
void mlp2_f32(int n, int din, int dh, int dout, float X[n][din], float W1[din][dh], float b1[dh],
              float H[n][dh], float W2[dh][dout], float b2[dout], float Y[n][dout])
{
#pragma scop
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < dh; ++j) {
            float acc = b1[j];
            for (int k = 0; k < din; ++k)
                acc += X[i][k] * W1[k][j];
            H[i][j] = fmaxf(acc, 0.0f);
        }
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < dout; ++j) {
            float acc2 = b2[j];
            for (int k = 0; k < dh; ++k)
                acc2 += H[i][k] * W2[k][j];
            Y[i][j] = acc2;
        }
#pragma endscop
}
