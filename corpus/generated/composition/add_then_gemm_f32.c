/*
 * S = A + B, then C += S D (marked region) (float).
 */
void add_then_gemm_f32(int ni, int nj, int nk, float A[ni][nk], float B[ni][nk], float S[ni][nk],
                       float D[nk][nj], float C[ni][nj])
{
#pragma scop
    for (int i = 0; i < ni; ++i)
        for (int k = 0; k < nk; ++k)
            S[i][k] = A[i][k] + B[i][k];
    for (int i = 0; i < ni; ++i)
        for (int k = 0; k < nk; ++k)
            for (int j = 0; j < nj; ++j)
                C[i][j] += S[i][k] * D[k][j];
#pragma endscop
}
