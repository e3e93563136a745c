/*
 * 3mm: E = A B, F = C D, G = E F, each product in ikj form (marked region) (float).
 */
void three_mm_ikj_f32(int ni, int nj, int nk, int nl, int nm, float E[ni][nj], float A[ni][nk],
                      float B[nk][nj], float F[nj][nl], float C[nj][nm], float D[nm][nl],
                      float G[ni][nl])
{
#pragma scop
    for (int i = 0; i < ni; i++) {
        for (int j = 0; j < nj; j++)
            E[i][j] = 0.0f;
        for (int k = 0; k < nk; k++)
            for (int j = 0; j < nj; j++)
                E[i][j] += A[i][k] * B[k][j];
    }
    for (int i = 0; i < nj; i++) {
        for (int j = 0; j < nl; j++)
            F[i][j] = 0.0f;
        for (int k = 0; k < nm; k++)
            for (int j = 0; j < nl; j++)
                F[i][j] += C[i][k] * D[k][j];
    }
    for (int i = 0; i < ni; i++) {
        for (int j = 0; j < nl; j++)
            G[i][j] = 0.0f;
        for (int k = 0; k < nj; k++)
            for (int j = 0; j < nl; j++)
                G[i][j] += E[i][k] * F[k][j];
    }
#pragma endscop
}
