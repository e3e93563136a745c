/*
 * gemm writing a column-major result Ct[j][i] += A[i][k] B[k][j], jki order (float).
 */
void gemm_jki_ct_f32(int ni, int nj, int nk, float C[nj][ni], float A[ni][nk], float B[nk][nj])
{
    for (int j = 0; j < nj; j++)
        for (int k = 0; k < nk; k++)
            for (int i = 0; i < ni; i++)
                C[j][i] += A[i][k] * B[k][j];
}
