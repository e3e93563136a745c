/*
 * gemm in ikj loop order, C += op(A) op(B) with A transposed and B transposed (float).
 */
void gemm_ikj_tt_f32(int ni, int nj, int nk, float C[ni][nj], float A[nk][ni], float B[nj][nk])
{
    int i, k, j;

    for (i = 0; i < ni; i++)
        for (k = 0; k < nk; k++)
            for (j = 0; j < nj; j++)
                C[i][j] += A[k][i] * B[j][k];
}
