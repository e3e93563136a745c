/*
 * gemm in jik loop order, C += alpha * op(A) op(B) with A plain and B transposed (double).
 */
void gemm_jik_nt_alpha_f64(int ni, int nj, int nk, double alpha, double C[ni][nj],
                           double A[ni][nk], double B[nj][nk])
{
    int j, i, k;

    for (j = 0; j < nj; ++j)
        for (i = 0; i < ni; ++i)
            for (k = 0; k < nk; ++k)
                C[i][j] += alpha * A[i][k] * B[j][k];
}
