/*
 * gemm with alpha and beta, ikj loop order: C = beta C + alpha op(A) op(B), A plain, B transposed;
 * the beta scaling sits inside the outer loops (double).
 */
void gemm_ikj_nt_ab_f64(int ni, int nj, int nk, double alpha, double beta, double C[ni][nj],
                        double A[ni][nk], double B[nj][nk])
{
    for (int i = 0; i < ni; i++) {
        for (int j = 0; j < nj; j++)
            C[i][j] *= beta;
        for (int k = 0; k < nk; k++)
            for (int j = 0; j < nj; j++)
                C[i][j] += alpha * A[i][k] * B[j][k];
    }
}
