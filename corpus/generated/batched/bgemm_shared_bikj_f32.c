/*
 * batched product with a shared weight matrix, Y[b] += X[b] W, loop order bikj (float)
 */
void bgemm_shared_bikj_f32(int nb, int ni, int nj, int nk, float Y[nb][ni][nj],
                           float X[nb][ni][nk], float W[nk][nj])
{
    for (int b = 0; b < nb; ++b)
        for (int i = 0; i < ni; ++i)
            for (int k = 0; k < nk; ++k)
                for (int j = 0; j < nj; ++j)
                    Y[b][i][j] += X[b][i][k] * W[k][j];
}
