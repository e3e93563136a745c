/*
 * gemm as dot products through a local accumulator, ijk order, C = beta C + alpha op(A) op(B) (op:
 * tn) (float).
 */
void gemm_ijk_acc_tn_f32(int ni, int nj, int nk, float alpha, float beta, float C[ni][nj],
                         float A[nk][ni], float B[nk][nj])
{
    int i, j, k;

    for (i = 0; i < ni; i++)
        for (j = 0; j < nj; j++) {
            float acc = 0.0f;
            for (k = 0; k < nk; k++)
                acc += A[k][i] * B[k][j];
            C[i][j] = beta * C[i][j] + alpha * acc;
        }
}
