/*
 * gemm as dot products through a local accumulator, ijk order, C = beta C + alpha op(A) op(B) (op:
 * tt) (double).
 */
void gemm_ijk_acc_tt_f64(int ni, int nj, int nk, double alpha, double beta, double C[ni][nj],
                         double A[nk][ni], double B[nj][nk])
{
    int i, j, k;

    for (i = 0; i < ni; i++)
        for (j = 0; j < nj; j++) {
            double acc = 0.0;
            for (k = 0; k < nk; k++)
                acc += A[k][i] * B[j][k];
            C[i][j] = beta * C[i][j] + alpha * acc;
        }
}
