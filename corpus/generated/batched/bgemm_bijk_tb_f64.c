/*
 * batched gemm with B transposed, C[b] += A[b] B[b]^T, bijk order (double).
 */
void bgemm_bijk_tb_f64(int nb, int ni, int nj, int nk, double C[nb][ni][nj], double A[nb][ni][nk],
                       double B[nb][nj][nk])
{
    for (int b = 0; b < nb; b++)
        for (int i = 0; i < ni; i++)
            for (int j = 0; j < nj; j++)
                for (int k = 0; k < nk; k++)
                    C[b][i][j] += A[b][i][k] * B[b][j][k];
}
