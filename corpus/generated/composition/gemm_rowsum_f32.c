/*
 * row i of C = A B is computed (ikj) and immediately summed into r[i] (float).
 */
void gemm_rowsum_f32(int ni, int nj, int nk, float C[ni][nj], float A[ni][nk], float B[nk][nj],
                     float r[ni])
{
    for (int i = 0; i < ni; i++) {
        for (int k = 0; k < nk; k++)
            for (int j = 0; j < nj; j++)
                C[i][j] += A[i][k] * B[k][j];
        for (int j = 0; j < nj; j++)
            r[i] += C[i][j];
    }
}
