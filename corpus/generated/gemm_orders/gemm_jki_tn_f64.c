/*
 * gemm in jki loop order, C += op(A) op(B) with A transposed and B plain (double).
 */
void gemm_jki_tn_f64(int ni, int nj, int nk, double C[ni][nj], double A[nk][ni], double B[nk][nj])
{
    for (int j = 0; j < nj; j++)
        for (int k = 0; k < nk; k++)
            for (int i = 0; i < ni; i++)
                C[i][j] += A[k][i] * B[k][j];
}
