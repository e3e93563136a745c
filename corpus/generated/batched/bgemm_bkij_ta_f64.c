/*
 * batched gemm with A transposed, C[b] += A[b]^T B[b], bkij order (double).
 */
void bgemm_bkij_ta_f64(int nb, int ni, int nj, int nk, double C[nb][ni][nj], double A[nb][nk][ni],
                       double B[nb][nk][nj])
{
    for (int b = 0; b < nb; b++)
        for (int k = 0; k < nk; k++)
            for (int i = 0; i < ni; i++)
                for (int j = 0; j < nj; j++)
                    C[b][i][j] += A[b][k][i] * B[b][k][j];
}
