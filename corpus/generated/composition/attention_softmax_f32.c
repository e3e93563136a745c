#include <math.h>

/*
 * attention with row-wise softmax normalisation: scores, exponentials, row sums, normalisation,
 * then P V (marked region) (float).
 */
void attention_softmax_f32(int n, int d, float Q[n][d], float K[n][d], float V[n][d],
                           float S[n][n], float z[n], float O[n][d])
{
#pragma scop
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            S[i][j] = 0.0f;
            for (int k = 0; k < d; ++k)
                S[i][j] += Q[i][k] * K[j][k] / d;
        }
    for (int i = 0; i < n; ++i) {
        z[i] = 0.0f;
        for (int j = 0; j < n; ++j) {
            S[i][j] = expf(S[i][j]);
            z[i] += S[i][j];
        }
    }
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
            S[i][j] = S[i][j] / z[i];
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < d; ++k) {
            O[i][k] = 0.0f;
            for (int j = 0; j < n; ++j)
                O[i][k] += S[i][j] * V[j][k];
        }
#pragma endscop
}
