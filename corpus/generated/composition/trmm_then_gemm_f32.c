/*
 * T = L B with L lower triangular, then C = T D (marked region) (float).
 */
void trmm_then_gemm_f32(int n, int m, int p, float L[n][n], float B[n][m], float T[n][m],
                        float D[m][p], float C[n][p])
{
#pragma scop
    for (int i = 0; i < n; i++)
        for (int k = 0; k <= i; k++)
            for (int j = 0; j < m; j++)
                T[i][j] += L[i][k] * B[k][j];
    for (int i = 0; i < n; i++)
        for (int k = 0; k < m; k++)
            for (int j = 0; j < p; j++)
                C[i][j] += T[i][k] * D[k][j];
#pragma endscop
}
