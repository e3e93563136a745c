/*
 * C = A B, then S = C + C^T (marked region) (float).
 */
void gemm_symmetrize_f32(int n, int nk, float C[n][n], float A[n][nk], float B[nk][n],
                         float S[n][n])
{
#pragma scop
    for (int i = 0; i < n; i++)
        for (int k = 0; k < nk; k++)
            for (int j = 0; j < n; j++)
                C[i][j] += A[i][k] * B[k][j];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            S[i][j] = C[i][j] + C[j][i];
#pragma endscop
}
