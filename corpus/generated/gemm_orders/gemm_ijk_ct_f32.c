/*
 * gemm writing a column-major result Ct[j][i] += A[i][k] B[k][j], ijk order (float).
 */
void gemm_ijk_ct_f32(int ni, int nj, int nk, float C[nj][ni], float A[ni][nk], float B[nk][nj])
{
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++)
            for (int k = 0; k < nk; k++)
                C[j][i] += A[i][k] * B[k][j];
}
