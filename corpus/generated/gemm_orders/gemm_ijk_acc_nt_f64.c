/*
 * gemm as dot products through a local accumulator, ijk order, C = beta C + alpha op(A) op(B) (op:
 * nt) (double).
 */
void gemm_ijk_acc_nt_f64(int ni, int nj, int nk, double alpha, double beta, double C[ni][nj],
                         double A[ni][nk], double B[nj][nk])
{
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++) {
            double acc = 0.0;
            for (int k = 0; k < nk; k++)
                acc += A[i][k] * B[j][k];
            C[i][j] = beta * C[i][j] + alpha * acc;
        }
}
