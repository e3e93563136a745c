/*
 * gemm in ijk loop order, C += op(A) op(B) with A plain and B plain (float).
 */
void gemm_ijk_nn_f32(int ni, int nj, int nk, float C[ni][nj], float A[ni][nk], float B[nk][nj])
{
    int i, j, k;

    for (i = 0; i < ni; i++)
        for (j = 0; j < nj; j++)
            for (k = 0; k < nk; k++)
                C[i][j] += A[i][k] * B[k][j];
}
