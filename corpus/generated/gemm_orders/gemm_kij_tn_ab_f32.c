/*
 * gemm with alpha and beta, kij loop order: C = beta C + alpha op(A) op(B), A transposed, B plain;
 * the beta scaling sits in its own nest (float).
 */
void gemm_kij_tn_ab_f32(int ni, int nj, int nk, float alpha, float beta, float C[ni][nj],
                        float A[nk][ni], float B[nk][nj])
{
#pragma scop
    for (int i = 0; i < ni; ++i)
        for (int j = 0; j < nj; ++j)
            C[i][j] *= beta;
    for (int k = 0; k < nk; ++k)
        for (int i = 0; i < ni; ++i)
            for (int j = 0; j < nj; ++j)
                C[i][j] += alpha * A[k][i] * B[k][j];
#pragma endscop
}
