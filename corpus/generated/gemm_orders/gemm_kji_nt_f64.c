/*
 * gemm in kji loop order, C += op(A) op(B) with A plain and B transposed (double).
 */
void gemm_kji_nt_f64(int ni, int nj, int nk, double C[ni][nj], double A[ni][nk], double B[nj][nk])
{
    for (int k = 0; k < nk; k++)
        for (int j = 0; j < nj; j++)
            for (int i = 0; i < ni; i++)
                C[i][j] += A[i][k] * B[j][k];
}
