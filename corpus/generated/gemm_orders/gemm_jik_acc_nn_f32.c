/*
 * gemm as dot products through a local accumulator, jik order, C = beta C + alpha op(A) op(B) (op:
 * nn) (float).
 */
void gemm_jik_acc_nn_f32(int ni, int nj, int nk, float alpha, float beta, float C[ni][nj],
                         float A[ni][nk], float B[nk][nj])
{
    for (int j = 0; j < nj; j++)
        for (int i = 0; i < ni; i++) {
            float acc = 0.0f;
            for (int k = 0; k < nk; k++)
                acc += A[i][k] * B[k][j];
            C[i][j] = beta * C[i][j] + alpha * acc;
        }
}
