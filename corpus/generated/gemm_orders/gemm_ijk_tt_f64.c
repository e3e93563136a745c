/*
 * gemm in ijk loop order, C += op(A) op(B) with A transposed and B transposed (double).
 */
void gemm_ijk_tt_f64(int ni, int nj, int nk, double C[ni][nj], double A[nk][ni], double B[nj][nk])
{
    int i, j, k;

    for (i = 0; i < ni; i++)
        for (j = 0; j < nj; j++)
            for (k = 0; k < nk; k++)
                C[i][j] += A[k][i] * B[j][k];
}
