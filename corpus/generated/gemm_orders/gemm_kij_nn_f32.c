/*
 * gemm in kij loop order, C += op(A) op(B) with A plain and B plain (float).
 */
void gemm_kij_nn_f32(int ni, int nj, int nk, float C[ni][nj], float A[ni][nk], float B[nk][nj])
{
    int k, i, j;

    for (k = 0; k < nk; ++k)
        for (i = 0; i < ni; ++i)
            for (j = 0; j < nj; ++j)
                C[i][j] += A[i][k] * B[k][j];
}
