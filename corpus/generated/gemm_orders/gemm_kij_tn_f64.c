/*
 * gemm in kij loop order, C += op(A) op(B) with A transposed and B plain (double).
 */
void gemm_kij_tn_f64(int ni, int nj, int nk, double C[ni][nj], double A[nk][ni], double B[nk][nj])
{
    int k, i, j;

    for (k = 0; k < nk; ++k)
        for (i = 0; i < ni; ++i)
            for (j = 0; j < nj; ++j)
                C[i][j] += A[k][i] * B[k][j];
}
