/*
 * gemm in jki loop order, C += alpha * op(A) op(B) with A plain and B transposed (double).
 */
void gemm_jki_nt_alpha_f64(int ni, int nj, int nk, double alpha, double C[ni][nj],
                           double A[ni][nk], double B[nj][nk])
{
    int j, k, i;

    for (j = 0; j < nj; j++)
        for (k = 0; k < nk; k++)
            for (i = 0; i < ni; i++)
                C[i][j] += alpha * A[i][k] * B[j][k];
}
