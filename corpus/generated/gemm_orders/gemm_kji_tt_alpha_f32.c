/*
 * gemm in kji loop order, C += alpha * op(A) op(B) with A transposed and B transposed (float).
 */
void gemm_kji_tt_alpha_f32(int ni, int nj, int nk, float alpha, float C[ni][nj], float A[nk][ni],
                           float B[nj][nk])
{
    for (int k = 0; k < nk; k++)
        for (int j = 0; j < nj; j++)
            for (int i = 0; i < ni; i++)
                C[i][j] += alpha * A[k][i] * B[j][k];
}
