/*
 * batched gemm C[b] += A[b] B[b], loop order bikj (double).
 */
void bgemm_bikj_f64(int nb, int ni, int nj, int nk, double C[nb][ni][nj], double A[nb][ni][nk],
                    double B[nb][nk][nj])
{
    for (int b = 0; b < nb; b++)
        for (int i = 0; i < ni; i++)
            for (int k = 0; k < nk; k++)
                for (int j = 0; j < nj; j++)
                    C[b][i][j] += A[b][i][k] * B[b][k][j];
}
