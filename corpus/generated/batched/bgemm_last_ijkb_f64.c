/*
 * batch-last layout (batch index innermost and contiguous), ijkb order (double).
 */
void bgemm_last_ijkb_f64(int nb, int ni, int nj, int nk, double C[ni][nj][nb],
                         double A[ni][nk][nb], double B[nk][nj][nb])
{
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++)
            for (int k = 0; k < nk; k++)
                for (int b = 0; b < nb; b++)
                    C[i][j][b] += A[i][k][b] * B[k][j][b];
}
