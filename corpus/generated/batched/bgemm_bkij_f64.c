/*
 * batched gemm C[b] += A[b] B[b], loop order bkij (double).
 */
void bgemm_bkij_f64(int nb, int ni, int nj, int nk, double C[nb][ni][nj], double A[nb][ni][nk],
                    double B[nb][nk][nj])
{
    int b, k, i, j;

    for (b = 0; b < nb; b++)
        for (k = 0; k < nk; k++)
            for (i = 0; i < ni; i++)
                for (j = 0; j < nj; j++)
                    C[b][i][j] += A[b][i][k] * B[b][k][j];
}
