/*
 * gemm with alpha and beta, jik loop order: C = beta C + alpha op(A) op(B), A plain, B plain; the
 * beta scaling sits inside the outer loops (double).
 */
void gemm_jik_nn_ab_f64(int ni, int nj, int nk, double alpha, double beta, double C[ni][nj],
                        double A[ni][nk], double B[nk][nj])
{
    for (int j = 0; j < nj; j++)
        for (int i = 0; i < ni; i++) {
            C[i][j] *= beta;
            for (int k = 0; k < nk; k++)
                C[i][j] += alpha * A[i][k] * B[k][j];
        }
}
