/*
 * batched product with a shared weight matrix, Y[b] += X[b] W, loop order ibkj (double)
 */
void bgemm_shared_ibkj_f64(int nb, int ni, int nj, int nk, double Y[nb][ni][nj],
                           double X[nb][ni][nk], double W[nk][nj])
{
    for (int i = 0; i < ni; i++)
        for (int b = 0; b < nb; b++)
            for (int k = 0; k < nk; k++)
                for (int j = 0; j < nj; j++)
                    Y[b][i][j] += X[b][i][k] * W[k][j];
}
