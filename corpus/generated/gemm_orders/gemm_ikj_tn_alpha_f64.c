/*
 * gemm in ikj loop order, C += alpha * op(A) op(B) with A transposed and B plain (double).
 */
void gemm_ikj_tn_alpha_f64(int ni, int nj, int nk, double alpha, double C[ni][nj],
                           double A[nk][ni], double B[nk][nj])
{
    int i, k, j;

    for (i = 0; i < ni; i++)
        for (k = 0; k < nk; k++)
            for (j = 0; j < nj; j++)
                C[i][j] += alpha * A[k][i] * B[k][j];
}
