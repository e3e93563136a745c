#include <math.h>

/*
 * cosine similarities between rows: row norms, then normalised dot products (marked region)
 * (float).
 */
void cosine_similarity_f32(int n, int m, float X[n][m], float nrm[n], float S[n][n])
{
#pragma scop
    for (int i = 0; i < n; i++) {
        nrm[i] = 0.0f;
        for (int k = 0; k < m; k++)
            nrm[i] += X[i][k] * X[i][k];
        nrm[i] = sqrtf(nrm[i]);
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            float dot = 0.0f;
            for (int k = 0; k < m; k++)
                dot += X[i][k] * X[j][k];
            S[i][j] = dot / (nrm[i] * nrm[j]);
        }
#pragma endscop
}
