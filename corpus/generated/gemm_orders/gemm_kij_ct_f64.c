/*
 * gemm writing a column-major result Ct[j][i] += A[i][k] B[k][j], kij order (double).
 */
void gemm_kij_ct_f64(int ni, int nj, int nk, double C[nj][ni], double A[ni][nk], double B[nk][nj])
{
    for (int k = 0; k < nk; ++k)
        for (int i = 0; i < ni; ++i)
            for (int j = 0; j < nj; ++j)
                C[j][i] += A[i][k] * B[k][j];
}
