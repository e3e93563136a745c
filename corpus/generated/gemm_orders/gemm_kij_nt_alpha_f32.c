/*
 * gemm in kij loop order, C += alpha * op(A) op(B) with A plain and B transposed (float).
 */
void gemm_kij_nt_alpha_f32(int ni, int nj, int nk, float alpha, float C[ni][nj], float A[ni][nk],
                           float B[nj][nk])
{
    for (int k = 0; k < nk; k++)
        for (int i = 0; i < ni; i++)
            for (int j = 0; j < nj; j++)
                C[i][j] += alpha * A[i][k] * B[j][k];
}
