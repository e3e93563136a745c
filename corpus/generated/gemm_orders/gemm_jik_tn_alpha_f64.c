/*
 * gemm in jik loop order, C += alpha * op(A) op(B) with A transposed and B plain (double).
 */
void gemm_jik_tn_alpha_f64(int ni, int nj, int nk, double alpha, double C[ni][nj],
                           double A[nk][ni], double B[nk][nj])
{
    int j, i, k;

    for (j = 0; j < nj; j++)
        for (i = 0; i < ni; i++)
            for (k = 0; k < nk; k++)
                C[i][j] += alpha * A[k][i] * B[k][j];
}
