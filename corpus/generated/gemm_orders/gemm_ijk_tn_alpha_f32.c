/*
 * gemm in ijk loop order, C += alpha * op(A) op(B) with A transposed and B plain (float).
 */
void gemm_ijk_tn_alpha_f32(int ni, int nj, int nk, float alpha, float C[ni][nj], float A[nk][ni],
                           float B[nk][nj])
{
    int i, j, k;

    for (i = 0; i < ni; ++i)
        for (j = 0; j < nj; ++j)
            for (k = 0; k < nk; ++k)
                C[i][j] += alpha * A[k][i] * B[k][j];
}
