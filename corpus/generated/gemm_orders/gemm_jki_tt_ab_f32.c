/*
 * gemm with alpha and beta, jki loop order: C = beta C + alpha op(A) op(B), A transposed, B
 * transposed; the beta scaling sits inside the outer loops (float).
 */
void gemm_jki_tt_ab_f32(int ni, int nj, int nk, float alpha, float beta, float C[ni][nj],
                        float A[nk][ni], float B[nj][nk])
{
    for (int j = 0; j < nj; j++) {
        for (int i = 0; i < ni; i++)
            C[i][j] *= beta;
        for (int k = 0; k < nk; k++)
            for (int i = 0; i < ni; i++)
                C[i][j] += alpha * A[k][i] * B[j][k];
    }
}
