#include <math.h>

/*
 * Sobel edge magnitude: two 3x3 gradient stencils through local temporaries and a square root
 * (float).
 */
void sobel2d_f32(int n, float I[n][n], float G[n][n])
{
    for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < n - 1; j++) {
            float gx = I[i - 1][j + 1] + 2.0f * I[i][j + 1] + I[i + 1][j + 1]
                - I[i - 1][j - 1] - 2.0f * I[i][j - 1] - I[i + 1][j - 1];
            float gy = I[i + 1][j - 1] + 2.0f * I[i + 1][j] + I[i + 1][j + 1]
                - I[i - 1][j - 1] - 2.0f * I[i - 1][j] - I[i - 1][j + 1];
            G[i][j] = sqrtf(gx * gx + gy * gy);
        }
}
