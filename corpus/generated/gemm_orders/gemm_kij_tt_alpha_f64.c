/*
 * gemm in kij loop order, C += alpha * op(A) op(B) with A transposed and B transposed (double).
 */
void gemm_kij_tt_alpha_f64(int ni, int nj, int nk, double alpha, double C[ni][nj],
                           double A[nk][ni], double B[nj][nk])
{
    for (int k = 0; k < nk; k++)
        for (int i = 0; i < ni; i++)
            for (int j = 0; j < nj; j++)
                C[i][j] += alpha * A[k][i] * B[j][k];
}
