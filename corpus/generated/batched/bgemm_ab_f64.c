/*
 * batched gemm with alpha and beta: C[b] = beta C[b] + alpha A[b] B[b] (double)
 */
void bgemm_ab_f64(int nb, int ni, int nj, int nk, double alpha, double beta, double C[nb][ni][nj],
                  double A[nb][ni][nk], double B[nb][nk][nj])
{
    for (int b = 0; b < nb; b++)
        for (int i = 0; i < ni; i++) {
            for (int j = 0; j < nj; j++)
                C[b][i][j] *= beta;
            for (int k = 0; k < nk; k++)
                for (int j = 0; j < nj; j++)
                    C[b][i][j] += alpha * A[b][i][k] * B[b][k][j];
        }
}
