/*
 * gemm in kji loop order, C += alpha * op(A) op(B) with A plain and B plain (double).
 */
void gemm_kji_nn_alpha_f64(int ni, int nj, int nk, double alpha, double C[ni][nj],
                           double A[ni][nk], double B[nk][nj])
{
    int k, j, i;

    for (k = 0; k < nk; ++k)
        for (j = 0; j < nj; ++j)
            for (i = 0; i < ni; ++i)
                C[i][j] += alpha * A[i][k] * B[k][j];
}
