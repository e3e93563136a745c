#include <math.h>

/*
 * attention without normalisation: S = Q K^T / d, P = exp(S), O = P V (marked region) (float).
 */
void attention_f32(int n, int d, float Q[n][d], float K[n][d], float V[n][d], float S[n][n],
                   float O[n][d])
{
#pragma scop
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float acc = 0.0f;
            for (int k = 0; k < d; k++)
                acc += Q[i][k] * K[j][k];
            S[i][j] = acc / d;
        }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            S[i][j] = expf(S[i][j]);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            for (int k = 0; k < d; k++)
                O[i][k] += S[i][j] * V[j][k];
#pragma endscop
}
